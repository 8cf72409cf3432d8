//! a2a3 register mapping, once at init: the partial-good mask of usable AICores
//! (`halGetDeviceInfoByBuff(MODULE_TYPE_AICORE, INFO_TYPE_OCCUPY)`) and the register window
//! (`halMemCtl(CTRL_TYPE_ADDR_MAP)`), both behind the driver's `hal_mem_ctl`, retried on EACCES
//! (rc 13) 3 times 50 ms apart as upstream does.
//!
//! Because a2a3 maps once at init, an unguarded run on a poisoned context surfaces at device
//! malloc (507899), not at register mapping. This file owns the window, the mask and a2a3's
//! [`ArchRegisters`] (the mapping at init, the mask checked at every run, nothing mapped per run),
//! which both the device runner and the seed's naive worker use; it never decides what a failure
//! means (init returns it as the card's init error).

use std::time::Duration;

use platform_common::driver::{DeviceId, Driver, RegisterWindow};
use platform_common::error::Code;
use platform_common::runner_base::{ArchRegisters, UsageError};
use platform_common::{ArchFacts, DriverError};

use crate::facts::FACTS;

/// The card's register window and which AICores are usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardRegisters {
    window: RegisterWindow,
}

impl CardRegisters {
    /// The usable-core mask and register window of `device` (`halGetDeviceInfoByBuff`, then
    /// `halMemCtl(CTRL_TYPE_ADDR_MAP)`), retried on EACCES as upstream retries it.
    pub fn map(driver: &dyn Driver, device: DeviceId) -> Result<Self, DriverError> {
        Ok(Self {
            window: with_eacces_retry(|| driver.hal_mem_ctl(device), std::thread::sleep)?,
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

/// HAL rc 13 (EACCES): upstream saw `halMemCtl` lose a narrow driver-side window when processes
/// on paired dies bring their cards up at once, and retries it (hw-native-sys/simpler
/// src/a2a3/platform/onboard/host/host_regs.cpp): up to [`EACCES_RETRIES`] more attempts,
/// [`EACCES_BACKOFF`] apart. Any other code is final.
pub const EACCES: Code = Code::hal(13);
/// Attempts after the first on EACCES.
pub const EACCES_RETRIES: u32 = 3;
/// The pause before each retry.
pub const EACCES_BACKOFF: Duration = Duration::from_millis(50);

/// `attempt` until it returns anything but [`EACCES`] or the retries are spent, calling `pause`
/// with [`EACCES_BACKOFF`] before each retry.
pub fn with_eacces_retry<T>(
    mut attempt: impl FnMut() -> Result<T, DriverError>,
    mut pause: impl FnMut(Duration),
) -> Result<T, DriverError> {
    let mut retries = 0;
    loop {
        match attempt() {
            Err(e) if e.code == EACCES && retries < EACCES_RETRIES => {
                retries += 1;
                tracing::warn!(call = %e.call, retry = retries, of = EACCES_RETRIES, "EACCES from the register mapping; retrying");
                pause(EACCES_BACKOFF);
            }
            other => return other,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::driver::DriverCall;

    fn window() -> RegisterWindow {
        RegisterWindow {
            base: 0x1000,
            core_mask: 0xff,
        }
    }

    /// Runs `with_eacces_retry` over `codes` (one per attempt; `None` succeeds) and returns the
    /// result, the attempts made and the pauses taken.
    fn run(codes: &[Option<i32>]) -> (Result<RegisterWindow, DriverError>, usize, Vec<Duration>) {
        let mut n = 0;
        let mut pauses = Vec::new();
        let r = with_eacces_retry(
            || {
                let c = codes[n];
                n += 1;
                match c {
                    None => Ok(window()),
                    Some(raw) => Err(DriverError::new(DriverCall::HalMemCtl, Code::hal(raw))),
                }
            },
            |d| pauses.push(d),
        );
        (r, n, pauses)
    }

    #[test]
    fn eacces_is_retried_three_times_50ms_apart() {
        let (r, n, pauses) = run(&[Some(13), Some(13), None]);
        assert_eq!(r.unwrap(), window());
        assert_eq!((n, pauses), (3, vec![EACCES_BACKOFF; 2]));
        let (r, n, pauses) = run(&[Some(13), Some(13), Some(13), Some(13), None]);
        assert_eq!(r.unwrap_err().code, EACCES);
        assert_eq!((n, pauses.len()), (4, 3));
        assert_eq!(EACCES_BACKOFF, Duration::from_millis(50));
    }

    #[test]
    fn any_other_code_is_final_at_once() {
        let (r, n, pauses) = run(&[Some(0xfffe), None]);
        assert_eq!(r.unwrap_err().code, Code::hal(0xfffe));
        assert_eq!((n, pauses.len()), (1, 0));
    }
}
