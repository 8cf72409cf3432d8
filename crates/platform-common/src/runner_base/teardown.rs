//! The two teardowns: `finalize_common` for a healthy runner and the fatal teardown for a faulted
//! one.
//!
//! Neither ever synchronises a stream. A healthy runner's streams are idle (every run synced
//! them), and a faulted runner's may be in error state, where a sync blocks until the stream-sync
//! timeout and then fails (507018); destroying such a stream after a sync attempt is how a
//! teardown used to hang. The fatal teardown makes no driver call at all: per-resource frees on a
//! faulted card are not trustworthy (a free or destroy may report success, fail, or block behind
//! work the card will never finish, e.g. 507004 for a stream with pending work), and the force
//! reset that follows releases everything of the context anyway. The simulator lets such frees
//! succeed; the fatal teardown does not depend on what they would return.
//!
//! The healthy teardown makes the card current first: CANN keeps the current device per thread,
//! and a runner may be finalized on another thread than the one that built it.

use crate::error::DriverError;

use super::base::DeviceRunnerBase;

/// What the fatal teardown abandoned instead of freeing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Abandoned {
    /// Streams.
    pub streams: usize,
    /// Device allocations (a run's and the buffers a caller kept).
    pub allocations: usize,
    /// Registered kernels.
    pub kernels: usize,
}

impl DeviceRunnerBase {
    /// Healthy teardown: make the card current, destroy the streams (no pre-destroy sync), free
    /// what is still allocated, soft-reset the device. Errors are logged and returned; the
    /// teardown goes on.
    pub(super) fn finalize_common(&mut self) -> Vec<DriverError> {
        self.finished = true;
        let device = self.cfg.device;
        let driver = self.driver.clone();
        let mut errors = Vec::new();
        if let Err(e) = driver.set_device(device) {
            tracing::warn!(device, error = %e, "card not made current at finalize");
            errors.push(e);
        }
        let sdma = self.sdma.take();
        for ptr in sdma.iter().flat_map(|s| s.buffers) {
            if let Err(e) = driver.free(ptr) {
                tracing::warn!(device, error = %e, "SDMA buffer not freed at finalize");
                errors.push(e);
            }
        }
        let sdma_stream = sdma.map(|s| s.stream);
        for stream in [self.streams.aicore, self.streams.aicpu]
            .into_iter()
            .chain(sdma_stream)
        {
            if let Err(e) = driver.destroy_stream(stream) {
                tracing::warn!(device, error = %e, "stream not destroyed at finalize");
                errors.push(e);
            }
        }
        let kept = self.buffers.drain().into_iter().map(|a| a.ptr);
        for ptr in std::mem::take(&mut self.allocations).into_iter().chain(kept) {
            if let Err(e) = driver.free(ptr) {
                tracing::warn!(device, error = %e, "device memory not freed at finalize");
                errors.push(e);
            }
        }
        // Registrations live in the context; the soft reset releases them.
        self.kernels.clear();
        if let Err(e) = driver.reset_device(device) {
            tracing::warn!(device, error = %e, "soft device reset failed at finalize");
            errors.push(e);
        }
        errors
    }

    /// Fatal teardown of a faulted runner: forget every handle without a driver call.
    pub(super) fn fatal_teardown(&mut self) -> Abandoned {
        self.finished = true;
        let sdma = self.sdma.take();
        let abandoned = Abandoned {
            streams: 2 + usize::from(sdma.is_some()),
            allocations: std::mem::take(&mut self.allocations).len()
                + self.buffers.drain().len()
                + sdma.map_or(0, |s| s.buffers.len()),
            kernels: std::mem::take(&mut self.kernels).len(),
        };
        tracing::info!(
            device = self.cfg.device,
            streams = abandoned.streams,
            allocations = abandoned.allocations,
            kernels = abandoned.kernels,
            "fatal teardown: handles abandoned on the faulted card"
        );
        abandoned
    }
}
