//! The post-case health check: a cheap proof, on the runner's own context, that the card still
//! works after a case whose own calls all succeeded (a case can leave a context sticky without
//! any of its calls failing: an asynchronous exception reported after the sync).
//!
//! The check is the post-reset probe's work done in place, with no reset and no new context:
//! create and destroy a stream, allocate and free [`PROBE_ALLOC_BYTES`], and, when a probe kernel
//! is configured (the `noop` on the simulator), run it once on the runner's stream pair with
//! [`LaunchOrigin::Internal`] (registered once per runner), and for a runner created with the SDMA
//! option the SDMA probe on its own SDMA set (a 64-byte copy). It is admitted by the guard like a
//! run, and a driver error goes through the fail-fast chain: a failed check marks the runner
//! unusable. This file never resets the card (finalize does) and never decides who is blamed
//! (the lane does).

use crate::driver::{AicpuTask, KernelArg, LaunchOrigin, SdmaOrigin};
use crate::error::DriverError;

use super::base::DeviceRunnerBase;
use super::errors::RunError;
use super::probe::PROBE_ALLOC_BYTES;

impl DeviceRunnerBase {
    /// Checks the runner's card in place (see the module docs). Refused with no driver call when
    /// the runner is unusable; a driver error marks it unusable and is [`RunError::Device`].
    pub fn health_check(&mut self) -> Result<(), RunError> {
        self.guard()?;
        self.make_current()?;
        match self.check_in_place() {
            Ok(()) => Ok(()),
            Err(e) => Err(self.device_failure(e)),
        }
    }

    fn check_in_place(&mut self) -> Result<(), DriverError> {
        let driver = self.driver.clone();
        let stream = driver.create_stream()?;
        driver.destroy_stream(stream)?;
        let ptr = driver.malloc(PROBE_ALLOC_BYTES)?;
        driver.free(ptr)?;
        let Some(blob) = self.cfg.probe_kernel.as_ref() else {
            return self.check_sdma();
        };
        let handle = match self.health_kernel {
            Some(h) => h,
            None => {
                let h = driver.register_kernel(blob)?;
                self.health_kernel = Some(h);
                h
            }
        };
        // The probe kernel takes scalars only (the noop ignores them).
        let args = vec![KernelArg::Scalar(0); blob.meta().num_args as usize];
        let streams = self.streams;
        driver.launch_aicore(streams.aicore, handle, 1, &args, LaunchOrigin::Internal)?;
        driver.launch_aicpu(
            streams.aicpu,
            AicpuTask {
                aicore: streams.aicore,
            },
        )?;
        let ms = self.cfg.timeouts.stream_sync_ms();
        driver.synchronize_stream_with_timeout(streams.aicpu, ms)?;
        driver.synchronize_stream_with_timeout(streams.aicore, ms)?;
        self.check_sdma()
    }

    /// The SDMA probe on the runner's own SDMA set, when it has one (a compute-only check passes
    /// a card whose SDMA engine is wedged: hw-native-sys/pypto-lib #1240).
    fn check_sdma(&self) -> Result<(), DriverError> {
        match self.sdma {
            Some(set) => set.copy(self.driver.as_ref(), SdmaOrigin::Probe, &self.cfg.timeouts),
            None => Ok(()),
        }
    }
}
