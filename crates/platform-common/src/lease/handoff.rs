//! Handing a lease to a child process: the child inherits the locked descriptor.
//!
//! This is the one place outside the FFI and kernel-loading modules that adopts a raw file
//! descriptor: an inherited descriptor is an OS-level hand-off, so it is treated as FFI. The
//! adoption is checked before (the descriptor is open: `/proc/self/fd/N` exists, and this process
//! never adopted it before) and after (it is the named card's lock file, by device and inode, and
//! its lock is ours). Each descriptor number is adopted at most once per process, so two owners
//! never close it twice; an adopted descriptor is made close-on-exec, so the processes the holder
//! spawns do not inherit the lock. This file never changes the environment.

use std::collections::BTreeSet;
use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use command_fds::{CommandFdExt, FdMapping};
use rustix::fs::{flock, fstat, FlockOperation};
use rustix::io::{fcntl_dupfd_cloexec, fcntl_getfd, fcntl_setfd, FdFlags};

use super::config::LeaseConfig;
use super::error::LeaseError;
use super::lock::{DeviceLease, ENV_LEASE_FD};
use crate::driver::DeviceId;

/// Environment variable naming the extra leases a parent handed down: `CARD:FD,CARD:FD`.
pub const ENV_EXTRA_LEASE_FDS: &str = "ONBOARD_EXTRA_LEASE_FDS";

/// The descriptor number a child finds its lease at.
pub const CHILD_LEASE_FD: RawFd = 3;

/// The descriptor numbers this process adopted as leases (never removed: a number is adopted at
/// most once, even after its lease is dropped and the number reused by another open).
static ADOPTED: Mutex<BTreeSet<RawFd>> = Mutex::new(BTreeSet::new());

impl DeviceLease {
    /// Arranges for the child `cmd` spawns to inherit this lease: a duplicate of the locked
    /// descriptor is mapped to [`CHILD_LEASE_FD`] in the child only (the parent's copy stays
    /// close-on-exec, so no other child started meanwhile inherits it), and [`ENV_LEASE_FD`] names it.
    pub fn pass_to(&self, cmd: &mut Command) -> Result<(), LeaseError> {
        Self::pass_all_to(&[self], cmd)
    }

    /// The lease a parent handed down through [`ENV_LEASE_FD`], checked: the descriptor must be
    /// the lock file of the named card in `cfg`, and this process must hold its lock. A descriptor
    /// is adopted once per process: a second call for it is refused ([`LeaseError::Inherited`]).
    /// The adopted descriptor is made close-on-exec.
    pub fn inherited(cfg: &LeaseConfig) -> Result<Self, LeaseError> {
        Self::adopt(cfg, ENV_LEASE_FD, std::env::var(ENV_LEASE_FD).unwrap_or_default())
    }

    /// Hands every lease of `leases` to the child `cmd` spawns: the first as [`Self::pass_to`]
    /// does, the others at descriptors 4, 5, ... named in [`ENV_EXTRA_LEASE_FDS`]
    /// (`CARD:FD,CARD:FD`), for a child that drives several cards (a multi-card case).
    pub fn pass_all_to(leases: &[&DeviceLease], cmd: &mut Command) -> Result<(), LeaseError> {
        let mut mappings = Vec::new();
        let mut extra = Vec::new();
        for (i, lease) in leases.iter().enumerate() {
            let fd = fcntl_dupfd_cloexec(&lease.file, 3).map_err(|e| LeaseError::Io {
                path: lease.path.clone(),
                source: e.into(),
            })?;
            let child_fd = CHILD_LEASE_FD + i as RawFd;
            if i > 0 {
                extra.push(format!("{}:{child_fd}", lease.card));
            }
            mappings.push(FdMapping {
                parent_fd: fd,
                child_fd,
            });
        }
        let first = leases.first().map_or(0, |l| l.card);
        cmd.fd_mappings(mappings).map_err(|_| LeaseError::Inherited {
            var: ENV_LEASE_FD,
            value: format!("{first}:{CHILD_LEASE_FD}"),
            reason: "descriptors are already mapped for this child".to_owned(),
        })?;
        cmd.env(ENV_LEASE_FD, format!("{first}:{CHILD_LEASE_FD}"));
        cmd.env(ENV_EXTRA_LEASE_FDS, extra.join(","));
        for lease in leases {
            lease.shared.store(true, Ordering::SeqCst);
        }
        Ok(())
    }

    /// The extra leases a parent handed down with [`Self::pass_all_to`] (none when
    /// [`ENV_EXTRA_LEASE_FDS`] is unset or empty), each checked as [`Self::inherited`] checks its one.
    pub fn inherited_extra(cfg: &LeaseConfig) -> Result<Vec<Self>, LeaseError> {
        let value = std::env::var(ENV_EXTRA_LEASE_FDS).unwrap_or_default();
        value
            .split(',')
            .filter(|e| !e.trim().is_empty())
            .map(|entry| Self::adopt(cfg, ENV_EXTRA_LEASE_FDS, entry.trim().to_owned()))
            .collect()
    }

    /// Adopts the inherited descriptor `value` (`CARD:FD`, from `var`), checked.
    fn adopt(cfg: &LeaseConfig, var: &'static str, value: String) -> Result<Self, LeaseError> {
        let bad = |reason: &str| LeaseError::Inherited {
            var,
            value: value.clone(),
            reason: reason.to_owned(),
        };
        let (card, fd) = value.split_once(':').ok_or_else(|| bad("expected CARD:FD"))?;
        let card: DeviceId = card.parse().map_err(|_| bad("card is not a number"))?;
        let raw: RawFd = fd.parse().map_err(|_| bad("fd is not a number"))?;
        if raw < 3 {
            return Err(bad("fd must be 3 or above"));
        }
        // The lock file is the physical card's: this process sees the parent's map (inherited).
        let physical = crate::visible::VisibleDevices::from_env()
            .map_err(|e| bad(&e.to_string()))?
            .physical(card)
            .ok_or_else(|| bad("the card is not visible under ASCEND_RT_VISIBLE_DEVICES"))?;
        let path = cfg.lock_path(physical);
        let want = std::fs::metadata(&path).map_err(|e| LeaseError::Io {
            path: path.clone(),
            source: e,
        })?;
        // Held for the whole adoption, so two threads cannot adopt one descriptor.
        let mut adopted = ADOPTED.lock().unwrap_or_else(PoisonError::into_inner);
        if adopted.contains(&raw) {
            return Err(bad("this process already adopted that descriptor"));
        }
        // Open? Checked without touching the number: the kernel lists every open descriptor here.
        if std::fs::symlink_metadata(format!("/proc/self/fd/{raw}")).is_err() {
            return Err(bad("descriptor is not open"));
        }
        // SAFETY: the descriptor is open (checked just above), was inherited for this purpose
        // through `var`, and nothing else in this process owns it: it is adopted at most once
        // (`ADOPTED`, locked), and the checks below give it back unclosed if it is not the lease.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(raw) });
        let checked = fstat(&file)
            .map_err(|e| LeaseError::Io {
                path: path.clone(),
                source: e.into(),
            })
            .and_then(|st| {
                if st.st_ino == want.ino() && st.st_dev == want.dev() {
                    Ok(())
                } else {
                    Err(bad("descriptor is not that card's lock file"))
                }
            })
            // Same open file description as the parent's: this converts nothing and succeeds only
            // if the lock is ours (a foreign holder makes it fail at once).
            .and_then(|()| {
                flock(&file, FlockOperation::NonBlockingLockExclusive).map_err(|_| bad("lock is not held"))
            });
        if let Err(e) = checked {
            // Not ours to own: give it back unclosed.
            std::mem::forget(file);
            return Err(e);
        }
        adopted.insert(raw);
        // The processes this holder spawns must not inherit the lock.
        let flags = fcntl_getfd(&file).map_err(|e| LeaseError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        fcntl_setfd(&file, flags | FdFlags::CLOEXEC).map_err(|e| LeaseError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        Ok(Self {
            card,
            physical,
            file,
            path,
            shared: AtomicBool::new(true),
            dir: None,
        })
    }
}
