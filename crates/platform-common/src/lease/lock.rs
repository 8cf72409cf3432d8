//! The lease type: taking a card's lock, recording its holder, letting go, and checking that a
//! held lock still guards the card ([`DeviceLease::verify`]).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{flock, fstat, statat, AtFlags, FlockOperation, CWD};
use rustix::io::Errno;

use super::config::LeaseConfig;
use super::error::{LeaseError, LockFileNow};
use super::lock_dir::LockDir;
use super::record::{self, HolderRecord};
use crate::driver::DeviceId;
use crate::visible::PhysicalId;

/// Environment variable naming a lease a parent handed down: `CARD:FD`.
pub const ENV_LEASE_FD: &str = "ONBOARD_LEASE_FD";

/// An exclusive lease on one card, held until dropped (or until the holding process dies).
///
/// Dropping a lease that was never shared unlocks it explicitly before closing the descriptor:
/// a child forked meanwhile by another thread holds a copy of the descriptor until it execs, and
/// a plain close would leave the card locked for that moment. A lease handed to a child
/// ([`DeviceLease::pass_to`]) or inherited from a parent shares its lock with the other process,
/// so dropping it only closes this process's descriptor.
///
/// A lease that lets go removes its holder record first, while it still holds the lock, so the
/// next holder's record (of the same user: the same file) is never removed by it.
#[derive(Debug)]
pub struct DeviceLease {
    /// The card as this process's ACL calls name it (its logical id).
    pub(super) card: DeviceId,
    /// Its physical id (`ASCEND_RT_VISIBLE_DEVICES` translated): the key of its lock file, holder
    /// record and health record, so runs with different visible-device maps exclude each other.
    pub(super) physical: PhysicalId,
    pub(super) file: File,
    pub(super) path: PathBuf,
    pub(super) shared: AtomicBool,
    /// The lock dir, for the holder record (`None` for an inherited lease: its record is the
    /// parent's).
    pub(super) dir: Option<OwnedFd>,
}

impl Drop for DeviceLease {
    fn drop(&mut self) {
        if !self.shared.load(Ordering::SeqCst) {
            if let Some(dir) = &self.dir {
                record::remove(dir, self.physical);
            }
            // Unlocking can only fail for a descriptor that is not open; the close follows anyway.
            let _ = flock(&self.file, FlockOperation::Unlock);
        }
    }
}

impl DeviceLease {
    /// Waits until `card` is free, then takes it (its logical id is its physical one).
    pub fn acquire(cfg: &LeaseConfig, card: DeviceId, run_id: &str) -> Result<Self, LeaseError> {
        let dir = LockDir::open(cfg)?;
        let (file, path) = dir.open_lock_file(card)?;
        flock(&file, FlockOperation::LockExclusive).map_err(|e| LeaseError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        Ok(Self::record(dir, file, path, (card, card), run_id))
    }

    /// Takes `card` if it is free; otherwise reports its holder (its logical id is its physical
    /// one: [`DeviceLease::try_acquire_as`] for a process with a visible-device map).
    pub fn try_acquire(cfg: &LeaseConfig, card: DeviceId, run_id: &str) -> Result<Self, LeaseError> {
        Self::try_acquire_as(cfg, card, card, run_id)
    }

    /// Takes the card this process calls `logical`, whose physical id is `physical`, if it is
    /// free; otherwise reports its holder. The lock file and records are the physical card's.
    pub fn try_acquire_as(
        cfg: &LeaseConfig,
        logical: DeviceId,
        physical: PhysicalId,
        run_id: &str,
    ) -> Result<Self, LeaseError> {
        let dir = LockDir::open(cfg)?;
        let (file, path) = dir.open_lock_file(physical)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Self::record(dir, file, path, (logical, physical), run_id)),
            Err(Errno::WOULDBLOCK) => Err(LeaseError::Held {
                card: physical,
                holder: record::current(&dir.fd, physical),
                path,
            }),
            Err(e) => Err(LeaseError::Io {
                path,
                source: e.into(),
            }),
        }
    }

    /// Writes this holder's record (a failure is logged: the lock, not the record, excludes).
    fn record(
        dir: LockDir,
        file: File,
        path: PathBuf,
        (card, physical): (DeviceId, PhysicalId),
        run_id: &str,
    ) -> Self {
        let rec = HolderRecord::mine(run_id);
        if let Err(e) = record::write(&dir.fd, &dir.path, physical, &rec) {
            tracing::warn!(card, physical, dir = %dir.path.display(), error = %e, "cannot write the lease holder record");
        }
        Self {
            card,
            physical,
            file,
            path,
            shared: AtomicBool::new(false),
            dir: Some(dir.fd),
        }
    }

    /// The leased card, as this process's ACL calls name it (its logical id).
    pub fn card(&self) -> DeviceId {
        self.card
    }

    /// The leased card's physical id: what HAL calls index and every host-wide thing is keyed
    /// by.
    pub fn physical(&self) -> PhysicalId {
        self.physical
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks that the lease still guards its card: that the lock file's path still names the
    /// file this lease locked (one `stat` of the path against the held descriptor's `fstat`). A
    /// lock file deleted or replaced under a held lease (a temp cleaner, `rm -rf` of the lock dir)
    /// no longer excludes anyone: the next run would create a new file and lock it. Cheap enough
    /// for a dispatcher to call before every hand-out; the error names the card, the file and the
    /// lock dir.
    pub fn verify(&self) -> Result<(), LeaseError> {
        let io = |e: Errno| LeaseError::Io {
            path: self.path.clone(),
            source: e.into(),
        };
        let held = fstat(&self.file).map_err(io)?;
        let now = match statat(CWD, &self.path, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if st.st_dev == held.st_dev && st.st_ino == held.st_ino => return Ok(()),
            Ok(_) => LockFileNow::Replaced,
            Err(Errno::NOENT | Errno::NOTDIR) => LockFileNow::Missing,
            Err(e) => return Err(io(e)),
        };
        tracing::warn!(card = self.card, path = %self.path.display(), %now, "lease lock file lost");
        Err(LeaseError::LockFileReplaced {
            card: self.physical,
            path: self.path.clone(),
            now,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_a_lease_frees_the_card_while_a_copy_of_its_descriptor_lives() {
        // A child forked by another thread holds a copy of the descriptor until it execs; a copy
        // made here stands in for it.
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        let lease = DeviceLease::try_acquire(&cfg, 4, "first").unwrap();
        let forked_copy = lease.file.try_clone().unwrap();
        drop(lease);
        let again = DeviceLease::try_acquire(&cfg, 4, "second");
        assert!(again.is_ok(), "{again:?}");
        drop(forked_copy);
    }

    #[test]
    fn a_shared_lease_keeps_its_lock_when_this_copy_is_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        let lease = DeviceLease::try_acquire(&cfg, 4, "first").unwrap();
        let child_copy = lease.file.try_clone().unwrap();
        lease.pass_to(&mut std::process::Command::new("true")).unwrap();
        drop(lease);
        assert!(matches!(
            DeviceLease::try_acquire(&cfg, 4, "second"),
            Err(LeaseError::Held { .. })
        ));
        drop(child_copy);
        DeviceLease::try_acquire(&cfg, 4, "second").unwrap();
    }
}
