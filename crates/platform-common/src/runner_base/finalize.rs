//! Finalize: the end of a runner's life, and the only place a card is force-reset.
//!
//! A healthy runner gets `finalize_common`. An unusable one gets the fatal teardown, then the
//! force-reset attempts ([`super::reset`]). Either way finalize needs the card's [`DeviceLease`]
//! (by type: no lease, no call) and refuses a lease of another card with a typed error before
//! touching the device. An SDMA-provisioned card waits the handoff window before its one attempt
//! and gets `aclFinalize` only after a confirmed reset (hw-native-sys/simpler
//! `src/a2a3/platform/onboard/host/device_runner.cpp`, `finalize`; #1664).

use std::time::Duration;

use crate::driver::DeviceId;
use crate::error::DriverError;
use crate::lease::DeviceLease;
use crate::sdma::handoff_wait;
use crate::timeouts::TimeoutProfile;

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
    /// The wait before the one force reset of an SDMA-provisioned card:
    /// [`crate::sdma::handoff_wait`] of the op-execute timeout the runtime applied, in the
    /// driver's scale; recorded as the `sdma_handoff_wait` health event, then slept.
    fn sdma_handoff_wait(&mut self) {
        let profile = TimeoutProfile::for_driver(self.driver.info().kind);
        let applied = Duration::from_micros(
            self.driver
                .applied_op_execute_us(self.cfg.timeouts.op_execute_us()),
        );
        let wait = handoff_wait(profile, applied);
        if let Err(e) = self.health.sdma_handoff_wait(wait, applied) {
            tracing::error!(device = self.cfg.device, error = %e, "SDMA handoff wait not recorded");
        }
        std::thread::sleep(wait);
    }

    /// Tears the runner down. Healthy: `finalize_common`. Unusable: fatal teardown, then up to
    /// 3 force-reset attempts (1 for an SDMA runner, after its handoff wait, and `aclFinalize`
    /// only when that attempt confirmed) each confirmed or not by a probe.
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
        let sdma = self.sdma.is_some();
        let abandoned = self.fatal_teardown();
        if sdma {
            self.sdma_handoff_wait();
        }
        let plan = ResetPlan {
            device,
            arch: self.facts.arch,
            max_attempts: self.cfg.max_reset_attempts(),
            probe_kernel: self.cfg.probe_kernel.as_ref(),
            timeouts: &self.cfg.timeouts,
            drain_bound: self.cfg.pre_reset_drain(),
            sdma,
        };
        let driver = self.driver.clone();
        let reset = force_reset_until_confirmed(driver.as_ref(), lease, &plan, &mut self.health);
        if sdma {
            // aclFinalize only after a confirmed reset: after an unconfirmed one it walks the
            // poisoned CP-process streams into the remote-event timeout (simpler `finalize`).
            match &reset {
                Ok(_) => {
                    if let Err(e) = driver.finalize() {
                        tracing::warn!(device, error = %e, "aclFinalize failed after the confirmed reset");
                    }
                }
                Err(_) => tracing::warn!(
                    device,
                    "SDMA card: aclFinalize skipped, the force reset did not confirm"
                ),
            }
        }
        let reset = reset.map_err(FinalizeError::ResetFailed)?;
        Ok(FinalizeReport {
            device,
            teardown_errors: Vec::new(),
            abandoned,
            reset: Some(reset),
        })
    }
}
