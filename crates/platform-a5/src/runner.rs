//! The a5 `DeviceRunner`: `DeviceRunnerBase` plus per-run register mapping.
//!
//! init: set device, op-execute timeout (logged on failure), AICPU and AICore streams. run: the
//! guard (no driver call when unusable), request checks (block dim over 36 is a usage error), one
//! `halResMap` per core, then the shared pipeline (allocate, copy in, AICore launch before AICPU,
//! bounded syncs, copy out, free). finalize: the shared finalize (force reset when unusable). This
//! file adds only what is a5's own; it never reimplements the chain.

use std::sync::Arc;

use platform_common::driver::{DeviceId, Driver};
use platform_common::health::HealthState;
use platform_common::kernel::KernelBlob;
use platform_common::lease::DeviceLease;
use platform_common::runner_base::{
    self, DeviceRunnerBase, FinalizeError, FinalizeReport, InitError, RunError, RunOutput, RunRequest,
    RunnerConfig,
};
use platform_common::{Arch, DriverError};

use crate::registers::CoreRegisters;

/// The a5 (Ascend950) device runner of one card.
#[derive(Debug)]
pub struct DeviceRunner {
    base: DeviceRunnerBase,
    registers: CoreRegisters,
}

impl DeviceRunner {
    /// The arch this runner drives.
    pub const ARCH: Arch = Arch::A5;

    /// Initialises a runner on `cfg.device` with `driver`. A failure is the card's health event
    /// (an [`InitError`] naming the call and code), not a case's.
    pub fn init(driver: Arc<dyn Driver>, cfg: RunnerConfig) -> Result<Self, InitError> {
        let base = DeviceRunnerBase::init(driver, Self::ARCH, cfg)?;
        Ok(Self {
            base,
            registers: CoreRegisters::default(),
        })
    }

    /// [`DeviceRunner::init`], boxed as the trait object the runner crate keeps.
    pub fn init_boxed(
        driver: Arc<dyn Driver>,
        cfg: RunnerConfig,
    ) -> Result<Box<dyn runner_base::DeviceRunner>, InitError> {
        Ok(Box::new(Self::init(driver, cfg)?))
    }

    /// The shared half (streams, health, config).
    pub fn base(&self) -> &DeviceRunnerBase {
        &self.base
    }

    /// The register addresses the last run mapped, one per core.
    pub fn register_addresses(&self) -> &[u64] {
        self.registers.addresses()
    }

    /// Registers a kernel blob (see [`runner_base::DeviceRunner::register_kernel`]).
    pub fn register_kernel(&mut self, blob: &KernelBlob) -> Result<(), RunError> {
        self.base.register_kernel(blob)
    }

    /// Runs one request: guard, checks, register mapping, the shared pipeline.
    pub fn run(&mut self, req: &RunRequest) -> Result<RunOutput, RunError> {
        self.base.guard()?;
        let kernel = self.base.check_request(req)?;
        let driver = self.base.driver().clone();
        if let Err(e) = self
            .registers
            .map(driver.as_ref(), self.base.device(), req.block_dim)
        {
            return Err(self.base.device_failure(e));
        }
        self.base.execute(kernel, req)
    }

    /// Ends the runner; force-resets the card when it is unusable (see
    /// [`DeviceRunnerBase::finalize`]).
    pub fn finalize(self, lease: &DeviceLease) -> Result<FinalizeReport, FinalizeError> {
        self.base.finalize(lease)
    }
}

impl runner_base::DeviceRunner for DeviceRunner {
    fn device(&self) -> DeviceId {
        self.base.device()
    }

    fn arch(&self) -> Arch {
        Self::ARCH
    }

    fn register_kernel(&mut self, blob: &KernelBlob) -> Result<(), RunError> {
        DeviceRunner::register_kernel(self, blob)
    }

    fn run(&mut self, req: &RunRequest) -> Result<RunOutput, RunError> {
        DeviceRunner::run(self, req)
    }

    fn is_unusable(&self) -> bool {
        self.base.is_unusable()
    }

    fn health(&self) -> HealthState {
        self.base.health()
    }

    fn first_cause(&self) -> Option<DriverError> {
        self.base.first_cause()
    }

    fn finalize(self: Box<Self>, lease: &DeviceLease) -> Result<FinalizeReport, FinalizeError> {
        DeviceRunner::finalize(*self, lease)
    }
}
