//! A read-only survey of a lock dir, card by card: free or held (and by whom), the card's health
//! record, and the runs waiting in its queue (`cargo xtask cards`).
//!
//! Whether a card is held is read from `/proc/locks` (the kernel's list of `flock` locks, by
//! device and inode), so the survey never takes a card's lock itself: a run starting at that
//! moment is never refused because of it. The list is trusted only once it shows the survey's own
//! shared lock on the lock dir ([`super::LockDirHold`]): on a file system whose inode numbers
//! `/proc/locks` does not match (some overlay setups), or where `/proc/locks` cannot be read, each
//! lock file is tested with a non-blocking shared lock instead (released at once). A lock dir that
//! does not exist is reported as such, and nothing is created.
//!
//! This file never changes a lock, a holder record or a health record (dead waiters' tickets
//! aside, which reading the queue removes, as every reader of it does).

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use rustix::fs::{flock, major, minor, openat, statat, AtFlags, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use super::config::{lock_file_name, LeaseConfig};
use super::error::LeaseError;
use super::health::{self, CardHealth};
use super::lock_dir::{LockDir, LockDirHold};
use super::queue::{CardQueue, Waiter};
use super::record::{self, HolderRecord};
use crate::driver::DeviceId;

/// One card of a survey.
#[derive(Debug, Clone, PartialEq)]
pub struct CardSurvey {
    /// The card.
    pub card: DeviceId,
    /// Its lock file.
    pub lock_file: PathBuf,
    /// Who holds it (its newest holder record; the pid from `/proc/locks` when the record has
    /// none), or `None` when it is free.
    pub held: Option<HolderRecord>,
    /// Its health record, if it has one.
    pub health: Option<CardHealth>,
}

/// A survey of a lock dir.
#[derive(Debug, Clone, PartialEq)]
pub struct LockDirSurvey {
    /// The lock dir.
    pub dir: PathBuf,
    /// Whether it exists (a lock dir nobody used yet does not).
    pub exists: bool,
    /// Cards `0..cards`, in order.
    pub cards: Vec<CardSurvey>,
    /// The runs waiting for cards, in arrival order.
    pub waiters: Vec<Waiter>,
    /// How holders were found: `/proc/locks`, or a test lock per card.
    pub method: HeldBy,
}

/// How a survey tells a held card from a free one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldBy {
    /// The kernel's `/proc/locks`, matched by device and inode (no lock is taken).
    ProcLocks,
    /// A non-blocking shared lock on each lock file, released at once.
    TestLock,
}

/// Surveys cards `0..cards` of `cfg`'s lock dir (see the module docs).
pub fn survey(cfg: &LeaseConfig, cards: u32) -> Result<LockDirSurvey, LeaseError> {
    let mut out = LockDirSurvey {
        dir: cfg.dir.clone(),
        exists: false,
        cards: Vec::new(),
        waiters: Vec::new(),
        method: HeldBy::ProcLocks,
    };
    match std::fs::symlink_metadata(&cfg.dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.cards = (0..cards)
                .map(|card| CardSurvey {
                    card,
                    lock_file: cfg.lock_path(card),
                    held: None,
                    health: None,
                })
                .collect();
            return Ok(out);
        }
        _ => {}
    }
    let dir = LockDir::open(cfg)?;
    out.exists = true;
    let hold = LockDirHold::acquire(cfg)?;
    let locks = ProcLocks::read();
    let calibrated = locks
        .as_ref()
        .zip(statat(&dir.fd, ".", AtFlags::empty()).ok())
        .is_some_and(|(l, st)| l.holds(st.st_dev, st.st_ino, false).contains(&std::process::id()));
    out.method = if calibrated {
        HeldBy::ProcLocks
    } else {
        HeldBy::TestLock
    };
    for card in 0..cards {
        let held = match (&locks, calibrated) {
            (Some(l), true) => held_in(&dir.fd, card, l),
            _ => held_by_test(&dir.fd, card),
        };
        let held = held.map(|pid| {
            let mut rec = record::current(&dir.fd, card);
            if rec.pid.is_none() {
                rec.pid = pid;
            }
            rec
        });
        out.cards.push(CardSurvey {
            card,
            lock_file: cfg.lock_path(card),
            held,
            health: health::current(&dir.fd, card),
        });
    }
    drop(hold);
    if let Some(q) = CardQueue::open_in(&dir, false)? {
        out.waiters = q.lock()?.waiters();
    }
    Ok(out)
}

/// `Some(pid)` when `card`'s lock file is held exclusively per `/proc/locks`.
fn held_in(dir: &OwnedFd, card: DeviceId, locks: &ProcLocks) -> Option<Option<u32>> {
    let st = statat(dir, lock_file_name(card).as_str(), AtFlags::SYMLINK_NOFOLLOW).ok()?;
    locks
        .holds(st.st_dev, st.st_ino, true)
        .first()
        .map(|pid| Some(*pid))
}

/// `Some(None)` when a non-blocking shared lock on `card`'s lock file is refused (someone holds
/// it exclusively); the test lock is released at once.
fn held_by_test(dir: &OwnedFd, card: DeviceId) -> Option<Option<u32>> {
    let fd = match openat(
        dir,
        lock_file_name(card).as_str(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(_) => return None,
    };
    match flock(&fd, FlockOperation::NonBlockingLockShared) {
        Err(Errno::WOULDBLOCK) => Some(None),
        Ok(()) => {
            let _ = flock(&fd, FlockOperation::Unlock);
            None
        }
        Err(_) => None,
    }
}

/// The `FLOCK` lines of `/proc/locks` (blocked requests left out).
#[derive(Debug, Default)]
struct ProcLocks {
    /// (major, minor, inode, pid, exclusive).
    held: Vec<(u32, u32, u64, u32, bool)>,
}

impl ProcLocks {
    fn read() -> Option<Self> {
        std::fs::read_to_string("/proc/locks")
            .ok()
            .map(|t| Self::parse(&t))
    }

    /// Lines such as `3: FLOCK  ADVISORY  WRITE 18092 fe:00:10010714 0 EOF`; a blocked request
    /// has `->` after the number and is not a holder.
    fn parse(text: &str) -> Self {
        let mut held = Vec::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 || f[1] != "FLOCK" {
                continue;
            }
            let exclusive = match f[3] {
                "WRITE" => true,
                "READ" => false,
                _ => continue,
            };
            let Ok(pid) = f[4].parse::<u32>() else { continue };
            let mut id = f[5].split(':');
            let (Some(maj), Some(min), Some(ino)) = (id.next(), id.next(), id.next()) else {
                continue;
            };
            let (Ok(maj), Ok(min), Ok(ino)) = (
                u32::from_str_radix(maj, 16),
                u32::from_str_radix(min, 16),
                ino.parse::<u64>(),
            ) else {
                continue;
            };
            held.push((maj, min, ino, pid, exclusive));
        }
        Self { held }
    }

    /// The pids holding a lock (exclusive ones only when `exclusive`) on the file `dev`, `ino`.
    fn holds(&self, dev: u64, ino: u64, exclusive: bool) -> Vec<u32> {
        let (maj, min) = (major(dev), minor(dev));
        self.held
            .iter()
            .filter(|h| h.0 == maj && h.1 == min && h.2 == ino && (h.4 || !exclusive))
            .map(|h| h.3)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lease::DeviceLease;

    #[test]
    fn proc_locks_lines_parse_and_blocked_requests_are_no_holders() {
        let text = "1: FLOCK  ADVISORY  WRITE 18092 fe:00:10010714 0 EOF\n\
                    1: -> FLOCK  ADVISORY  WRITE 18093 fe:00:10010714 0 EOF\n\
                    2: POSIX  ADVISORY  WRITE 77 fe:00:9 0 EOF\n\
                    3: FLOCK  ADVISORY  READ 5 08:11:42 0 EOF\n\
                    garbage\n";
        let l = ProcLocks::parse(text);
        assert_eq!(l.held.len(), 2);
        let dev = rustix::fs::makedev(0xfe, 0);
        assert_eq!(l.holds(dev, 10_010_714, true), [18092]);
        assert_eq!(l.holds(rustix::fs::makedev(8, 0x11), 42, true), Vec::<u32>::new());
        assert_eq!(l.holds(rustix::fs::makedev(8, 0x11), 42, false), [5]);
    }

    #[test]
    fn a_survey_tells_held_from_free_and_shows_records_without_taking_a_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        let s = survey(&cfg, 3).unwrap();
        assert!(!s.exists && !cfg.dir.exists(), "nothing is created");
        assert!(s.cards.iter().all(|c| c.held.is_none()));

        let held = DeviceLease::try_acquire(&cfg, 1, "run-held").unwrap();
        let rec = health::CardHealth::now(1, health::HealthStatus::Quarantined, "run-held", "dead");
        held.remember_health(&rec).unwrap();
        drop(DeviceLease::try_acquire(&cfg, 2, "run-gone").unwrap());
        let s = survey(&cfg, 3).unwrap();
        assert!(s.exists);
        assert_eq!(s.method, HeldBy::ProcLocks, "/proc/locks matches on this machine");
        assert!(s.cards[0].held.is_none() && s.cards[2].held.is_none());
        let h = s.cards[1].held.as_ref().expect("card 1 is held");
        assert_eq!(h.run_id.as_deref(), Some("run-held"));
        assert_eq!(h.pid, Some(std::process::id()));
        assert!(s.cards[1].health.as_ref().is_some_and(CardHealth::is_quarantined));
        // The survey took no lock of its own on the card: it is still this lease's alone.
        assert!(held.verify().is_ok());
        assert!(matches!(
            DeviceLease::try_acquire(&cfg, 1, "other"),
            Err(LeaseError::Held { .. })
        ));
        // The test-lock fallback agrees.
        let dir = LockDir::open(&cfg).unwrap();
        assert_eq!(held_by_test(&dir.fd, 1), Some(None));
        assert_eq!(held_by_test(&dir.fd, 2), None);
        assert_eq!(held_by_test(&dir.fd, 0), None, "no lock file yet");
    }
}
