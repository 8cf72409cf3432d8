//! What a device runner is built with.

use std::time::Duration;

use crate::driver::DeviceId;
use crate::health::HealthSubscriber;
use crate::kernel::KernelBlob;
use crate::timeouts::Timeouts;

/// Settings of one device runner. Every field is explicit: nothing is read from the environment
/// here (callers build `timeouts` with [`Timeouts::from_env`] or pass their own). The timeouts are
/// checked when the runner is initialised, against the rules of its driver's profile
/// ([`crate::timeouts::TimeoutProfile::for_driver`]).
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// The card.
    pub device: DeviceId,
    /// Scheduler, op-execute and stream-sync timeouts (op-execute is set on the context at init,
    /// stream-sync bounds every stream sync and the fail-fast device drain; the ignored drain
    /// before each force-reset attempt has a shorter bound, [`RunnerConfig::pre_reset_drain`]).
    pub timeouts: Timeouts,
    /// A runner created with the SDMA option (a2a3 SDMA workers): finalize makes one force-reset
    /// attempt instead of three.
    pub sdma: bool,
    /// A kernel the post-reset probe registers and runs (the `noop` blob on the simulator), with
    /// [`crate::driver::LaunchOrigin::Internal`] so fault plans never count it. `None` on real
    /// cards until their kernels exist: the probe then checks streams and memory only.
    pub probe_kernel: Option<KernelBlob>,
    /// Where health events go (besides `tracing`).
    pub events: Option<HealthSubscriber>,
}

impl RunnerConfig {
    /// A runner on `device` with `timeouts`, no SDMA, no probe kernel, no subscriber.
    pub fn new(device: DeviceId, timeouts: Timeouts) -> Self {
        Self {
            device,
            timeouts,
            sdma: false,
            probe_kernel: None,
            events: None,
        }
    }

    /// How many force-reset attempts finalize makes: 1 for an SDMA runner, else 3.
    pub fn max_reset_attempts(&self) -> u32 {
        if self.sdma {
            1
        } else {
            MAX_RESET_ATTEMPTS
        }
    }

    /// The bound of the ignored drain before each force-reset attempt:
    /// [`Timeouts::pre_reset_drain`] for [`RunnerConfig::max_reset_attempts`] (the scheduler
    /// timeout, capped so that every attempt's drain together stays below one stream-sync
    /// timeout). The fail-fast drain keeps the stream-sync bound.
    pub fn pre_reset_drain(&self) -> Duration {
        self.timeouts.pre_reset_drain(self.max_reset_attempts())
    }

    /// The most finalize can spend in drains: one [`RunnerConfig::pre_reset_drain`] per attempt.
    pub fn finalize_drain_budget(&self) -> Duration {
        self.pre_reset_drain() * self.max_reset_attempts()
    }
}

/// Force-reset attempts of a non-SDMA runner.
pub const MAX_RESET_ATTEMPTS: u32 = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeouts::TimeoutProfile;

    #[test]
    fn finalize_drain_budget_stays_below_one_stream_sync() {
        let tight = Timeouts {
            scheduler: Duration::from_millis(3000),
            op_execute: Duration::from_millis(3500),
            stream_sync: Duration::from_millis(4501),
        };
        tight.validate(TimeoutProfile::Real).unwrap();
        let mut checked = 0;
        for t in [
            Timeouts::defaults(TimeoutProfile::Sim),
            Timeouts::defaults(TimeoutProfile::Real),
            tight,
        ] {
            for sdma in [false, true] {
                let mut cfg = RunnerConfig::new(0, t);
                cfg.sdma = sdma;
                assert!(
                    cfg.finalize_drain_budget() < t.stream_sync,
                    "{t:?} sdma={sdma}: {:?}",
                    cfg.finalize_drain_budget()
                );
                assert!(cfg.pre_reset_drain() <= t.scheduler);
                checked += 1;
            }
        }
        assert_eq!(checked, 6);
        // Bounding each attempt by the stream-sync timeout, as before, would have allowed three.
        let real = RunnerConfig::new(0, Timeouts::defaults(TimeoutProfile::Real));
        assert_eq!(real.max_reset_attempts(), 3);
        assert_eq!(real.finalize_drain_budget(), Duration::from_millis(4500));
    }
}
