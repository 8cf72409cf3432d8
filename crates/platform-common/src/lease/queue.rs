//! The queue of runs waiting for busy cards (`--wait-for-cards`), kept host-wide in the lock dir,
//! so waiters are served in arrival order whoever they are.
//!
//! Layout, beside the lock files: `queue.lock` (a lock-model file like `card-N.lock`: 0644, never
//! renamed or deleted, `flock`ed exclusively for a moment by whoever reads or changes the queue)
//! and the dir `queue/`, created as shared as the lock dir (1777 in a shared lock dir, else 0700),
//! holding one ticket per waiter: `<sequence>.ticket`, the sequence one above the highest ticket
//! there (taken under the queue lock, so two waiters never share one), 0644, holding the waiter's
//! record (uid from the file's owner, pid, host, since when, run id, what it wants) and `flock`ed
//! exclusively by its waiter for as long as it waits. A ticket whose lock can be had belongs to a
//! waiter that died: it is ignored, and removed when this user may remove it (in a sticky dir
//! only its owner may). A waiter removes its ticket when it stops waiting.
//!
//! Reading the queue takes the queue lock first: a ticket is created and locked under it, so a
//! reader never takes a new ticket for a dead one. The rule the queue serves (in
//! `dispatch::cards::card_wait` of the runner): a run may take a free card only when no earlier live
//! waiter wants it ([`Waiter::reserves`]); a waiter for "any N cards" wants every card. So the head
//! of the queue takes cards first and a stream of short runs cannot starve a long-waiting one.
//!
//! This file never takes a card's lock (`lock.rs` does) and never waits: callers poll.

use std::ffi::CStr;
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{
    fchmod, flock, fstat, mkdirat, openat, statat, unlinkat, AtFlags, Dir, FileType, FlockOperation, Mode,
    OFlags,
};
use rustix::io::Errno;

use super::config::LeaseConfig;
use super::error::{LeaseError, LockDirRule};
use super::lock_dir::{mode_of, shared, LockDir, STICKY, WRITABLE_BY_OTHERS};
use super::record::{read_small, HolderRecord};
use crate::driver::DeviceId;

/// The queue's lock file in the lock dir.
pub const QUEUE_LOCK: &str = "queue.lock";
/// The dir of tickets in the lock dir.
pub const QUEUE_DIR: &str = "queue";
/// A ticket's name ends so.
const TICKET_SUFFIX: &str = ".ticket";
/// Bytes of a ticket read at most.
const MAX_TICKET: u64 = 4096;
/// Mode of a ticket.
const TICKET_MODE: u32 = 0o644;

/// What a waiter waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// These cards (`--devices LIST`).
    Cards(Vec<DeviceId>),
    /// Any free cards (`--devices auto`): this many, or `None` for every free one (at least one).
    Any(Option<u32>),
}

impl Wanted {
    fn render(&self) -> String {
        match self {
            Wanted::Cards(c) => c.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
            Wanted::Any(Some(n)) => format!("any:{n}"),
            Wanted::Any(None) => "any".to_owned(),
        }
    }

    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text == "any" {
            return Some(Wanted::Any(None));
        }
        if let Some(n) = text.strip_prefix("any:") {
            return crate::number::whole_u32(n).map(|n| Wanted::Any(Some(n)));
        }
        text.split(',')
            .map(crate::number::whole_u32)
            .collect::<Option<Vec<_>>>()
            .map(Wanted::Cards)
    }
}

impl fmt::Display for Wanted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wanted::Cards(c) if c.len() == 1 => write!(f, "card {}", c[0]),
            Wanted::Cards(c) => {
                let list: Vec<String> = c.iter().map(ToString::to_string).collect();
                write!(f, "cards {}", list.join(", "))
            }
            Wanted::Any(Some(n)) => write!(f, "any {n} card(s)"),
            Wanted::Any(None) => f.write_str("every free card"),
        }
    }
}

/// A live waiter of the queue, as its ticket says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiter {
    /// Its place: a lower sequence arrived earlier.
    pub seq: u64,
    /// Who it is (uid from the ticket's owner; `started_ms` is when it started waiting).
    pub record: HolderRecord,
    /// What it waits for; `None` when the ticket is unreadable (it then reserves every card).
    pub wanted: Option<Wanted>,
}

impl Waiter {
    /// Whether the waiter wants `card` (a free card it wants is its to take first).
    pub fn reserves(&self, card: DeviceId) -> bool {
        match &self.wanted {
            Some(Wanted::Cards(c)) => c.contains(&card),
            Some(Wanted::Any(_)) | None => true,
        }
    }
}

impl fmt::Display for Waiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.record)?;
        match &self.wanted {
            Some(w) => write!(f, ", waiting for {w}"),
            None => f.write_str(", waiting"),
        }
    }
}

/// The queue of a lock dir.
#[derive(Debug)]
pub struct CardQueue {
    lock: File,
    dir: OwnedFd,
    path: PathBuf,
}

impl CardQueue {
    /// Opens the queue of `cfg`'s lock dir, creating the lock dir (under its rules), `queue.lock`
    /// and `queue/` when missing.
    pub fn open(cfg: &LeaseConfig) -> Result<Self, LeaseError> {
        let lock_dir = LockDir::open(cfg)?;
        Self::open_in(&lock_dir, true)?.ok_or_else(|| LeaseError::Io {
            path: lock_dir.path.join(QUEUE_DIR),
            source: Errno::NOENT.into(),
        })
    }

    /// The queue of `cfg`'s lock dir when it exists (nobody ever waited there: `None`); creates
    /// nothing but what a lease would (the lock dir).
    pub fn open_existing(cfg: &LeaseConfig) -> Result<Option<Self>, LeaseError> {
        let lock_dir = LockDir::open(cfg)?;
        Self::open_in(&lock_dir, false)
    }

    /// The queue in the opened lock dir `lock_dir`: its dir created when `create`, checked as a
    /// lock dir is (no symlink, a directory, writable by others only when sticky, another user's
    /// only when shared).
    pub(crate) fn open_in(lock_dir: &LockDir, create: bool) -> Result<Option<Self>, LeaseError> {
        let path = lock_dir.path.join(QUEUE_DIR);
        let io = |e: Errno| LeaseError::Io {
            path: path.clone(),
            source: e.into(),
        };
        let parent = fstat(&lock_dir.fd).map_err(|e| LeaseError::Io {
            path: lock_dir.path.clone(),
            source: e.into(),
        })?;
        let want = if shared(mode_of(&parent)) { 0o1777 } else { 0o700 };
        let created = if create {
            match mkdirat(&lock_dir.fd, QUEUE_DIR, Mode::from_raw_mode(0o700)) {
                Ok(()) => true,
                Err(Errno::EXIST) => false,
                Err(e) => return Err(io(e)),
            }
        } else {
            false
        };
        let dir = match openat(
            &lock_dir.fd,
            QUEUE_DIR,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if !create => return Ok(None),
            Err(Errno::NOTDIR | Errno::LOOP) => {
                let rule = match statat(&lock_dir.fd, QUEUE_DIR, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                        LockDirRule::Symlink
                    }
                    _ => LockDirRule::NotADirectory,
                };
                return Err(LeaseError::LockDir { path, rule });
            }
            Err(e) => return Err(io(e)),
        };
        if created {
            fchmod(&dir, Mode::from_raw_mode(want)).map_err(io)?;
        }
        let st = fstat(&dir).map_err(io)?;
        let mode = mode_of(&st);
        if mode & WRITABLE_BY_OTHERS != 0 && mode & STICKY == 0 {
            return Err(LeaseError::LockDir {
                path,
                rule: LockDirRule::WritableWithoutSticky { mode },
            });
        }
        let me = rustix::process::geteuid().as_raw();
        if st.st_uid != me && !shared(mode) {
            return Err(LeaseError::LockDir {
                path,
                rule: LockDirRule::OwnedByOther { uid: st.st_uid, me },
            });
        }
        let (lock, _) = lock_dir.open_shared_file(QUEUE_LOCK)?;
        Ok(Some(Self { lock, dir, path }))
    }

    /// The queue's dir.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes the queue lock (waiting while another process reads or changes the queue: a moment).
    pub fn lock(&self) -> Result<QueueGuard<'_>, LeaseError> {
        flock(&self.lock, FlockOperation::LockExclusive).map_err(|e| LeaseError::Io {
            path: self.path.with_file_name(QUEUE_LOCK),
            source: e.into(),
        })?;
        Ok(QueueGuard { queue: self })
    }
}

/// The queue, locked: read and change it; unlocked when dropped.
#[derive(Debug)]
pub struct QueueGuard<'a> {
    queue: &'a CardQueue,
}

impl Drop for QueueGuard<'_> {
    fn drop(&mut self) {
        let _ = flock(&self.queue.lock, FlockOperation::Unlock);
    }
}

impl QueueGuard<'_> {
    /// Every live waiter, in arrival order. A dead waiter's ticket (its lock free) is skipped and
    /// removed when this user may remove it.
    pub fn waiters(&self) -> Vec<Waiter> {
        let mut out: Vec<Waiter> = tickets(&self.queue.dir)
            .into_iter()
            .filter_map(|(seq, name)| self.live(seq, &name))
            .collect();
        out.sort_by_key(|w| w.seq);
        out
    }

    /// Joins the queue as its last waiter: a ticket, created and locked now, removed when dropped.
    pub fn enqueue(&self, run_id: &str, wanted: &Wanted) -> Result<Ticket, LeaseError> {
        let seq = tickets(&self.queue.dir)
            .iter()
            .map(|(s, _)| *s)
            .max()
            .unwrap_or(0)
            + 1;
        let name = ticket_name(seq);
        let path = self.queue.path.join(&name);
        let io = |e: Errno| LeaseError::Io {
            path: path.clone(),
            source: e.into(),
        };
        let fd = openat(
            &self.queue.dir,
            name.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(TICKET_MODE),
        )
        .map_err(io)?;
        let file = File::from(fd);
        let ticket = Ticket {
            seq,
            file,
            name,
            dir: self.queue.dir.try_clone().map_err(|e| LeaseError::Io {
                path: path.clone(),
                source: e,
            })?,
        };
        flock(&ticket.file, FlockOperation::NonBlockingLockExclusive).map_err(io)?;
        fchmod(&ticket.file, Mode::from_raw_mode(TICKET_MODE)).map_err(io)?;
        let text = format!(
            "{}wants={}\n",
            HolderRecord::mine(run_id).render(),
            wanted.render()
        );
        (&ticket.file)
            .write_all(text.as_bytes())
            .map_err(|e| LeaseError::Io {
                path: path.clone(),
                source: e,
            })?;
        tracing::debug!(seq, ticket = %path.display(), "joined the card queue");
        Ok(ticket)
    }

    /// The waiter of ticket `name` when it is alive; a dead one's ticket is removed if it may be.
    fn live(&self, seq: u64, name: &CStr) -> Option<Waiter> {
        let fd = openat(
            &self.queue.dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        match flock(&fd, FlockOperation::NonBlockingLockShared) {
            Err(Errno::WOULDBLOCK) => {}
            Ok(()) => {
                // Nobody holds it: its waiter is gone.
                match unlinkat(&self.queue.dir, name, AtFlags::empty()) {
                    Ok(()) => tracing::debug!(seq, "removed a dead waiter's ticket"),
                    Err(e) => tracing::debug!(seq, "a dead waiter's ticket stays ({e}): ignored"),
                }
                return None;
            }
            Err(e) => {
                tracing::debug!(seq, "cannot test a ticket's lock ({e}): ignored");
                return None;
            }
        }
        let (bytes, uid) = read_small(&self.queue.dir, name, MAX_TICKET)?;
        let text = String::from_utf8_lossy(&bytes);
        let mut record = HolderRecord::parse(&text);
        record.uid = Some(uid);
        let wanted = text
            .lines()
            .find_map(|l| l.strip_prefix("wants="))
            .and_then(Wanted::parse);
        Some(Waiter { seq, record, wanted })
    }
}

/// A waiter's place in the queue: its ticket, locked; dropping it leaves the queue.
#[derive(Debug)]
pub struct Ticket {
    seq: u64,
    file: File,
    name: String,
    dir: OwnedFd,
}

impl Ticket {
    /// Its place (lower: earlier).
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // Removed while still locked, so no reader takes it for a dead waiter's in between.
        if let Err(e) = unlinkat(&self.dir, self.name.as_str(), AtFlags::empty()) {
            tracing::debug!(seq = self.seq, "cannot remove the queue ticket: {e}");
        }
        let _ = flock(&self.file, FlockOperation::Unlock);
    }
}

fn ticket_name(seq: u64) -> String {
    format!("{seq:016}{TICKET_SUFFIX}")
}

/// The tickets in the queue dir `dir`: their sequence and name, in no order.
fn tickets(dir: &OwnedFd) -> Vec<(u64, std::ffi::CString)> {
    let Ok(mut entries) = Dir::read_from(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    while let Some(Ok(entry)) = entries.read() {
        let name = entry.file_name();
        let Some(seq) = name
            .to_str()
            .ok()
            .and_then(|n| n.strip_suffix(TICKET_SUFFIX))
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<u64>().ok())
        else {
            continue;
        };
        out.push((seq, name.to_owned()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(tmp: &tempfile::TempDir) -> LeaseConfig {
        LeaseConfig {
            dir: tmp.path().join("locks"),
        }
    }

    #[test]
    fn waiters_come_in_arrival_order_and_a_dropped_ticket_leaves() {
        let tmp = tempfile::tempdir().unwrap();
        let q = CardQueue::open(&cfg(&tmp)).unwrap();
        let g = q.lock().unwrap();
        let a = g.enqueue("run-a", &Wanted::Cards(vec![0, 2])).unwrap();
        let b = g.enqueue("run-b", &Wanted::Any(Some(2))).unwrap();
        let c = g.enqueue("run-c", &Wanted::Any(None)).unwrap();
        assert!(a.seq() < b.seq() && b.seq() < c.seq());
        let w = g.waiters();
        let runs: Vec<_> = w.iter().map(|w| w.record.run_id.clone().unwrap()).collect();
        assert_eq!(runs, ["run-a", "run-b", "run-c"]);
        assert_eq!(w[0].wanted, Some(Wanted::Cards(vec![0, 2])));
        assert!(w[0].reserves(2) && !w[0].reserves(1));
        assert!(w[1].reserves(7) && w[2].reserves(0));
        assert_eq!(w[1].record.pid, Some(std::process::id()));
        assert!(
            w[1].to_string().ends_with("waiting for any 2 card(s)"),
            "{}",
            w[1]
        );
        drop(b);
        let runs: Vec<_> = g
            .waiters()
            .into_iter()
            .map(|w| w.record.run_id.unwrap())
            .collect();
        assert_eq!(runs, ["run-a", "run-c"]);
        // The next ticket still goes last.
        let d = g.enqueue("run-d", &Wanted::Cards(vec![1])).unwrap();
        assert!(d.seq() > c.seq());
        drop((a, c, d));
        assert!(g.waiters().is_empty());
        assert_eq!(tickets(&q.dir).len(), 0, "every ticket was removed");
    }

    #[test]
    fn a_dead_waiters_ticket_is_ignored_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let q = CardQueue::open(&cfg(&tmp)).unwrap();
        // A waiter killed while waiting leaves its ticket unlocked behind.
        let dead = q.path().join(ticket_name(5));
        std::fs::write(&dead, "pid=1\nrun_id=gone\nwants=0\n").unwrap();
        let g = q.lock().unwrap();
        assert!(g.waiters().is_empty());
        assert!(!dead.exists(), "the dead ticket was removed");
        let t = g.enqueue("me", &Wanted::Cards(vec![0])).unwrap();
        assert_eq!(t.seq(), 1, "a removed ticket's number is free again");
    }

    #[test]
    fn the_queue_dir_follows_the_lock_dirs_sharing_and_refuses_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let c = cfg(&tmp);
        assert!(
            CardQueue::open_existing(&c).unwrap().is_none(),
            "nobody waited yet"
        );
        let q = CardQueue::open(&c).unwrap();
        let mode = std::fs::metadata(q.path()).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o7777,
            0o700
        );
        assert!(CardQueue::open_existing(&c).unwrap().is_some());
        drop(q);
        std::fs::remove_dir(c.dir.join(QUEUE_DIR)).unwrap();
        std::os::unix::fs::symlink(tmp.path(), c.dir.join(QUEUE_DIR)).unwrap();
        let e = CardQueue::open(&c).unwrap_err();
        assert!(
            matches!(
                e,
                LeaseError::LockDir {
                    rule: LockDirRule::Symlink,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn wants_round_trip() {
        for w in [
            Wanted::Cards(vec![3]),
            Wanted::Cards(vec![0, 5]),
            Wanted::Any(Some(2)),
            Wanted::Any(None),
        ] {
            assert_eq!(Wanted::parse(&w.render()), Some(w.clone()));
        }
        assert_eq!(Wanted::parse("x"), None);
        assert_eq!(Wanted::Cards(vec![0, 5]).to_string(), "cards 0, 5");
        assert_eq!(Wanted::Cards(vec![3]).to_string(), "card 3");
    }
}
