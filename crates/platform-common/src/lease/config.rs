//! Where a machine's lock files live: [`LeaseConfig`] and the host-wide default of real cards.
//!
//! The simulated cards' default lives with their sim root (`SimConfig::lease_config`, feature
//! `sim`), so the same sim root always means the same locks. This file never opens anything.

use std::path::PathBuf;

use crate::driver::DeviceId;

/// Environment variable overriding the lock directory, for real and simulated cards alike.
pub const ENV_LOCK_DIR: &str = "ONBOARD_LOCK_DIR";
/// The host-wide lock directory of real cards, shared by every user of the host.
pub const HOST_LOCK_DIR: &str = "/var/lock/cardguard";

/// Where lock files live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The lock directory: created on first use, private (0700) or shared (1777) as its parent is
    /// (see the `lease` module docs for the rules it must keep).
    pub dir: PathBuf,
}

impl LeaseConfig {
    /// The default for real cards: [`HOST_LOCK_DIR`], host-wide, so two users or containers of
    /// the host exclude each other and see who holds what ([`ENV_LOCK_DIR`] wins).
    pub fn real_default() -> Self {
        if let Some(dir) = std::env::var_os(ENV_LOCK_DIR) {
            return Self { dir: dir.into() };
        }
        Self {
            dir: PathBuf::from(HOST_LOCK_DIR),
        }
    }

    /// The lock file of `card`.
    pub fn lock_path(&self, card: DeviceId) -> PathBuf {
        self.dir.join(lock_file_name(card))
    }
}

/// The name of `card`'s lock file in the lock directory.
pub(crate) fn lock_file_name(card: DeviceId) -> String {
    format!("card-{card}.lock")
}
