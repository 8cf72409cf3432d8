//! The `DeviceRunner` trait: what the runner crate sees of an arch's device runner.

use std::fmt;

use crate::arch::Arch;
use crate::driver::DeviceId;
use crate::error::DriverError;
use crate::health::HealthState;
use crate::kernel::KernelBlob;
use crate::lease::DeviceLease;

use super::base::DeviceRunnerBase;
use super::buffers::BufferId;
use super::errors::{FinalizeError, RunError};
use super::finalize::FinalizeReport;
use super::request::{RunOutput, RunRequest};

/// One initialised device runner on one card (a5 or a2a3), built by the arch crate's
/// `DeviceRunner::init(driver, cfg)` (an [`ArchRunner`](super::ArchRunner)).
///
/// Contract:
/// - [`DeviceRunner::run`] and [`DeviceRunner::register_kernel`] are refused at once, with
///   [`RunError::Unusable`] and no driver call, once the runner is marked unusable. Any driver
///   error during a run marks it unusable (after a bounded drain whose result is not trusted)
///   and is returned as [`RunError::Device`]. Invalid requests are [`RunError::Usage`], found
///   before any driver call. A wrong result is not an error here: comparing against a golden is
///   the caller's job, and never marks the runner unusable.
/// - Buffers ([`DeviceRunner::alloc_buffer`] and the copies and frees of a [`BufferId`]) follow
///   the same rules: admitted by the guard, a handle that is not a live buffer of this runner
///   (freed, or a closed runner's) is [`RunError::Usage`] with no driver call, and a driver error
///   marks the runner unusable. A buffer passes to runs as [`RunArg::BufferIn`] /
///   [`RunArg::BufferOut`](super::RunArg) and stays allocated until freed or finalize.
/// - [`DeviceRunner::sdma_copy`] (a runner created with the SDMA option) follows the same rules.
/// - [`DeviceRunner::health_check`] follows the same rules as a run: a failed check marks the
///   runner unusable.
/// - [`DeviceRunner::finalize`] ends the runner. It needs the card's lease; on an unusable
///   runner it force-resets the card and returns every attempt, or a typed error holding them.
pub trait DeviceRunner: Send + fmt::Debug {
    /// The card.
    fn device(&self) -> DeviceId;

    /// The arch.
    fn arch(&self) -> Arch;

    /// The shared half (streams, health, config), read-only.
    fn base(&self) -> &DeviceRunnerBase;

    /// Registers a kernel blob under its name (its metadata's `name`).
    fn register_kernel(&mut self, blob: &KernelBlob) -> Result<(), RunError>;

    /// Runs one request.
    fn run(&mut self, req: &RunRequest) -> Result<RunOutput, RunError>;

    /// Allocates a zeroed device buffer of `bytes` bytes (at least 1) that outlives runs.
    fn alloc_buffer(&mut self, bytes: usize) -> Result<BufferId, RunError>;

    /// Frees a buffer of this runner.
    fn free_buffer(&mut self, id: BufferId) -> Result<(), RunError>;

    /// Copies `bytes` into buffer `id` from byte `offset` on.
    fn write_buffer(&mut self, id: BufferId, offset: usize, bytes: &[u8]) -> Result<(), RunError>;

    /// Copies `len` bytes of buffer `id` from byte `offset` on back to the host.
    fn read_buffer(&mut self, id: BufferId, offset: usize, len: usize) -> Result<Vec<u8>, RunError>;

    /// A device-to-device SDMA copy of `bytes` bytes from buffer `src` to buffer `dst` (both at
    /// offset 0), synced; only on a runner created with the SDMA option
    /// ([`super::UsageError::NoSdma`] otherwise). The same rules as a run: a driver error marks
    /// the runner unusable.
    fn sdma_copy(&mut self, dst: BufferId, src: BufferId, bytes: usize) -> Result<(), RunError>;

    /// The post-case health check of the card, in place: a stream, a 64-byte allocation and,
    /// when a probe kernel is configured, one internal launch of it. Admitted by the guard (an
    /// unusable runner is refused with no driver call); a driver error marks the runner unusable
    /// and is [`RunError::Device`].
    fn health_check(&mut self) -> Result<(), RunError>;

    /// Whether runs are refused (the runner is marked unusable).
    fn is_unusable(&self) -> bool;

    /// The health state.
    fn health(&self) -> HealthState;

    /// The error that first marked the runner unusable.
    fn first_cause(&self) -> Option<DriverError>;

    /// Tears the runner down; force-resets the card when the runner is unusable.
    fn finalize(self: Box<Self>, lease: &DeviceLease) -> Result<FinalizeReport, FinalizeError>;
}
