//! What a device runner is built with.

use crate::driver::DeviceId;
use crate::health::HealthSubscriber;
use crate::kernel::KernelBlob;
use crate::timeouts::Timeouts;

/// Settings of one device runner. Every field is explicit: nothing is read from the environment
/// here (callers build `timeouts` with [`Timeouts::from_env`] or pass their own).
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// The card.
    pub device: DeviceId,
    /// Scheduler, op-execute and stream-sync timeouts (op-execute is set on the context at init,
    /// stream-sync bounds every stream sync and the device drain).
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
}

/// Force-reset attempts of a non-SDMA runner.
pub const MAX_RESET_ATTEMPTS: u32 = 3;
