//! cardguard's user commands for any cargo workspace, without the runner: `cargo cardguard`
//! (crates/cargo-cardguard) and this repository's `cargo xtask` both dispatch to them. A suite
//! binary is driven as a process (built through cargo, asked through its flags), so this crate
//! links the formats (cardguard-report, cardguard-archive) and never the runner.
//!
//! - [`command`]: `cargo cardguard`'s command line and its dispatch;
//! - [`workspace`]: the current workspace from `cargo metadata`, and its suite package;
//! - [`cargo_build`]: building through cargo and reading its artifacts;
//! - [`run`]: `run` / `list` / `show-config` (build the suite binary, run it);
//! - [`archive`]: a suite archive a card host runs with no toolchain;
//! - [`build_kernels`]: kernel binaries from kernel sources;
//! - [`cards`]: the host's cards, their holders and health records;
//! - [`merge_reports`]: partitioned runs' reports joined.

pub mod archive;
pub mod build_kernels;
pub mod cards;
pub mod cargo_build;
pub mod command;
pub mod merge_reports;
pub mod run;
#[cfg(test)]
mod testing;
pub mod workspace;

pub use workspace::{Error, SuitePackage, Workspace};
