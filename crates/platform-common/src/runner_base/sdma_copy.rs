//! [`DeviceRunnerBase`]'s SDMA copy for cases ([`super::DeviceRunner::sdma_copy`]): two kept
//! buffers, the runner's SDMA set, the guard and the fail-fast chain as a run's.

use super::base::DeviceRunnerBase;
use super::buffer_id::BufferId;
use super::buffers::check_range;
use super::errors::{RunError, UsageError};
use crate::driver::SdmaOrigin;

impl DeviceRunnerBase {
    /// A case's SDMA copy of `bytes` bytes from buffer `src` to buffer `dst`, on the runner's SDMA
    /// stream, synced within the stream-sync timeout; admitted by the guard, a driver error
    /// through the fail-fast chain as a run's.
    pub(crate) fn sdma_copy(&mut self, dst: BufferId, src: BufferId, bytes: usize) -> Result<(), RunError> {
        self.guard()?;
        let Some(set) = self.sdma else {
            return Err(UsageError::NoSdma.into());
        };
        let (d, s) = (self.buffers.get(dst)?, self.buffers.get(src)?);
        check_range(dst, d, 0, bytes)?;
        check_range(src, s, 0, bytes)?;
        if bytes == 0 {
            return Ok(());
        }
        self.make_current()?;
        let driver = self.driver.clone();
        let sync_ms = self.cfg.timeouts.stream_sync_ms();
        let copied = driver
            .sdma_copy(set.stream, d.ptr, s.ptr, bytes, SdmaOrigin::Case)
            .and_then(|()| driver.synchronize_stream_with_timeout(set.stream, sync_ms));
        copied.map_err(|e| self.device_failure(e))
    }
}
