//! Finalize: the end of a runner's life, and the only place a card is force-reset.
//!
//! A healthy runner gets `finalize_common`. An unusable one gets the fatal teardown, then the
//! force-reset attempts ([`super::reset`]). Either way finalize needs the card's [`DeviceLease`]
//! (by type: no lease, no call) and refuses a lease of another card with a typed error before
//! touching the device.

use crate::driver::DeviceId;
use crate::error::DriverError;
use crate::lease::DeviceLease;

use super::base::DeviceRunnerBase;
use super::errors::{FinalizeError, WrongLease};
use super::reset::{force_reset_until_confirmed, ResetPlan, ResetReport};
use super::teardown::Abandoned;

/// What finalize did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalizeReport {
    /// The card.
    pub device: DeviceId,
    /// Errors of the healthy teardown (logged, not fatal). Empty on the reset path.
    pub teardown_errors: Vec<DriverError>,
    /// What the fatal teardown abandoned (all zero on the healthy path).
    pub abandoned: Abandoned,
    /// The force reset, when the runner was unusable; `None` for a healthy runner.
    pub reset: Option<ResetReport>,
}

impl DeviceRunnerBase {
    /// Tears the runner down. Healthy: `finalize_common`. Unusable: fatal teardown, then up to
    /// 3 force-reset attempts (1 for an SDMA runner) each confirmed or not by a probe.
    ///
    /// `lease` must be the runner's card's. Another card's lease gives
    /// [`FinalizeError::WrongLease`] and no force reset: a healthy runner is still torn down
    /// normally, an unusable one's handles are abandoned and its card stays poisoned.
    pub fn finalize(mut self, lease: &DeviceLease) -> Result<FinalizeReport, FinalizeError> {
        let device = self.cfg.device;
        if lease.card() != device {
            let err = WrongLease {
                runner_device: device,
                lease_card: lease.card(),
            };
            tracing::error!(device, lease_card = lease.card(), "{err}");
            if self.health.is_unusable() {
                self.fatal_teardown();
            } else {
                let _ = self.finalize_common();
            }
            return Err(FinalizeError::WrongLease(err));
        }
        if !self.health.is_unusable() {
            let teardown_errors = self.finalize_common();
            return Ok(FinalizeReport {
                device,
                teardown_errors,
                abandoned: Abandoned::default(),
                reset: None,
            });
        }
        let abandoned = self.fatal_teardown();
        let plan = ResetPlan {
            device,
            arch: self.facts.arch,
            max_attempts: self.cfg.max_reset_attempts(),
            probe_kernel: self.cfg.probe_kernel.as_ref(),
            timeouts: &self.cfg.timeouts,
            drain_bound: self.cfg.pre_reset_drain(),
        };
        let driver = self.driver.clone();
        let reset = force_reset_until_confirmed(driver.as_ref(), lease, &plan, &mut self.health)
            .map_err(FinalizeError::ResetFailed)?;
        Ok(FinalizeReport {
            device,
            teardown_errors: Vec::new(),
            abandoned,
            reset: Some(reset),
        })
    }
}
