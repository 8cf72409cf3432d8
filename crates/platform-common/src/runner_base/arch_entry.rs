//! [`ArchEntry`]: everything that differs between arches, as one value per arch crate, for callers
//! that choose the arch at run time (the runner, `cargo xtask`, `libsim_acl.so`, the C++ host API,
//! the shared tests).
//!
//! Each arch crate states one (`platform_a5::ENTRY`, `platform_a2a3::ENTRY`); the registry crate
//! `cardguard-arches` maps an [`crate::Arch`] to it (the one match on an arch in the workspace) and
//! callers reach the arch's facts, its register mapping (through its device runner and naive
//! worker), its drivers (`crate::drivers`: the simulated machine of the arch, the CANN driver) and
//! its CANN compiler target through it. This file never names an arch.

use std::sync::Arc;

use crate::arch::ArchFacts;
use crate::arch_hal::ArchHal;
use crate::driver::Driver;

use super::config::RunnerConfig;
use super::errors::InitError;
use super::raw_worker::RawWorkerOpener;
use super::runner::DeviceRunner;

/// Builds an arch's runner as a trait object (`platform_a5::DeviceRunner::init_boxed`, ...).
pub type RunnerFactory = fn(Arc<dyn Driver>, RunnerConfig) -> Result<Box<dyn DeviceRunner>, InitError>;

/// What an arch crate hands a caller that picks the arch at run time.
///
/// The drivers are methods (`sim_config`, `sim_config_from_env`, `onboard_driver`, in
/// `crate::drivers`, as the build's features compile them in): arch-neutral code bound to
/// [`ArchEntry::facts`].
#[derive(Debug, Clone, Copy)]
pub struct ArchEntry {
    /// The arch's facts: its name, block-dim limit, op-timeout and drain codes (what the simulator
    /// of that arch reports, and what the device runner checks).
    pub facts: ArchFacts,
    /// Builds the arch's device runner (with the arch's register mapping, `ArchRegisters`).
    pub init_runner: RunnerFactory,
    /// Opens the seed's naive worker with the arch's register mapping.
    pub open_raw_worker: RawWorkerOpener,
    /// The CANN compiler's AICore target for the arch's device binaries (`ccec
    /// --cce-aicore-arch=...`, e.g. `dav-c310-vec`).
    pub aicore_arch: &'static str,
    /// Whether the arch's AICPU-built-graph workers are created with the SDMA option (one
    /// force-reset attempt, as the seed's SDMA workers had): the built-in suite's
    /// `aicpu_build_graph` runtime follows it.
    pub sdma_workers: bool,
    /// The arch's register mapping on the CANN driver: its HAL calls and the symbols they need
    /// (`ArchEntry::onboard_driver` loads the driver with it). The simulated card ignores it.
    pub hal: ArchHal,
}
