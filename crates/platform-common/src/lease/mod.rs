//! `DeviceLease`: an exclusive, crash-safe lock on one physical card, and the lock model behind it.
//!
//! Where: one lock dir per machine. Real cards: [`HOST_LOCK_DIR`] (`/var/lock/cardguard`),
//! host-wide, so every user and container of the host excludes the others. Simulated cards:
//! `<sim root>/locks` (`SimConfig::lease_config`), so the same sim root means the same locks
//! whatever `TMPDIR` says. [`ENV_LOCK_DIR`] overrides both.
//!
//! Modes: a lock dir is created as shared as the directory it is created in: in a sticky,
//! world-writable parent (`/var/lock` is `/run/lock`, mode 1777) it gets 1777 itself, so a second
//! user can create its lock files and records there but delete nobody else's; elsewhere (a sim
//! root) it is 0700, private to its user. The mode is set explicitly, whatever the umask. Lock
//! files (`card-N.lock`) are created once, 0644, never renamed or deleted (a rename would let two
//! holders lock two different inodes), opened with `O_NOFOLLOW`, and held by `flock`: the kernel
//! drops the lock when the holder dies, so a killed holder frees the card. A user who may not
//! write another user's lock file opens it read-only; `flock` works on that.
//!
//! Holder records: `card-N.holder-<uid>`, one per card and user, written by the holder while it
//! holds the lock (uid, pid, host, start time, run id; see `record.rs` for why not in the lock
//! file). A refusal names the newest: `card 3 is held by uid 1001 pid 4242 on HOST since ... (run
//! ...)`. An empty or garbled record is tolerated.
//!
//! Rules, each refused with [`LeaseError::LockDir`] naming the path and the rule
//! ([`LockDirRule`]): the lock dir is no symlink and a directory; writable by others only with the
//! sticky bit; another user's only when shared so; its parent owned by root or this user, and
//! writable by others only with the sticky bit. A lock file is a regular file, never a symlink
//! ([`LeaseError::Unsafe`]).
//!
//! Staying held: [`DeviceLease::verify`] checks that a lease's lock file is still the one it
//! locked (a temp cleaner may have deleted it: [`LeaseError::LockFileReplaced`]), and
//! [`LockDirHold`] holds the lock dir itself with a shared `flock` for a run, which keeps
//! `systemd-tmpfiles` away from it.
//!
//! Hand-off: a lease can be handed to a child process, which inherits the locked descriptor
//! ([`DeviceLease::pass_to`], [`DeviceLease::inherited`]); an adopted descriptor is made
//! close-on-exec, and each descriptor number is adopted at most once per process.
//!
//! Waiting: runs that wait for busy cards (`--wait-for-cards`) queue in the lock dir, one ticket
//! each, and are served in arrival order ([`CardQueue`], `queue.rs`).
//!
//! Memory: a card quarantined in a run is recorded beside its lock file (`card-N.health-<uid>`,
//! [`CardHealth`], `health.rs`), so the next run that leases it checks it first. [`survey`]
//! (`survey.rs`) reads a lock dir card by card without taking a lock (`cargo xtask cards`).
//!
//! `private_dir.rs` (a private state dir and its files, never through a symlink) serves the
//! simulator's card files.

mod config;
mod error;
mod handoff;
mod health;
mod lock;
mod lock_dir;
pub(crate) mod private_dir;
mod queue;
mod record;
mod survey;

pub use config::{LeaseConfig, ENV_LOCK_DIR, HOST_LOCK_DIR};
pub use error::{LeaseError, LockDirRule, LockFileNow};
pub use handoff::{CHILD_LEASE_FD, ENV_EXTRA_LEASE_FDS};
pub use health::{CardHealth, HealthStatus, MAX_HEALTH_EVENTS};
pub use lock::{DeviceLease, ENV_LEASE_FD};
pub use lock_dir::LockDirHold;
pub use queue::{CardQueue, QueueGuard, Ticket, Waiter, Wanted, QUEUE_DIR, QUEUE_LOCK};
pub use record::HolderRecord;
pub use survey::{survey, CardSurvey, HeldBy, LockDirSurvey};
