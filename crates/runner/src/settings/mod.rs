//! The run settings' value types and their one parser each, below everything that reads or uses
//! a setting: the command line (`cli`), the config file (`config`), the dispatcher (`dispatch`)
//! and the lane (`lane`), so none of them imports another for a setting's type.
//!
//! - `devices`: [`DeviceSpec`] (`--devices LIST|auto`);
//! - `modes`: [`Isolation`] (`--isolation`) and [`HealthCheck`] (`--health-check`);
//! - `numbers`: counts, iterations, seconds and waits ([`parse_count`], [`parse_iterations`],
//!   [`parse_secs`], [`parse_wait`]) and
//!   the built-in timeouts.
//!
//! This module owns values and parsing only: which source of a setting wins is `config`'s, and
//! what a setting does is its user's.

mod devices;
mod modes;
mod numbers;

pub use devices::{BadDeviceList, DeviceSpec, MAX_RANGE_CARDS};
pub use modes::{HealthCheck, Isolation};
pub use numbers::{
    parse_count, parse_iterations, parse_secs, parse_wait, DEFAULT_CASE_TIMEOUT, DEFAULT_INIT_TIMEOUT,
    MIN_TIMEOUT,
};
