//! Why a lease, a lock dir or a lease check failed: [`LeaseError`] and the lock dir rules
//! ([`LockDirRule`]) a refusal names.
//!
//! This file only describes failures; the rules are checked in `lock_dir.rs`, leases taken and
//! verified in `lock.rs`.

use std::fmt;
use std::path::PathBuf;

use super::record::HolderRecord;
use crate::driver::DeviceId;

/// A rule of the lock model a lock dir breaks (see the `lease` module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockDirRule {
    /// The lock dir is a symbolic link: never followed.
    Symlink,
    /// Not a directory.
    NotADirectory,
    /// Writable by others without the sticky bit: anyone could delete or swap a lock file.
    WritableWithoutSticky {
        /// Its permission bits.
        mode: u32,
    },
    /// Owned by another user and not shared (a private dir of someone else).
    OwnedByOther {
        /// Its owner.
        uid: u32,
        /// This process's effective uid.
        me: u32,
    },
    /// Its parent is owned by a user other than root or this one, who could swap the lock dir.
    ParentOwner {
        /// The parent directory.
        parent: PathBuf,
        /// Its owner.
        uid: u32,
        /// This process's effective uid.
        me: u32,
    },
    /// Its parent is writable by others without the sticky bit: anyone could swap the lock dir.
    ParentWritableWithoutSticky {
        /// The parent directory.
        parent: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

impl fmt::Display for LockDirRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Symlink => f.write_str("it is a symbolic link (a lock dir is never followed through one)"),
            Self::NotADirectory => f.write_str("it is not a directory"),
            Self::WritableWithoutSticky { mode } => write!(
                f,
                "it is writable by others (mode {mode:04o}) without the sticky bit, so anyone could \
                 delete a lock file in it; a shared lock dir must be sticky as /var/lock and /tmp \
                 are (chmod 1777)"
            ),
            Self::OwnedByOther { uid, me } => write!(
                f,
                "it is owned by uid {uid}, not by this user (uid {me}), and is not shared; a lock \
                 dir of several users must be sticky and world-writable (chmod 1777)"
            ),
            Self::ParentOwner { parent, uid, me } => write!(
                f,
                "its parent {} is owned by uid {uid}, neither root nor this user (uid {me}), who \
                 could swap the lock dir",
                parent.display()
            ),
            Self::ParentWritableWithoutSticky { parent, mode } => write!(
                f,
                "its parent {} is writable by others (mode {mode:04o}) without the sticky bit, so \
                 anyone could swap the lock dir",
                parent.display()
            ),
        }
    }
}

/// What the path of a held lease's lock file names now (see [`LeaseError::LockFileReplaced`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockFileNow {
    /// Nothing: the file was deleted (a temp cleaner, `rm -rf`).
    Missing,
    /// Another file than the one this lease locked.
    Replaced,
}

impl fmt::Display for LockFileNow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Missing => "deleted",
            Self::Replaced => "replaced by another file",
        })
    }
}

/// Why a lease could not be had, or no longer holds.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another holder has the card.
    #[error("card {card} is held by {holder} (lock file {})", path.display())]
    Held {
        /// The card.
        card: DeviceId,
        /// What the holder records say of its holder.
        holder: HolderRecord,
        /// The lock file.
        path: PathBuf,
    },
    /// The lock dir breaks a rule of the lock model.
    #[error("refusing lock dir {}: {rule}", path.display())]
    LockDir {
        /// The lock dir.
        path: PathBuf,
        /// The rule it breaks.
        rule: LockDirRule,
    },
    /// A held lease's lock file is gone or replaced: a second holder could lock the new file, so
    /// the lease no longer excludes anyone.
    #[error(
        "the lock file of card {card} ({}) was {now} while its lease was held: another run can take \
         the card now (is a temp cleaner deleting the lock dir {}?)",
        path.display(),
        path.parent().map(|p| p.display().to_string()).unwrap_or_default()
    )]
    LockFileReplaced {
        /// The card.
        card: DeviceId,
        /// The lock file's path.
        path: PathBuf,
        /// What the path names now.
        now: LockFileNow,
    },
    /// The lock directory or file could not be used.
    #[error("cannot use lock file {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A lock file is not safe to use: a symlink, or not a regular file.
    #[error("refusing lock path {}: it {reason}", path.display())]
    Unsafe {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A handed-down lease is missing or malformed.
    #[error("inherited lease {value:?} in {var} is unusable: {reason}")]
    Inherited {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        reason: String,
    },
}
