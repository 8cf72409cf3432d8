//! `DeviceLease`: an exclusive, crash-safe lock on one physical card.
//!
//! One lock file per card id in the lock directory, locked with `flock`. The kernel drops the lock
//! when the holder dies, so a killed holder frees the card; lock files are never renamed or
//! deleted (a rename would let two holders lock two different inodes). The file records the
//! holder's pid, run id and start time for the next caller's refusal message; an empty or garbled
//! record is tolerated. A lease can be handed to a child process, which inherits the locked
//! descriptor ([`DeviceLease::pass_to`], [`DeviceLease::inherited`]); an adopted descriptor is made
//! close-on-exec, and each descriptor number is adopted at most once per process.
//!
//! The lock directory is created 0700 and must be a directory owned by this user, not a symlink;
//! lock files are opened relative to it and never through a symlink (`private_dir.rs`, which the
//! simulator's card files use too).

mod handoff;
mod lock;
pub(crate) mod private_dir;

pub use handoff::{CHILD_LEASE_FD, ENV_EXTRA_LEASE_FDS};
pub use lock::{DeviceLease, HolderRecord, LeaseConfig, LeaseError, ENV_LEASE_FD, ENV_LOCK_DIR};
