//! `DeviceRunnerBase`: the half of a device runner both arches share, and the containment chain.
//!
//! What lives where:
//! - `base`: the stream pair, memory bookkeeping, kernel registry, health, init.
//! - `execute`: request checks (usage errors, before any driver call) and the run pipeline
//!   (crate-private: only `ArchRunner::run` drives it, behind the guard).
//! - `fail_fast`: step 1 of the chain: the guard and `recover_device_or_mark_unusable`.
//! - `teardown`: `finalize_common` (healthy) and the fatal teardown (abandon handles).
//! - `reset` and `probe`: step 2: force-reset attempts, each checked by a probe.
//! - `finalize`: which teardown, the lease check, the report.
//! - `runner`: the `DeviceRunner` trait the runner crate sees.
//! - `arch_runner`: `ArchRunner`, the one implementation of it, with the arch's part
//!   (`ArchRegisters`: register mapping at init or per run) supplied by the arch crates.
//! - `drivers`: the drivers an arch crate's build can hand its runner (gated by the arch crate).
//! - `testkit` (feature `sim`): the seed's measurements as reusable scenarios for tests.
//!
//! This module never reads the environment (the exceptions are test support and expand or run
//! elsewhere: `arch_drivers!` writes the arch crates' `onboard_driver`, which finds the CANN
//! libraries as `--platform onboard` does, and `testkit::suites::onboard` reads the card number of
//! the hardware tests), never maps registers (the arch runners do) and never decides about
//! processes or pools (the runner crate does).

mod arch_runner;
mod base;
mod config;
pub mod drivers;
mod errors;
mod execute;
mod fail_fast;
mod finalize;
mod probe;
mod raw_worker;
mod request;
mod reset;
mod runner;
mod teardown;
#[cfg(feature = "sim")]
pub mod testkit;

pub use arch_runner::{ArchRegisters, ArchRunner};
pub use base::{DeviceRunnerBase, StreamPair};
pub use config::{RunnerConfig, MAX_RESET_ATTEMPTS};
pub use errors::{FinalizeError, InitError, RunError, UnusableError, UsageError, WrongLease};
pub use finalize::FinalizeReport;
pub use probe::PROBE_ALLOC_BYTES;
pub use raw_worker::RawWorker;
pub use request::{RunArg, RunOutput, RunRequest};
pub use reset::{ProbeResult, ResetAttempt, ResetFailed, ResetReport};
pub use runner::DeviceRunner;
pub use teardown::Abandoned;
