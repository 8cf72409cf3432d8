//! DeviceLease across real processes: exclusive, crash-safe, hand-off to a child (adopted once,
//! never passed on to the child's own children), and lock paths that are never followed through
//! a symlink.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::{Child, ChildStdout, Command, Stdio};

use platform_common::lease::{DeviceLease, LeaseConfig, LeaseError, ENV_LEASE_FD};

const HOLDER: &str = env!("CARGO_BIN_EXE_lease-holder");

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

    fn spawn_with(args: &[&str], setup: impl FnOnce(&mut Command)) -> Self {
        let mut cmd = Command::new(HOLDER);
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
    assert!(lose == &named || lose == "held pid=None run=None", "{lose:?}");
    // Once the winner holds the card, every refusal names it.
    let mut c = Holder::spawn(&["try", &dir, "3", "run-c"], None);
    assert_eq!(c.line(), named);
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
    for garbage in [&b""[..], &b"\xff\xfe\x00garbage=\n=pid=x"[..]] {
        std::fs::write(held.path(), garbage).unwrap();
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
    DeviceLease::try_acquire(&c, 5, "third").expect("free once the child exits");
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
    DeviceLease::try_acquire(&c, 5, "third").expect("free once the child exits");
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
    let freed = DeviceLease::try_acquire(&c, 7, "next");
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
        matches!(&e, LeaseError::Unsafe { path, .. } if *path == linked.dir),
        "{e:?}"
    );
    assert!(e.to_string().contains("linked-locks"), "{e}");

    // A file where the dir should be.
    let file_dir = LeaseConfig { dir: victim.clone() };
    assert!(matches!(
        DeviceLease::try_acquire(&file_dir, 0, "me"),
        Err(LeaseError::Unsafe { .. })
    ));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}
