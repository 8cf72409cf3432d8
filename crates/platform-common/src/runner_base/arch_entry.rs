//! [`ArchEntry`]: an arch crate's entry points as one value, for callers that choose the arch at
//! run time (the runner, `cargo xtask sim-probe`, `libsim_acl.so`, the shared tests).
//!
//! Each arch crate states one (`platform_a5::ENTRY`, `platform_a2a3::ENTRY`); a caller matches
//! on [`crate::Arch`] once to pick it and then reaches the arch's facts, its device runner and its
//! naive worker through it. This file never names an arch.

use std::sync::Arc;

use crate::arch::ArchFacts;
use crate::driver::Driver;

use super::config::RunnerConfig;
use super::errors::InitError;
use super::raw_worker::RawWorkerOpener;
use super::runner::DeviceRunner;

/// Builds an arch's runner as a trait object (`platform_a5::DeviceRunner::init_boxed`, ...).
pub type RunnerFactory = fn(Arc<dyn Driver>, RunnerConfig) -> Result<Box<dyn DeviceRunner>, InitError>;

/// What an arch crate hands a caller that picks the arch at run time.
#[derive(Debug, Clone, Copy)]
pub struct ArchEntry {
    /// The arch's facts: block-dim limit, op-timeout and drain codes (what the simulator of that
    /// arch reports, and what the device runner checks).
    pub facts: ArchFacts,
    /// Builds the arch's device runner.
    pub init_runner: RunnerFactory,
    /// Opens the seed's naive worker with the arch's register mapping.
    pub open_raw_worker: RawWorkerOpener,
}
