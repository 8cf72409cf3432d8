//! `DeviceRunnerBase`: the half of a device runner both arches share, and the containment chain.
//!
//! What lives where:
//! - `base`: the stream pair, memory bookkeeping, kernel registry, health, init.
//! - `buffers`: device buffers a caller keeps across runs ([`BufferId`]: allocate, copy in and
//!   out, free), each handle checked against its runner.
//! - `execute`: request checks (usage errors, before any driver call) and the run pipeline
//!   (crate-private: only `ArchRunner::run` drives it, behind the guard).
//! - `fail_fast`: step 1 of the chain: the guard and `recover_device_or_mark_unusable`.
//! - `teardown`: `finalize_common` (healthy) and the fatal teardown (abandon handles).
//! - `reset` and `probe`: step 2: force-reset attempts, each checked by a probe.
//! - `sdma`: stop-on-failure streams, the SDMA set (provisioned and warmed up at init), the SDMA
//!   probe; `sdma_copy`: a case's SDMA copy on the runner's SDMA set.
//! - `health_check`: the post-case health check (the probe's work in place, behind the guard).
//! - `finalize`: which teardown, the lease check, the report.
//! - `runner`: the `DeviceRunner` trait the runner crate sees.
//! - `arch_runner`: `ArchRunner`, the one implementation of it, with the arch's part
//!   (`ArchRegisters`: its facts and its register mapping at init or per run) supplied by the
//!   arch crates.
//! - `raw_worker`: the seed's naive worker (no guard, no reset), with the same `ArchRegisters`.
//! - `arch_entry`: `ArchEntry`, an arch crate's facts, runner and naive worker as one value.
//!
//! This module never reads the environment, never maps registers itself (the arch crates'
//! `ArchRegisters` do) and never decides about processes or pools (the runner crate does). The
//! seed's measurements and the shared tests of the arch crates are test code: they live in the
//! `cardguard-test-support` crate, not here.

mod arch_entry;
mod arch_runner;
mod base;
mod buffer_id;
mod buffer_ops;
mod buffers;
mod config;
mod errors;
mod execute;
mod fail_fast;
mod finalize;
mod health_check;
mod probe;
mod raw_worker;
mod request;
mod reset;
mod runner;
mod sdma;
mod sdma_copy;
mod teardown;

pub use arch_entry::{ArchEntry, RunnerFactory};
pub use arch_runner::{ArchRegisters, ArchRunner};
pub use base::{DeviceRunnerBase, StreamPair};
pub use buffer_id::BufferId;
pub use config::{RunnerConfig, MAX_RESET_ATTEMPTS};
pub use errors::{FinalizeError, InitError, RunError, UnusableError, UsageError, WrongLease};
pub use finalize::FinalizeReport;
pub use probe::{probe_capabilities, probe_card, ProbeFailure, PROBE_ALLOC_BYTES};
pub use raw_worker::{RawWorker, RawWorkerOpener};
pub use request::{RunArg, RunOutput, RunRequest};
pub use reset::{ProbeResult, ResetAttempt, ResetFailed, ResetReport};
pub use runner::DeviceRunner;
pub use sdma::{create_run_stream, sdma_probe, SdmaSet};
pub use teardown::Abandoned;
