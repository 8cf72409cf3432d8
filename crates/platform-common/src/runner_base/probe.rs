//! The post-reset probe: the only thing that may clear a runner's unusable flag.
//!
//! After a force reset returned 0, the probe opens the card again and proves it works: create and
//! destroy a stream, allocate and free 64 bytes, and when a probe kernel is configured (the `noop`
//! on the simulator) register and run it with [`LaunchOrigin::Internal`] through the same AICore
//! then AICPU launch and bounded syncs as a case. For a card whose worker (or suite) uses SDMA it
//! also runs the SDMA probe ([`super::sdma_probe`]: a compute-only probe passes a card whose SDMA
//! engine is wedged, hw-native-sys/pypto-lib #1240). It ends with a soft reset that releases the
//! probe's context, so the next runner's init starts from nothing. It never force-resets.

use crate::driver::{AicpuTask, DeviceId, Driver, KernelArg, LaunchOrigin};
use crate::error::DriverError;
use crate::health::Capability;
use crate::kernel::KernelBlob;
use crate::timeouts::Timeouts;

use super::sdma::{create_run_stream, sdma_probe};

/// Bytes the probe allocates.
pub const PROBE_ALLOC_BYTES: usize = 64;

/// Probes `device`; with `sdma`, the SDMA probe too. `Ok` means confirmed. Besides the
/// post-reset probe of finalize, a lane's preflight (a card whose health record said
/// quarantined) runs it after building and closing a worker.
pub fn probe_card(
    driver: &dyn Driver,
    device: DeviceId,
    kernel: Option<&KernelBlob>,
    timeouts: &Timeouts,
    sdma: bool,
) -> Result<(), DriverError> {
    probe_capabilities(driver, device, kernel, timeouts, sdma).map_err(|f| f.error)
}

/// A failed probe: the driver error and the capability it was met in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{capability} probe failed: {error}")]
pub struct ProbeFailure {
    /// Compute (stream, memory, the probe kernel, the closing soft reset) or SDMA (the SDMA probe).
    pub capability: Capability,
    /// The failing call.
    pub error: DriverError,
}

/// [`probe_card`], saying which capability a failure was met in.
pub fn probe_capabilities(
    driver: &dyn Driver,
    device: DeviceId,
    kernel: Option<&KernelBlob>,
    timeouts: &Timeouts,
    sdma: bool,
) -> Result<(), ProbeFailure> {
    let compute = |error| ProbeFailure {
        capability: Capability::Compute,
        error,
    };
    driver.set_device(device).map_err(compute)?;
    let stream = create_run_stream(driver).map_err(compute)?;
    driver.destroy_stream(stream).map_err(compute)?;
    let ptr = driver.malloc(PROBE_ALLOC_BYTES).map_err(compute)?;
    driver.free(ptr).map_err(compute)?;
    if let Some(blob) = kernel {
        run_probe_kernel(driver, blob, timeouts).map_err(compute)?;
    }
    if sdma {
        sdma_probe(driver, timeouts).map_err(|error| ProbeFailure {
            capability: Capability::Sdma,
            error,
        })?;
    }
    driver.reset_device(device).map_err(compute)
}

fn run_probe_kernel(driver: &dyn Driver, blob: &KernelBlob, timeouts: &Timeouts) -> Result<(), DriverError> {
    let aicpu = create_run_stream(driver)?;
    let aicore = create_run_stream(driver)?;
    let handle = driver.register_kernel(blob)?;
    // The probe kernel takes scalars only (the noop ignores them).
    let args = vec![KernelArg::Scalar(0); blob.meta().num_args as usize];
    driver.launch_aicore(aicore, handle, 1, &args, LaunchOrigin::Internal)?;
    driver.launch_aicpu(aicpu, AicpuTask { aicore })?;
    let ms = timeouts.stream_sync_ms();
    driver.synchronize_stream_with_timeout(aicpu, ms)?;
    driver.synchronize_stream_with_timeout(aicore, ms)?;
    driver.destroy_stream(aicore)?;
    driver.destroy_stream(aicpu)
}
