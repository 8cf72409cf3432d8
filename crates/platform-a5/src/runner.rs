//! The a5 `DeviceRunner`: the shared `ArchRunner` with a5's registers, mapped at every run.
//!
//! init: the shared init (timeouts checked, set device, op-execute timeout logged on failure,
//! AICPU and AICore streams); a5 maps nothing there. run: the guard (no driver call when
//! unusable), the shared request checks (block dim over 36 is a usage error), the card made
//! current on the calling thread, then one `halResMap` per core ([`CoreRegisters`]; the runner
//! sends a failure through the fail-fast chain), then the shared pipeline (allocate, copy in,
//! AICore launch before AICPU, bounded syncs, copy out, free). finalize: the shared finalize
//! (force reset when unusable). This file says only when a5 maps; it never reimplements the chain.

use platform_common::runner_base::{ArchRegisters, ArchRunner, DeviceRunnerBase, RunRequest};
use platform_common::{Arch, DriverError};

use crate::registers::CoreRegisters;

/// The a5 (Ascend950) device runner of one card. [`ArchRunner::registers`] holds the addresses
/// the last run mapped, one per core.
pub type DeviceRunner = ArchRunner<CoreRegisters>;

impl ArchRegisters for CoreRegisters {
    const ARCH: Arch = Arch::A5;

    /// a5 maps nothing at init.
    fn map_at_init(_base: &DeviceRunnerBase) -> Result<Self, DriverError> {
        Ok(Self::default())
    }

    /// One `halResMap` per core the run uses, at the start of every run.
    fn prepare_run(&mut self, base: &DeviceRunnerBase, req: &RunRequest) -> Result<(), DriverError> {
        self.map(base.driver().as_ref(), base.device(), req.block_dim)
    }
}
