//! `DeviceLease`: an exclusive, crash-safe lock on one physical card.
//!
//! One lock file per card id in the lock directory, locked with `flock`. The kernel drops the lock
//! when the holder dies, so a killed holder frees the card; lock files are never renamed or
//! deleted (a rename would let two holders lock two different inodes). The file records the
//! holder's pid, run id and start time for the next caller's refusal message; an empty or garbled
//! record is tolerated. A lease can be handed to a child process, which inherits the locked
//! descriptor ([`DeviceLease::pass_to`], [`DeviceLease::inherited`]).

mod handoff;
mod lock;

pub use handoff::{CHILD_LEASE_FD, ENV_EXTRA_LEASE_FDS};
pub use lock::{DeviceLease, HolderRecord, LeaseConfig, LeaseError, ENV_LEASE_FD, ENV_LOCK_DIR};
