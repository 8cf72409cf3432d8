//! The lock file, its holder record and the lease type.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::fs::{flock, FlockOperation};

use super::private_dir::{open_private_dir, open_state_file, Refusal};
use crate::driver::DeviceId;

/// Environment variable overriding the lock directory.
pub const ENV_LOCK_DIR: &str = "ONBOARD_LOCK_DIR";
/// Environment variable naming a lease a parent handed down: `CARD:FD`.
pub const ENV_LEASE_FD: &str = "ONBOARD_LEASE_FD";

/// Where lock files live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The lock directory (created 0700 when missing; it must be a directory owned by this user,
    /// not a symlink).
    pub dir: PathBuf,
}

impl LeaseConfig {
    /// The default for simulated cards: per user under the temp dir (`ONBOARD_LOCK_DIR` wins).
    pub fn sim_default() -> Self {
        if let Some(dir) = std::env::var_os(ENV_LOCK_DIR) {
            return Self { dir: dir.into() };
        }
        let uid = rustix::process::getuid().as_raw();
        Self {
            dir: std::env::temp_dir()
                .join(format!("cardguard-{uid}"))
                .join("sim-locks"),
        }
    }

    /// The default for real cards: host-wide, so two users or containers exclude each other
    /// (`ONBOARD_LOCK_DIR` wins).
    pub fn real_default() -> Self {
        if let Some(dir) = std::env::var_os(ENV_LOCK_DIR) {
            return Self { dir: dir.into() };
        }
        Self {
            dir: PathBuf::from("/var/lock/cardguard"),
        }
    }

    /// The lock file of `card`.
    pub fn lock_path(&self, card: DeviceId) -> PathBuf {
        self.dir.join(lock_file_name(card))
    }
}

/// What a lock file says about its holder. Every field is optional: an empty or garbled record
/// (a holder killed mid-write, another tool's file) is tolerated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HolderRecord {
    /// Holder's process id.
    pub pid: Option<u32>,
    /// Holder's run id.
    pub run_id: Option<String>,
    /// When the holder took the lease (seconds since the epoch).
    pub started: Option<u64>,
}

impl HolderRecord {
    fn parse(text: &str) -> Self {
        let mut rec = Self::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            match k.trim() {
                "pid" => rec.pid = v.trim().parse().ok(),
                "run_id" => rec.run_id = Some(v.trim().to_owned()).filter(|s| !s.is_empty()),
                "started" => rec.started = v.trim().parse().ok(),
                _ => {}
            }
        }
        rec
    }

    fn render(&self) -> String {
        format!(
            "pid={}\nrun_id={}\nstarted={}\n",
            self.pid.unwrap_or(0),
            self.run_id.as_deref().unwrap_or(""),
            self.started.unwrap_or(0)
        )
    }
}

impl std::fmt::Display for HolderRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.pid, &self.run_id, self.started) {
            (None, None, None) => f.write_str("an unknown holder (empty or unreadable record)"),
            (pid, run, started) => {
                write!(f, "pid {}", pid.map_or_else(|| "?".to_owned(), |p| p.to_string()))?;
                if let Some(run) = run {
                    write!(f, ", run {run}")?;
                }
                if let Some(s) = started {
                    write!(f, ", since {s} (unix time)")?;
                }
                Ok(())
            }
        }
    }
}

/// Why a lease could not be had.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another holder has the card.
    #[error("card {card} is held by {holder} (lock file {})", path.display())]
    Held {
        /// The card.
        card: DeviceId,
        /// What the lock file says of its holder.
        holder: HolderRecord,
        /// The lock file.
        path: PathBuf,
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
    /// The lock directory or a lock file is not safe to use: a symlink, not a directory (or not a
    /// regular file), or owned by another user.
    #[error("refusing lock path {}: it {reason}", path.display())]
    Unsafe {
        /// The directory or file.
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

/// An exclusive lease on one card, held until dropped (or until the holding process dies).
///
/// Dropping a lease that was never shared unlocks it explicitly before closing the descriptor:
/// a child forked meanwhile by another thread holds a copy of the descriptor until it execs, and
/// a plain close would leave the card locked for that moment. A lease handed to a child
/// ([`DeviceLease::pass_to`]) or inherited from a parent shares its lock with the other process,
/// so dropping it only closes this process's descriptor.
#[derive(Debug)]
pub struct DeviceLease {
    pub(super) card: DeviceId,
    pub(super) file: File,
    pub(super) path: PathBuf,
    pub(super) shared: AtomicBool,
}

impl Drop for DeviceLease {
    fn drop(&mut self) {
        if !self.shared.load(Ordering::SeqCst) {
            // Unlocking can only fail for a descriptor that is not open; the close follows anyway.
            let _ = flock(&self.file, FlockOperation::Unlock);
        }
    }
}

impl DeviceLease {
    /// Waits until `card` is free, then takes it.
    pub fn acquire(cfg: &LeaseConfig, card: DeviceId, run_id: &str) -> Result<Self, LeaseError> {
        let (file, path) = open_lock_file(cfg, card)?;
        flock(&file, FlockOperation::LockExclusive).map_err(|e| LeaseError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        Self::record(file, path, card, run_id)
    }

    /// Takes `card` if it is free; otherwise reports its holder.
    pub fn try_acquire(cfg: &LeaseConfig, card: DeviceId, run_id: &str) -> Result<Self, LeaseError> {
        let (mut file, path) = open_lock_file(cfg, card)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Self::record(file, path, card, run_id),
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let mut text = String::new();
                // A garbled (non-UTF-8) record reads as empty: tolerated.
                let _ = file.read_to_string(&mut text);
                Err(LeaseError::Held {
                    card,
                    holder: HolderRecord::parse(&text),
                    path,
                })
            }
            Err(e) => Err(LeaseError::Io {
                path,
                source: e.into(),
            }),
        }
    }

    fn record(mut file: File, path: PathBuf, card: DeviceId, run_id: &str) -> Result<Self, LeaseError> {
        let rec = HolderRecord {
            pid: Some(std::process::id()),
            run_id: Some(run_id.to_owned()),
            started: Some(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            ),
        };
        let io = |e: std::io::Error| LeaseError::Io {
            path: path.clone(),
            source: e,
        };
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(rec.render().as_bytes()).map_err(io)?;
        Ok(Self {
            card,
            file,
            path,
            shared: AtomicBool::new(false),
        })
    }

    /// The leased card.
    pub fn card(&self) -> DeviceId {
        self.card
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn open_lock_file(cfg: &LeaseConfig, card: DeviceId) -> Result<(File, PathBuf), LeaseError> {
    let refused = |path: &Path, r: Refusal| match r {
        Refusal::Io(source) => LeaseError::Io {
            path: path.to_owned(),
            source,
        },
        Refusal::Unsafe(reason) => LeaseError::Unsafe {
            path: path.to_owned(),
            reason,
        },
    };
    let dir = open_private_dir(&cfg.dir, 0o700).map_err(|r| refused(&cfg.dir, r))?;
    let path = cfg.lock_path(card);
    let file = open_state_file(&dir, &lock_file_name(card), 0o600).map_err(|r| refused(&path, r))?;
    Ok((file, path))
}

/// The name of `card`'s lock file in the lock directory.
fn lock_file_name(card: DeviceId) -> String {
    format!("card-{card}.lock")
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
