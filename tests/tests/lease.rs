//! DeviceLease across real processes: exclusive, crash-safe, hand-off to a child (adopted once,
//! never passed on to the child's own children), lock paths that are never followed through a
//! symlink; and the lock model across users (a second uid through `setpriv`), its dir rules,
//! `verify` and the lock dir hold.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use platform_common::lease::{
    DeviceLease, LeaseConfig, LeaseError, LockDirHold, LockDirRule, LockFileNow, ENV_LEASE_FD,
};

const HOLDER: &str = env!("CARGO_BIN_EXE_lease-holder");
/// The second user of the two-user tests.
const SECOND_UID: u32 = 1001;

struct Holder {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Holder {
    fn spawn(args: &[&str], lease: Option<&DeviceLease>) -> Self {
        Self::spawn_with(args, |cmd| {
            if let Some(l) = lease {
                l.pass_to(cmd).unwrap();
            }
        })
    }

    /// A holder run as user `uid` (and its group), with no supplementary groups.
    fn spawn_as(uid: u32, args: &[&str]) -> Self {
        let id = uid.to_string();
        let mut all = vec!["--reuid", &id, "--regid", &id, "--clear-groups", HOLDER];
        all.extend_from_slice(args);
        Self::spawn_cmd(Command::new("setpriv"), &all, |_| {})
    }

    fn spawn_with(args: &[&str], setup: impl FnOnce(&mut Command)) -> Self {
        Self::spawn_cmd(Command::new(HOLDER), args, setup)
    }

    fn spawn_cmd(mut cmd: Command, args: &[&str], setup: impl FnOnce(&mut Command)) -> Self {
        cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped());
        setup(&mut cmd);
        let mut child = cmd.spawn().expect("spawn lease-holder");
        let out = BufReader::new(child.stdout.take().unwrap());
        Self { child, out }
    }

    fn line(&mut self) -> String {
        let mut s = String::new();
        self.out.read_line(&mut s).unwrap();
        s.trim().to_owned()
    }

    fn release(mut self) {
        drop(self.child.stdin.take());
        assert!(self.child.wait().unwrap().success());
    }
}

/// Takes `card` once it is free, within a generous bound. A test that checks that a lease this
/// process shared with a child is free once the child is gone waits here instead of trying once:
/// another test of this process may fork at that moment, and its child holds a copy of every
/// descriptor (the shared lease's too, close-on-exec or not) until it execs, a moment later. A
/// non-shared lease is unlocked explicitly on drop and needs no wait.
fn acquire_soon(c: &LeaseConfig, card: u32, run: &str) -> Result<DeviceLease, String> {
    let (tx, rx) = mpsc::channel();
    let (c, run) = (c.clone(), run.to_owned());
    std::thread::spawn(move || {
        let _ = tx.send(DeviceLease::acquire(&c, card, &run));
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(taken) => taken.map_err(|e| e.to_string()),
        Err(_) => Err(format!("card {card} is still held after 60 s")),
    }
}

fn cfg(dir: &tempfile::TempDir) -> LeaseConfig {
    LeaseConfig {
        dir: dir.path().join("locks"),
    }
}

#[test]
fn two_processes_race_exactly_one_wins_and_the_refusal_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cfg(&tmp).dir.display().to_string();
    let mut a = Holder::spawn(&["try", &dir, "3", "run-a"], None);
    let mut b = Holder::spawn(&["try", &dir, "3", "run-b"], None);
    let (la, lb) = (a.line(), b.line());
    let winners = [&la, &lb].iter().filter(|l| l.starts_with("acquired")).count();
    assert_eq!(winners, 1, "exactly one winner: {la:?} / {lb:?}");
    let (win, lose, run) = if la.starts_with("acquired") {
        (&la, &lb, "run-a")
    } else {
        (&lb, &la, "run-b")
    };
    // The loser of a true race may look before the winner has written its record: then the holder
    // is unknown (tolerated), never someone else.
    let pid = win.trim_start_matches("acquired ");
    let named = format!("held pid=Some({pid}) run=Some({run:?})");
    let lose = lose.split(" :: ").next().unwrap();
    assert!(lose == named || lose == "held pid=None run=None", "{lose:?}");
    // Once the winner holds the card, every refusal names it.
    let mut c = Holder::spawn(&["try", &dir, "3", "run-c"], None);
    let line = c.line();
    assert_eq!(line.split(" :: ").next().unwrap(), named);
    assert!(
        line.contains(&format!("card 3 is held by uid {} pid {pid} on ", me()))
            && line.contains(&format!("(run {run})")),
        "{line}"
    );
    for h in [a, b, c] {
        h.release();
    }
}

#[test]
fn killing_the_holder_frees_the_card() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let mut h = Holder::spawn(&["try", &c.dir.display().to_string(), "1", "victim"], None);
    assert!(h.line().starts_with("acquired"));
    assert!(matches!(
        DeviceLease::try_acquire(&c, 1, "me"),
        Err(LeaseError::Held { .. })
    ));
    h.child.kill().unwrap();
    h.child.wait().unwrap();
    let lease = DeviceLease::try_acquire(&c, 1, "me").expect("a killed holder frees the card");
    assert_eq!(lease.card(), 1);
}

#[test]
fn lock_files_are_never_renamed_or_deleted_and_the_dir_is_private() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let ino = {
        let l = DeviceLease::try_acquire(&c, 0, "one").unwrap();
        std::fs::metadata(l.path()).unwrap().ino()
    };
    let l = DeviceLease::try_acquire(&c, 0, "two").unwrap();
    assert_eq!(std::fs::metadata(l.path()).unwrap().ino(), ino);
    let mode = std::fs::metadata(&c.dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn an_empty_or_garbled_record_is_tolerated() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let held = DeviceLease::try_acquire(&c, 2, "holder").unwrap();
    let record = c.dir.join(format!("card-2.holder-{}", me()));
    assert!(record.is_file(), "the holder's record is beside the lock file");
    for garbage in [&b""[..], &b"\xff\xfe\x00garbage=\n=pid=x"[..]] {
        std::fs::write(&record, garbage).unwrap();
        match DeviceLease::try_acquire(&c, 2, "other") {
            Err(LeaseError::Held { holder, card, .. }) => {
                assert_eq!(card, 2);
                assert_eq!(holder.pid, None);
                assert!(LeaseError::Held {
                    holder,
                    card,
                    path: held.path().into()
                }
                .to_string()
                .contains("card 2 is held by"));
            }
            other => panic!("expected Held, got {other:?}"),
        }
    }
}

#[test]
fn a_lease_handed_to_a_child_outlives_the_parents_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let lease = DeviceLease::try_acquire(&c, 5, "parent").unwrap();
    let mut child = Holder::spawn(&["inherit", &c.dir.display().to_string()], Some(&lease));
    assert_eq!(child.line(), "inherited 5");
    drop(lease);
    assert!(
        matches!(
            DeviceLease::try_acquire(&c, 5, "third"),
            Err(LeaseError::Held { .. })
        ),
        "the child still holds the card"
    );
    child.child.stdin.take().unwrap().write_all(b"").unwrap();
    child.release();
    acquire_soon(&c, 5, "third").expect("free once the child exits");
}

#[test]
fn an_inherited_lease_for_another_card_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let lease = DeviceLease::try_acquire(&c, 5, "parent").unwrap();
    DeviceLease::try_acquire(&c, 6, "make-file").unwrap();
    let mut child = Holder::spawn_with(&["inherit", &c.dir.display().to_string()], |cmd| {
        lease.pass_to(cmd).unwrap();
        cmd.env(ENV_LEASE_FD, "6:3");
    });
    let line = child.line();
    assert!(
        line.starts_with("refused") && line.contains("not that card's lock file"),
        "{line}"
    );
    child.release();
}

#[test]
fn an_inherited_lease_is_adopted_once_per_process() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let lease = DeviceLease::try_acquire(&c, 5, "parent").unwrap();
    let mut child = Holder::spawn(&["inherit-twice", &c.dir.display().to_string()], Some(&lease));
    let line = child.line();
    assert!(
        line.starts_with("inherited 5, again: refused") && line.contains("already adopted"),
        "{line}"
    );
    drop(lease);
    // The first adoption still holds the card (the refused second one closed nothing).
    assert!(matches!(
        DeviceLease::try_acquire(&c, 5, "third"),
        Err(LeaseError::Held { .. })
    ));
    child.release();
    acquire_soon(&c, 5, "third").expect("free once the child exits");
}

#[test]
fn processes_the_holder_spawns_do_not_inherit_the_lock() {
    use rustix::process::{kill_process, test_kill_process, Pid, Signal};

    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let lease = DeviceLease::try_acquire(&c, 7, "parent").unwrap();
    let mut child = Holder::spawn(&["inherit-spawn", &c.dir.display().to_string()], Some(&lease));
    let line = child.line();
    let pid: i32 = line
        .strip_prefix("inherited 7 grandchild ")
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    let grandchild = Pid::from_raw(pid).unwrap();
    drop(lease);
    child.release();
    // The holder is gone, its grandchild lives on: the card must be free all the same.
    assert!(test_kill_process(grandchild).is_ok(), "the grandchild still runs");
    let freed = acquire_soon(&c, 7, "next");
    let _ = kill_process(grandchild, Signal::Kill);
    freed.expect("a process the holder spawned kept the lock");
}

#[test]
fn symlinks_in_place_of_the_lock_dir_or_a_lock_file_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();

    // A lock file planted as a symlink to someone else's file: refused, the target untouched.
    let c = cfg(&tmp);
    DeviceLease::try_acquire(&c, 0, "make-dir").unwrap();
    std::os::unix::fs::symlink(&victim, c.lock_path(1)).unwrap();
    match DeviceLease::try_acquire(&c, 1, "me") {
        Err(LeaseError::Unsafe { path, reason }) => {
            assert_eq!(path, c.lock_path(1));
            assert!(reason.contains("symbolic link"), "{reason}");
        }
        other => panic!("expected Unsafe, got {other:?}"),
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");

    // The lock dir itself a symlink (even to a private dir of ours): refused, naming it.
    let linked = LeaseConfig {
        dir: tmp.path().join("linked-locks"),
    };
    std::os::unix::fs::symlink(&c.dir, &linked.dir).unwrap();
    let e = DeviceLease::try_acquire(&linked, 0, "me").unwrap_err();
    assert!(
        matches!(&e, LeaseError::LockDir { path, rule: LockDirRule::Symlink } if *path == linked.dir),
        "{e:?}"
    );
    assert!(e.to_string().contains("linked-locks"), "{e}");

    // A file where the dir should be.
    let file_dir = LeaseConfig { dir: victim.clone() };
    assert!(matches!(
        DeviceLease::try_acquire(&file_dir, 0, "me"),
        Err(LeaseError::LockDir {
            rule: LockDirRule::NotADirectory,
            ..
        })
    ));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether this test can act as a second user (it runs as root and `setpriv` switches); prints
/// why not otherwise.
fn second_user_available() -> bool {
    if me() != 0 {
        println!(
            "skipped: the test runs as uid {}, not root: it cannot switch to a second user",
            me()
        );
        return false;
    }
    let id = SECOND_UID.to_string();
    let out = Command::new("setpriv")
        .args(["--reuid", &id, "--regid", &id, "--clear-groups", "id", "-u"])
        .output();
    match out {
        Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == id => true,
        Ok(o) => {
            println!(
                "skipped: setpriv cannot switch to uid {id}: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            false
        }
        Err(e) => {
            println!("skipped: setpriv (util-linux) cannot be run: {e}");
            false
        }
    }
}

/// A temp dir the second user can enter, with a parent for the lock dir that is shared as
/// `/var/lock` is (root's, mode 1777).
fn shared_parent() -> (tempfile::TempDir, LeaseConfig) {
    let tmp = tempfile::tempdir().unwrap();
    chmod(tmp.path(), 0o755);
    let parent = tmp.path().join("run-lock");
    std::fs::create_dir(&parent).unwrap();
    chmod(&parent, 0o1777);
    let cfg = LeaseConfig {
        dir: parent.join("cardguard"),
    };
    (tmp, cfg)
}

#[test]
fn two_users_share_the_host_wide_lock_dir_and_see_who_holds_what() {
    if !second_user_available() {
        return;
    }
    let (_tmp, c) = shared_parent();
    let dir = c.dir.display().to_string();
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    // The first user creates the lock dir (shared, as its parent is) and takes card 0.
    let first = DeviceLease::try_acquire(&c, 0, "run-a").unwrap();
    assert_eq!(
        mode(&c.dir),
        0o1777,
        "created sticky and world-writable, umask aside"
    );
    assert_eq!(mode(first.path()), 0o644);
    // The second user takes card 1 in the same dir.
    let mut b = Holder::spawn_as(SECOND_UID, &["try", &dir, "1", "run-b"]);
    let line = b.line();
    let b_pid = line.strip_prefix("acquired ").unwrap_or_else(|| panic!("{line}"));
    let lock1 = std::fs::metadata(c.lock_path(1)).unwrap();
    assert_eq!((lock1.uid(), lock1.mode() & 0o7777), (SECOND_UID, 0o644));
    // For card 0 the second user is told who holds it.
    let mut refused = Holder::spawn_as(SECOND_UID, &["try", &dir, "0", "run-c"]);
    let line = refused.line();
    let want = format!(
        "card 0 is held by uid 0 pid {} on {host} since ",
        std::process::id()
    );
    assert!(line.contains(&want) && line.contains("(run run-a)"), "{line}");
    // And so is the first user for card 1.
    match DeviceLease::try_acquire(&c, 1, "run-d") {
        Err(LeaseError::Held { holder, .. }) => {
            assert_eq!(holder.uid, Some(SECOND_UID));
            assert_eq!(holder.pid.map(|p| p.to_string()).as_deref(), Some(b_pid));
            assert_eq!(holder.run_id.as_deref(), Some("run-b"));
        }
        other => panic!("expected Held, got {other:?}"),
    }
    // The first user lets card 0 go; the second takes it through the first one's lock file (it
    // may only read it: flock works on a read-only descriptor) and is named as its holder.
    drop(first);
    let mut e = Holder::spawn_as(SECOND_UID, &["try", &dir, "0", "run-e"]);
    assert!(e.line().starts_with("acquired "));
    match DeviceLease::try_acquire(&c, 0, "run-f") {
        Err(LeaseError::Held { holder, .. }) => {
            assert_eq!(
                (holder.uid, holder.run_id.as_deref()),
                (Some(SECOND_UID), Some("run-e"))
            );
        }
        other => panic!("expected Held, got {other:?}"),
    }
    for h in [b, refused, e] {
        h.release();
    }
    DeviceLease::try_acquire(&c, 0, "run-g").expect("free once the second user let go");
    DeviceLease::try_acquire(&c, 1, "run-g").expect("free once the second user let go");
}

#[test]
fn a_lock_dir_others_can_write_is_accepted_only_with_the_sticky_bit() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    std::fs::create_dir(&c.dir).unwrap();
    chmod(&c.dir, 0o777);
    let e = DeviceLease::try_acquire(&c, 0, "me").unwrap_err();
    assert!(
        matches!(&e, LeaseError::LockDir { path, rule: LockDirRule::WritableWithoutSticky { mode: 0o777 } } if *path == c.dir),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains(&c.dir.display().to_string()) && msg.contains("sticky"),
        "{msg}"
    );
    chmod(&c.dir, 0o1777);
    DeviceLease::try_acquire(&c, 0, "me").expect("a sticky shared dir is fine");

    // Its parent: writable by others without the sticky bit, anyone could swap the lock dir.
    let parent = tmp.path().join("open");
    std::fs::create_dir(&parent).unwrap();
    chmod(&parent, 0o777);
    let under = LeaseConfig {
        dir: parent.join("locks"),
    };
    let e = DeviceLease::try_acquire(&under, 0, "me").unwrap_err();
    assert!(
        matches!(
            &e,
            LeaseError::LockDir {
                rule: LockDirRule::ParentWritableWithoutSticky { .. },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("parent"), "{e}");
    if me() != 0 {
        println!("skipped the ownership rules: they need root to give a dir to another user");
        return;
    }
    // A parent owned by a user other than root or this one.
    chmod(&parent, 0o755);
    std::os::unix::fs::chown(&parent, Some(SECOND_UID), Some(SECOND_UID)).unwrap();
    let e = DeviceLease::try_acquire(&under, 0, "me").unwrap_err();
    assert!(
        matches!(
            &e,
            LeaseError::LockDir {
                rule: LockDirRule::ParentOwner { uid: SECOND_UID, .. },
                ..
            }
        ),
        "{e:?}"
    );
    // A private dir of another user.
    let theirs = LeaseConfig {
        dir: tmp.path().join("theirs"),
    };
    std::fs::create_dir(&theirs.dir).unwrap();
    chmod(&theirs.dir, 0o700);
    std::os::unix::fs::chown(&theirs.dir, Some(SECOND_UID), Some(SECOND_UID)).unwrap();
    let e = DeviceLease::try_acquire(&theirs, 0, "me").unwrap_err();
    assert!(
        matches!(
            &e,
            LeaseError::LockDir {
                rule: LockDirRule::OwnedByOther { uid: SECOND_UID, .. },
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn verify_fails_once_the_lock_file_is_deleted_or_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let lease = DeviceLease::try_acquire(&c, 3, "run").unwrap();
    lease.verify().unwrap();
    // A cleaner deletes the lock file: a second run could now take the card, and verify says so.
    std::fs::remove_file(lease.path()).unwrap();
    let second = DeviceLease::try_acquire(&c, 3, "intruder").expect("exclusion is gone");
    let e = lease.verify().unwrap_err();
    assert!(
        matches!(
            e,
            LeaseError::LockFileReplaced {
                card: 3,
                now: LockFileNow::Replaced,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains(&c.dir.display().to_string()), "{e}");
    second.verify().unwrap();
    drop(second);
    std::fs::remove_file(c.lock_path(3)).unwrap();
    assert!(matches!(
        lease.verify(),
        Err(LeaseError::LockFileReplaced {
            now: LockFileNow::Missing,
            ..
        })
    ));
}

/// Whether util-linux `flock -n MODE DIR true` gets the lock.
fn flock_n(mode: &str, dir: &Path) -> bool {
    Command::new("flock")
        .args(["-n", mode])
        .arg(dir)
        .arg("true")
        .status()
        .expect("flock (util-linux) runs")
        .success()
}

#[test]
fn the_lock_dir_hold_is_a_shared_flock_that_keeps_exclusive_lockers_out() {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(&tmp);
    let hold = LockDirHold::acquire(&c).unwrap();
    assert_eq!(hold.path(), c.dir);
    assert!(
        !flock_n("-x", &c.dir),
        "an exclusive flock (a cleaner's) must fail while held"
    );
    assert!(flock_n("-s", &c.dir), "another run's shared hold is fine");
    let second = LockDirHold::acquire(&c).unwrap();
    drop(hold);
    assert!(!flock_n("-x", &c.dir), "still held by the second run");
    drop(second);
    assert!(flock_n("-x", &c.dir), "free once no run holds it");
}
