//! a5 register mapping: one `halResMap` per AICore a run uses, at the start of every run.
//!
//! This is why an a5 run on a poisoned context surfaces `halResMap` rc=62 before anything else
//! (the seed's STEP2). This file owns the mapping, the addresses it returned, and a5's
//! [`ArchRegisters`] (nothing at init, the mapping at every run), which both the device runner
//! and the seed's naive worker use; it never decides what a mapping failure means (the runner
//! sends it through the fail-fast chain).

use platform_common::driver::{DeviceId, Driver};
use platform_common::runner_base::ArchRegisters;
use platform_common::{ArchFacts, DriverError};

use crate::facts::FACTS;

/// The AICore register addresses mapped for the current run, core by core.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoreRegisters {
    addresses: Vec<u64>,
}

impl CoreRegisters {
    /// Maps cores `0..block_dim` of `device`, replacing the previous run's addresses. Stops at the
    /// first failing core.
    pub fn map(&mut self, driver: &dyn Driver, device: DeviceId, block_dim: u32) -> Result<(), DriverError> {
        self.addresses.clear();
        for core in 0..block_dim {
            let addr = driver.hal_res_map(device, core)?;
            self.addresses.push(addr);
        }
        Ok(())
    }

    /// The mapped address of each core, in core order.
    pub fn addresses(&self) -> &[u64] {
        &self.addresses
    }
}

impl ArchRegisters for CoreRegisters {
    const FACTS: ArchFacts = FACTS;

    /// a5 maps nothing at init.
    fn map_at_init(_driver: &dyn Driver, _device: DeviceId) -> Result<Self, DriverError> {
        Ok(Self::default())
    }

    /// One `halResMap` per core the run uses, at the start of every run.
    fn map_for_run(
        &mut self,
        driver: &dyn Driver,
        device: DeviceId,
        block_dim: u32,
    ) -> Result<(), DriverError> {
        self.map(driver, device, block_dim)
    }
}
