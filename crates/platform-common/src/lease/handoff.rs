//! Handing a lease to a child process: the child inherits the locked descriptor.
//!
//! This is the one place outside the FFI and kernel-loading modules that adopts a raw file
//! descriptor: an inherited descriptor is an OS-level hand-off, so it is treated as FFI.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use rustix::fs::{flock, fstat, FlockOperation};
use rustix::io::{fcntl_dupfd_cloexec, fcntl_setfd, FdFlags};

use super::lock::{DeviceLease, LeaseConfig, LeaseError, ENV_LEASE_FD};
use crate::driver::DeviceId;

/// A duplicate of a lease's locked descriptor that survives `exec`, for one child.
#[derive(Debug)]
pub struct LeaseHandoff {
    fd: OwnedFd,
    card: DeviceId,
}

impl LeaseHandoff {
    /// The value of [`ENV_LEASE_FD`] for the child: `CARD:FD`.
    pub fn env_value(&self) -> String {
        format!("{}:{}", self.card, self.fd.as_raw_fd())
    }
}

impl DeviceLease {
    /// A descriptor of this lease the next spawned child inherits. Keep the returned value alive
    /// until the child is spawned; dropping it afterwards closes only the parent's duplicate.
    pub fn handoff(&self) -> Result<LeaseHandoff, LeaseError> {
        let io = |e: rustix::io::Errno| LeaseError::Io {
            path: self.path.clone(),
            source: e.into(),
        };
        let fd = fcntl_dupfd_cloexec(&self.file, 3).map_err(io)?;
        fcntl_setfd(&fd, FdFlags::empty()).map_err(io)?;
        Ok(LeaseHandoff { fd, card: self.card })
    }

    /// The lease a parent handed down through [`ENV_LEASE_FD`], checked: the descriptor must be
    /// the lock file of the named card in `cfg`, and this process must hold its lock.
    pub fn inherited(cfg: &LeaseConfig) -> Result<Self, LeaseError> {
        let value = std::env::var(ENV_LEASE_FD).unwrap_or_default();
        let bad = |reason: &str| LeaseError::Inherited {
            var: ENV_LEASE_FD,
            value: value.clone(),
            reason: reason.to_owned(),
        };
        let (card, fd) = value.split_once(':').ok_or_else(|| bad("expected CARD:FD"))?;
        let card: DeviceId = card.parse().map_err(|_| bad("card is not a number"))?;
        let raw: RawFd = fd.parse().map_err(|_| bad("fd is not a number"))?;
        if raw < 3 {
            return Err(bad("fd must be 3 or above"));
        }
        let path = cfg.lock_path(card);
        let want = std::fs::metadata(&path).map_err(|e| LeaseError::Io {
            path: path.clone(),
            source: e,
        })?;
        // Check the descriptor before adopting it: open, and the lock file itself.
        let dup = rustix::io::fcntl_getfd(
            // SAFETY: `raw` is only borrowed for this one fcntl call; a closed descriptor makes the
            // call fail with EBADF, which is reported, not undefined behaviour.
            unsafe { std::os::fd::BorrowedFd::borrow_raw(raw) },
        );
        dup.map_err(|_| bad("descriptor is not open"))?;
        // SAFETY: the descriptor is open (checked above), was inherited for this purpose through
        // ENV_LEASE_FD, and nothing else in this process owns it; adopting it closes it on drop.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(raw) });
        let st = fstat(&file).map_err(|e| LeaseError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        use std::os::unix::fs::MetadataExt;
        if st.st_ino != want.ino() || st.st_dev != want.dev() {
            // Do not close a descriptor that is not ours to own.
            std::mem::forget(file);
            return Err(bad("descriptor is not that card's lock file"));
        }
        // Same open file description as the parent's: this converts nothing and succeeds only if
        // the lock is ours (a foreign holder makes it fail at once).
        flock(&file, FlockOperation::NonBlockingLockExclusive).map_err(|_| bad("lock is not held"))?;
        Ok(Self { card, file, path })
    }
}
