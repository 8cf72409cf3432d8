//! Step 2 of the containment chain: force reset with a self-checked result.
//!
//! Up to [`super::RunnerConfig::max_reset_attempts`] attempts (3, or 1 for an SDMA runner), each:
//! `aclrtSetDevice` (the card made current on the calling thread, as the seed's
//! `force_reset_device` did), a drain whose result is ignored, `aclrtResetDeviceForce` with the
//! card's lease, then, when the reset returned 0, the post-reset probe (with the SDMA probe for an
//! SDMA runner). The drain is bounded by
//! [`super::RunnerConfig::pre_reset_drain`], not by the stream-sync timeout, so all attempts'
//! drains together stay below one stream-sync timeout on a faulted real card. The first confirmed
//! probe ends the loop and is the only way to clear the unusable flag. Every attempt's rc, probe
//! result and duration is recorded and returned, so the decision is observable. This file owns the
//! attempts and their records; it never decides whether a runner needs a reset (finalize does) and
//! never builds a new runner.

use std::fmt;
use std::time::{Duration, Instant};

use crate::arch::Arch;
use crate::driver::{DeviceId, Driver};
use crate::error::DriverError;
use crate::health::{acl_rc, Capability, DrainOutcome, Health, ProbeConfirmed};
use crate::kernel::KernelBlob;
use crate::lease::DeviceLease;
use crate::timeouts::{duration_ms, Timeouts};

use super::probe::probe_capabilities;

/// The post-reset probe's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeResult {
    /// The card worked: streams, memory and (when configured) the probe kernel.
    Confirmed,
    /// A probe call failed.
    Failed(DriverError),
    /// Not run, because the force reset itself failed.
    NotRun,
}

impl ProbeResult {
    /// Whether the probe confirmed the card.
    pub fn ok(self) -> bool {
        self == Self::Confirmed
    }
}

impl fmt::Display for ProbeResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Confirmed => f.write_str("probe confirmed"),
            Self::Failed(e) => write!(f, "probe failed: {e}"),
            Self::NotRun => f.write_str("probe not run"),
        }
    }
}

/// One force-reset attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetAttempt {
    /// 1-based attempt number.
    pub attempt: u32,
    /// What the bounded drain before the reset returned (logged, ignored; the `aclrtSetDevice`
    /// error instead, when the card could not be made current and the drain was skipped).
    pub drain: DrainOutcome,
    /// The ACL rc of `aclrtResetDeviceForce`: `Some(0)` on success, `Some(code)` when the call
    /// failed with an ACL code, `None` when it failed in another code space (e.g. a missing
    /// symbol: the call never reached CANN) — `reset_error` then holds the code with its space.
    pub rc: Option<i32>,
    /// The force reset's error, when it failed.
    pub reset_error: Option<DriverError>,
    /// The post-reset probe.
    pub probe: ProbeResult,
    /// How long the attempt took (drain, reset and probe).
    pub duration: Duration,
}

impl ResetAttempt {
    /// Whether this attempt's probe confirmed the card.
    pub fn confirmed(&self) -> bool {
        self.probe.ok()
    }
}

impl fmt::Display for ResetAttempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attempt {}: ", self.attempt)?;
        match self.reset_error {
            None => write!(f, "aclrtResetDeviceForce rc=0, {}", self.probe)?,
            Some(e) => write!(f, "{e}")?,
        }
        write!(f, " ({} ms)", self.duration.as_millis())
    }
}

/// A confirmed force reset: every attempt, the last one confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetReport {
    /// The card.
    pub device: DeviceId,
    /// The runner's arch.
    pub arch: Arch,
    /// The error that poisoned the runner.
    pub first_cause: Option<DriverError>,
    /// Every attempt, in order; the last is the confirmed one.
    pub attempts: Vec<ResetAttempt>,
}

/// Every force-reset attempt of finalize failed to confirm the card.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ResetFailed {
    /// The card.
    pub device: DeviceId,
    /// The runner's arch.
    pub arch: Arch,
    /// The error that poisoned the runner.
    pub first_cause: Option<DriverError>,
    /// Every attempt, in order.
    pub attempts: Vec<ResetAttempt>,
}

impl fmt::Display for ResetFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "force reset of card {} ({}) not confirmed after {} attempt(s)",
            self.device,
            self.arch,
            self.attempts.len()
        )?;
        if let Some(last) = self.attempts.last() {
            write!(f, " (last: {last})")?;
        }
        f.write_str("; the card stays unusable in this process: use a fresh process")
    }
}

/// What the attempts need to know about the runner.
pub(super) struct ResetPlan<'a> {
    pub(super) device: DeviceId,
    pub(super) arch: Arch,
    pub(super) max_attempts: u32,
    pub(super) probe_kernel: Option<&'a KernelBlob>,
    pub(super) timeouts: &'a Timeouts,
    /// The bound of each attempt's ignored drain ([`super::RunnerConfig::pre_reset_drain`]).
    pub(super) drain_bound: Duration,
    /// The runner provisioned SDMA: the post-reset probe runs the SDMA probe too.
    pub(super) sdma: bool,
}

/// Runs the attempts on `plan.device` with `lease` (already checked to be that card's), moving
/// `health` from `unusable` to `recovered` or `failed`.
pub(super) fn force_reset_until_confirmed(
    driver: &dyn Driver,
    lease: &DeviceLease,
    plan: &ResetPlan<'_>,
    health: &mut Health,
) -> Result<ResetReport, ResetFailed> {
    let device = plan.device;
    if let Err(e) = health.begin_reset() {
        tracing::error!(device, error = %e, "force reset started from an unexpected state");
    }
    let mut attempts = Vec::new();
    for attempt in 1..=plan.max_attempts {
        let start = Instant::now();
        let drain = match driver.set_device(device) {
            Err(e) => {
                tracing::debug!(device, attempt, error = %e, "card not made current: drain skipped");
                DrainOutcome::Failed(e)
            }
            Ok(()) => match driver.synchronize_device_with_timeout(duration_ms(plan.drain_bound)) {
                Ok(()) => DrainOutcome::ReportedSuccess,
                Err(e) => DrainOutcome::Failed(e),
            },
        };
        tracing::debug!(device, attempt, ?drain, "pre-reset drain (ignored)");
        let reset_error = driver.reset_device_force(lease).err();
        let mut failed_in = Capability::Compute;
        let probe = match reset_error {
            Some(_) => ProbeResult::NotRun,
            None => match probe_capabilities(driver, device, plan.probe_kernel, plan.timeouts, plan.sdma) {
                Ok(()) => ProbeResult::Confirmed,
                Err(f) => {
                    failed_in = f.capability;
                    ProbeResult::Failed(f.error)
                }
            },
        };
        let record = ResetAttempt {
            attempt,
            drain,
            rc: acl_rc(reset_error),
            reset_error,
            probe,
            duration: start.elapsed(),
        };
        let probe_for_event = match probe {
            ProbeResult::Confirmed => Some(Ok(())),
            ProbeResult::Failed(e) => Some(Err((e, failed_in))),
            ProbeResult::NotRun => None,
        };
        if let Err(e) = health.attempt(attempt, reset_error, probe_for_event, record.duration) {
            tracing::error!(device, error = %e, "reset attempt not recorded");
        }
        attempts.push(record);
        if record.confirmed() {
            if let Err(e) = health.recovered(ProbeConfirmed { attempt }) {
                tracing::error!(device, error = %e, "recovery not recorded");
            }
            return Ok(ResetReport {
                device,
                arch: plan.arch,
                first_cause: health.first_cause(),
                attempts,
            });
        }
    }
    if let Err(e) = health.reset_failed(plan.max_attempts) {
        tracing::error!(device, error = %e, "reset failure not recorded");
    }
    Err(ResetFailed {
        device,
        arch: plan.arch,
        first_cause: health.first_cause(),
        attempts,
    })
}
