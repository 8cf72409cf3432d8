//! `DeviceRunnerBase`: the half of a device runner both arches share, and the containment chain.
//!
//! What lives where:
//! - `base`: the stream pair, memory bookkeeping, kernel registry, health, init.
//! - `execute`: request checks (usage errors, before any driver call) and the run pipeline.
//! - `fail_fast`: step 1 of the chain: the guard and `recover_device_or_mark_unusable`.
//! - `teardown`: `finalize_common` (healthy) and the fatal teardown (abandon handles).
//! - `reset` and `probe`: step 2: force-reset attempts, each checked by a probe.
//! - `finalize`: which teardown, the lease check, the report.
//! - `runner`: the `DeviceRunner` trait the arch crates implement.
//! - `testkit` (feature `sim`): the seed's measurements as reusable scenarios for tests.
//!
//! This module never reads the environment, never maps registers (the arch runners do) and never
//! decides about processes or pools (the runner crate does).

mod base;
mod config;
mod errors;
mod execute;
mod fail_fast;
mod finalize;
mod probe;
mod request;
mod reset;
mod runner;
mod teardown;
#[cfg(feature = "sim")]
pub mod testkit;

pub use base::{DeviceRunnerBase, StreamPair};
pub use config::{RunnerConfig, MAX_RESET_ATTEMPTS};
pub use errors::{FinalizeError, InitError, ResetFailed, RunError, UnusableError, UsageError, WrongLease};
pub use finalize::FinalizeReport;
pub use probe::PROBE_ALLOC_BYTES;
pub use request::{RunArg, RunOutput, RunRequest};
pub use reset::{ProbeResult, ResetAttempt, ResetReport};
pub use runner::DeviceRunner;
pub use teardown::Abandoned;
