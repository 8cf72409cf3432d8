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
    driver.set_device(device)?;
    let stream = create_run_stream(driver)?;
    driver.destroy_stream(stream)?;
    let ptr = driver.malloc(PROBE_ALLOC_BYTES)?;
    driver.free(ptr)?;
    if let Some(blob) = kernel {
        run_probe_kernel(driver, blob, timeouts)?;
    }
    if sdma {
        sdma_probe(driver, timeouts)?;
    }
    driver.reset_device(device)
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
