//! `ArchRunner`: the device runner both arch crates build, written once, with the arch's own part
//! (its register mapping, and whether that happens at init or at every run) plugged in through
//! [`ArchRegisters`].
//!
//! init: the shared init ([`DeviceRunnerBase::init`]), then the arch's mapping at init (a failure
//! releases the base and is the card's [`InitError`]). run: the guard (no driver call when
//! unusable), the shared request checks (the arch's block-dim limit, the kernel, its arguments)
//! and the arch's checks ([`ArchRegisters::check_run`]), all before any driver call; then the
//! card is made current on the calling thread (`aclrtSetDevice`), the arch's driver step
//! ([`ArchRegisters::map_for_run`]) and the shared pipeline. finalize: the shared finalize.
//! This file never maps registers itself; it sends every driver error of the arch's step through
//! the fail-fast chain, so an arch crate cannot skip it.

use std::fmt;
use std::sync::Arc;

use crate::arch::{Arch, ArchFacts};
use crate::driver::{DeviceId, Driver};
use crate::error::DriverError;
use crate::health::HealthState;
use crate::kernel::KernelBlob;
use crate::lease::DeviceLease;

use super::base::DeviceRunnerBase;
use super::buffers::BufferId;
use super::config::RunnerConfig;
use super::errors::{FinalizeError, InitError, RunError, UsageError};
use super::finalize::FinalizeReport;
use super::request::{RunOutput, RunRequest};
use super::runner::DeviceRunner;

/// What an arch adds to [`DeviceRunnerBase`]: its facts and its register state, mapped at init,
/// at every run, or both. Implemented by the arch crates (a5: one `halResMap` per core at every
/// run; a2a3: `halMemCtl` at init, then the partial-good mask checked at every run), and used by
/// both the device runner ([`ArchRunner`]) and the seed's naive worker
/// ([`RawWorker`](super::RawWorker)), so the difference between the arches is written once, in
/// the arch crate.
pub trait ArchRegisters: Sized + Send + fmt::Debug + 'static {
    /// The arch's facts (its block-dim limit and codes), as the arch crate states them.
    const FACTS: ArchFacts;

    /// The arch's mapping step of init, after the streams exist. A driver error ends the init.
    fn map_at_init(driver: &dyn Driver, device: DeviceId) -> Result<Self, DriverError>;

    /// The arch's checks of a run of `block_dim` blocks on `device`, admitted by the guard and
    /// the shared request checks. No driver call may be made here: a refused request leaves the
    /// runner healthy and the card untouched.
    fn check_run(&self, _device: DeviceId, _block_dim: u32) -> Result<(), UsageError> {
        Ok(())
    }

    /// The arch's mapping step of a checked run of `block_dim` blocks, after the card was made
    /// current and before the shared pipeline. A driver error is returned as is: the runner sends
    /// it through the fail-fast chain.
    fn map_for_run(
        &mut self,
        _driver: &dyn Driver,
        _device: DeviceId,
        _block_dim: u32,
    ) -> Result<(), DriverError> {
        Ok(())
    }
}

/// The device runner of one card of the arch `R` belongs to: the shared half plus `R`.
///
/// The arch crates name it: `platform_a5::DeviceRunner` is `ArchRunner<CoreRegisters>`,
/// `platform_a2a3::DeviceRunner` is `ArchRunner<CardRegisters>`. See [`DeviceRunner`] for the
/// contract.
#[derive(Debug)]
pub struct ArchRunner<R: ArchRegisters> {
    base: DeviceRunnerBase,
    registers: R,
}

impl<R: ArchRegisters> ArchRunner<R> {
    /// The arch this runner drives.
    pub const ARCH: Arch = R::FACTS.arch;

    /// The arch's facts (from its arch crate).
    pub const FACTS: ArchFacts = R::FACTS;

    /// Initialises a runner on `cfg.device` with `driver`: the shared init, then the arch's
    /// mapping at init. A failure is the card's health event (an [`InitError`] naming the call
    /// and code), not a case's.
    pub fn init(driver: Arc<dyn Driver>, cfg: RunnerConfig) -> Result<Self, InitError> {
        let base = DeviceRunnerBase::init(driver, R::FACTS, cfg)?;
        match R::map_at_init(base.driver().as_ref(), base.device()) {
            Ok(registers) => Ok(Self { base, registers }),
            Err(e) => Err(base.abort_init(e)),
        }
    }

    /// [`ArchRunner::init`], boxed as the trait object the runner crate keeps.
    pub fn init_boxed(
        driver: Arc<dyn Driver>,
        cfg: RunnerConfig,
    ) -> Result<Box<dyn DeviceRunner>, InitError> {
        Ok(Box::new(Self::init(driver, cfg)?))
    }

    /// The shared half (streams, health, config).
    pub fn base(&self) -> &DeviceRunnerBase {
        &self.base
    }

    /// The arch's register state (what the last mapping returned).
    pub fn registers(&self) -> &R {
        &self.registers
    }

    /// Registers a kernel blob (see [`DeviceRunner::register_kernel`]).
    pub fn register_kernel(&mut self, blob: &KernelBlob) -> Result<(), RunError> {
        self.base.register_kernel(blob)
    }

    /// Runs one request: guard, shared and arch checks (no driver call yet), the card made
    /// current on this thread, the arch's driver step, the shared pipeline.
    pub fn run(&mut self, req: &RunRequest) -> Result<RunOutput, RunError> {
        self.base.guard()?;
        let kernel = self.base.check_request(req)?;
        self.registers.check_run(self.base.device(), req.block_dim)?;
        self.base.make_current()?;
        let (driver, device) = (self.base.driver().as_ref(), self.base.device());
        if let Err(e) = self.registers.map_for_run(driver, device, req.block_dim) {
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

impl<R: ArchRegisters> DeviceRunner for ArchRunner<R> {
    fn device(&self) -> DeviceId {
        self.base.device()
    }

    fn arch(&self) -> Arch {
        Self::ARCH
    }

    fn base(&self) -> &DeviceRunnerBase {
        &self.base
    }

    fn register_kernel(&mut self, blob: &KernelBlob) -> Result<(), RunError> {
        ArchRunner::register_kernel(self, blob)
    }

    fn run(&mut self, req: &RunRequest) -> Result<RunOutput, RunError> {
        ArchRunner::run(self, req)
    }

    fn alloc_buffer(&mut self, bytes: usize) -> Result<BufferId, RunError> {
        self.base.alloc_buffer(bytes)
    }

    fn free_buffer(&mut self, id: BufferId) -> Result<(), RunError> {
        self.base.free_buffer(id)
    }

    fn write_buffer(&mut self, id: BufferId, offset: usize, bytes: &[u8]) -> Result<(), RunError> {
        self.base.write_buffer(id, offset, bytes)
    }

    fn read_buffer(&mut self, id: BufferId, offset: usize, len: usize) -> Result<Vec<u8>, RunError> {
        self.base.read_buffer(id, offset, len)
    }

    fn sdma_copy(&mut self, dst: BufferId, src: BufferId, bytes: usize) -> Result<(), RunError> {
        self.base.sdma_copy(dst, src, bytes)
    }

    fn health_check(&mut self) -> Result<(), RunError> {
        self.base.health_check()
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
        ArchRunner::finalize(*self, lease)
    }
}
