//! a2a3 register mapping: one `halMemCtl` at init, for the register window and the partial-good
//! mask of usable AICores.
//!
//! Because a2a3 maps once at init, an unguarded run on a poisoned context surfaces at device
//! malloc (507899), not at register mapping. This file owns the window, the mask and a2a3's
//! [`ArchRegisters`] (the mapping at init, the mask checked at every run, nothing mapped per run),
//! which both the device runner and the seed's naive worker use; it never decides what a failure
//! means (init returns it as the card's init error).

use platform_common::driver::{DeviceId, Driver, RegisterWindow};
use platform_common::runner_base::{ArchRegisters, UsageError};
use platform_common::{ArchFacts, DriverError};

use crate::facts::FACTS;

/// The card's register window and which AICores are usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardRegisters {
    window: RegisterWindow,
}

impl CardRegisters {
    /// `halMemCtl` for `device`.
    pub fn map(driver: &dyn Driver, device: DeviceId) -> Result<Self, DriverError> {
        Ok(Self {
            window: driver.hal_mem_ctl(device)?,
        })
    }

    /// The window and mask as the driver returned them.
    pub fn window(&self) -> RegisterWindow {
        self.window
    }

    /// How many AICores the partial-good mask marks usable.
    pub fn usable_cores(&self) -> u32 {
        self.window.core_mask.count_ones()
    }
}

impl ArchRegisters for CardRegisters {
    const FACTS: ArchFacts = FACTS;

    /// `halMemCtl`, once, after the streams exist.
    fn map_at_init(driver: &dyn Driver, device: DeviceId) -> Result<Self, DriverError> {
        CardRegisters::map(driver, device)
    }

    /// The partial-good mask: a block dim over its usable cores is a usage error (no driver
    /// call). a2a3 maps nothing per run, so it has no driver step.
    fn check_run(&self, device: DeviceId, block_dim: u32) -> Result<(), UsageError> {
        let usable = self.usable_cores();
        if block_dim > usable {
            return Err(UsageError::BlockDimOverUsableCores {
                block_dim,
                usable,
                device,
                mask: self.window().core_mask,
            });
        }
        Ok(())
    }
}
