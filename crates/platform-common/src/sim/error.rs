//! Errors of the simulator's own API (configuration, card files, starting a run).
//!
//! Driver calls never return these: a [`crate::driver::Driver`] call returns a
//! [`crate::error::DriverError`] carrying a code, as a real card would.

use std::path::PathBuf;

use super::plan_error::FaultPlanError;
use crate::driver::DeviceId;
use crate::timeouts::TimeoutError;

/// A failure of the simulator's configuration or of its card files.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A card file or the sim root could not be used.
    #[error("cannot use sim card state {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The sim root or a card file is not safe to use: a symlink, not a directory (or not a
    /// regular file), or owned by another user.
    #[error("refusing sim card state {}: it {reason}", path.display())]
    Unsafe {
        /// The directory or file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A card the sim does not have.
    #[error("card {card} is out of range (the sim has {cards} cards: 0 to {})", cards.saturating_sub(1))]
    CardOutOfRange {
        /// The card.
        card: DeviceId,
        /// How many cards the sim has.
        cards: u32,
    },
    /// A logical card the process's `ASCEND_RT_VISIBLE_DEVICES` map does not show.
    #[error(
        "card {card} is not visible ({} shows {visible} cards: 0 to {})",
        crate::visible::ENV_VISIBLE_DEVICES,
        visible.saturating_sub(1)
    )]
    NotVisible {
        /// The logical card.
        card: DeviceId,
        /// How many cards the map shows.
        visible: u32,
    },
    /// A malformed fault plan.
    #[error(transparent)]
    Plan(#[from] FaultPlanError),
    /// An environment variable with a value that cannot be used.
    #[error("{var}={value:?} {reason}")]
    Env {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// Bad timeouts.
    #[error(transparent)]
    Timeouts(#[from] TimeoutError),
}
