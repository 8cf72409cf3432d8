//! Step 1 of the containment chain: fail fast.
//!
//! Any launch or sync error (and any other driver error during a run: on a sticky context they
//! are the cascade's confusing codes) goes through
//! [`DeviceRunnerBase::recover_device_or_mark_unusable`]: a bounded device drain whose result is
//! logged and never trusted, then the runner is marked unusable, always. From then on
//! [`DeviceRunnerBase::guard`] refuses every admission with a typed [`UnusableError`] before any
//! driver call. The chain is crate-private: the runner's own pipeline and the arch hook's
//! driver errors ([`ArchRunner`](super::ArchRunner) routes them) are its only callers. This file
//! never resets the card; finalize does.

use crate::error::DriverError;
use crate::health::DrainOutcome;

use super::base::DeviceRunnerBase;
use super::errors::{RunError, UnusableError};

impl DeviceRunnerBase {
    /// Admits a run or registration, or refuses it at once (no driver call at all) when the
    /// runner is marked unusable.
    pub fn guard(&self) -> Result<(), RunError> {
        match self.health.refusal_cause() {
            None => Ok(()),
            Some(first_cause) => Err(RunError::Unusable(UnusableError {
                device: self.cfg.device,
                arch: self.facts.arch,
                first_cause,
            })),
        }
    }

    /// The fail-fast chain for `cause`: bounded drain (logged, never trusted), then mark the
    /// runner unusable, always. The first cause is kept; a runner already out of `healthy` keeps
    /// its state (logged).
    pub(crate) fn recover_device_or_mark_unusable(&mut self, cause: DriverError) {
        let device = self.cfg.device;
        if let Err(e) = self.health.fault(cause) {
            tracing::warn!(device, %cause, error = %e, "fault on a runner already out of healthy");
            return;
        }
        let drain = match self
            .driver
            .synchronize_device_with_timeout(self.cfg.timeouts.stream_sync_ms())
        {
            Ok(()) => {
                tracing::warn!(device, %cause, "bounded device drain reported success: not trusted");
                DrainOutcome::ReportedSuccess
            }
            Err(e) => {
                tracing::info!(device, %cause, drain = %e, "bounded device drain failed (expected on a poisoned card)");
                DrainOutcome::Failed(e)
            }
        };
        if let Err(e) = self.health.mark_unusable(drain) {
            tracing::error!(device, error = %e, "could not mark the runner unusable");
        }
    }

    /// Runs the chain for a driver error seen during a run and returns the error the caller
    /// sees ([`RunError::Device`]).
    pub(crate) fn device_failure(&mut self, error: DriverError) -> RunError {
        self.recover_device_or_mark_unusable(error);
        RunError::Device(error)
    }
}
