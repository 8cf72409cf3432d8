//! DeviceLease across real processes: exclusive, crash-safe, hand-off to a child.

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
