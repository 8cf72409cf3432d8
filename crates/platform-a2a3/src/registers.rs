//! a2a3 register mapping: one `halMemCtl` at init, for the register window and the partial-good
//! mask of usable AICores.
//!
//! Because a2a3 maps once at init, an unguarded run on a poisoned context surfaces at device
//! malloc (507899), not at register mapping. This file owns the window and the mask; it never
//! decides what a failure means (init returns it as the card's init error).

use platform_common::driver::{DeviceId, Driver, RegisterWindow};
use platform_common::DriverError;

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
