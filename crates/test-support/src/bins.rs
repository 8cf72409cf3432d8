//! This crate's helper binaries, built on first use and found by path: `sim-helper` (the "other
//! process" of the arch crates' cross-process rows, [`crate::helper`]), `sim-agent` (a process
//! on the simulated cards for `platform-common`'s cross-process sim tests) and `probe-suite` (a
//! suite binary of [`crate::probe_suite`], for the runner's authoring tests).
//!
//! A test of another crate cannot name a dependency's binary (`CARGO_BIN_EXE_*` is only set for
//! the package's own), so each is built once per test process with [`crate::cargo_build`]. This
//! file never runs them.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::cargo_build::{cargo_build, LocateError};

/// This crate's package name, as `cargo build -p` takes it.
const PACKAGE: &str = env!("CARGO_PKG_NAME");

fn built(
    name: &'static str,
    cell: &'static OnceLock<Result<PathBuf, LocateError>>,
) -> Result<PathBuf, LocateError> {
    cell.get_or_init(|| cargo_build(PACKAGE, &["--bin", name], name))
        .clone()
}

/// The `sim-helper` binary: `sim-helper ARCH MODE SIM_ROOT LOCK_DIR CARD` (see [`crate::helper`]).
pub fn sim_helper() -> Result<PathBuf, LocateError> {
    static BUILT: OnceLock<Result<PathBuf, LocateError>> = OnceLock::new();
    built("sim-helper", &BUILT)
}

/// The `sim-agent` binary: a process on the simulated cards that reports each step as a JSON
/// line (its usage is in `src/bin/sim-agent.rs`).
pub fn sim_agent() -> Result<PathBuf, LocateError> {
    static BUILT: OnceLock<Result<PathBuf, LocateError>> = OnceLock::new();
    built("sim-agent", &BUILT)
}

/// The `probe-suite` binary: a suite binary (dispatcher and lane) of [`crate::probe_suite`].
pub fn probe_suite() -> Result<PathBuf, LocateError> {
    static BUILT: OnceLock<Result<PathBuf, LocateError>> = OnceLock::new();
    built("probe-suite", &BUILT)
}
