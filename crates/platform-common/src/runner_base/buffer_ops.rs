//! A runner's buffer operations (allocate, copy in, copy out, free), each admitted by the guard,
//! the card made current first, a driver error through the fail-fast chain exactly as a run's
//! (the handles and their table are `buffers`').
//!
//! This file owns those methods of [`DeviceRunnerBase`]. It never launches anything.

use super::base::DeviceRunnerBase;
use super::buffer_id::BufferId;
use super::buffers::{check_range, Allocation};
use super::errors::{RunError, UsageError};
use crate::driver::DevicePtr;

impl DeviceRunnerBase {
    /// The size in bytes of live buffer `id` of this runner.
    pub fn buffer_size(&self, id: BufferId) -> Result<usize, UsageError> {
        self.buffers.get(id).map(|a| a.bytes)
    }

    /// How many buffers of this runner are live.
    pub fn live_buffers(&self) -> usize {
        self.buffers.len()
    }

    /// The device address of live buffer `id` (for a run's arguments).
    pub(super) fn buffer_ptr(&self, id: BufferId) -> Result<DevicePtr, UsageError> {
        self.buffers.get(id).map(|a| a.ptr)
    }

    /// Allocates a zeroed device buffer of `bytes` (at least 1), admitted by the guard.
    pub(crate) fn alloc_buffer(&mut self, bytes: usize) -> Result<BufferId, RunError> {
        self.guard()?;
        if bytes == 0 {
            return Err(UsageError::EmptyAllocation.into());
        }
        self.make_current()?;
        match self.driver.malloc(bytes) {
            Ok(ptr) => Ok(self.buffers.insert(Allocation { ptr, bytes })),
            Err(e) => Err(self.device_failure(e)),
        }
    }

    /// Frees buffer `id`. Refused on an unusable runner (its finalize abandons the buffer with
    /// everything else), and for a handle that is not a live buffer of this runner.
    pub(crate) fn free_buffer(&mut self, id: BufferId) -> Result<(), RunError> {
        self.guard()?;
        let a = self.buffers.get(id)?;
        self.make_current()?;
        match self.driver.free(a.ptr) {
            Ok(()) => {
                self.buffers.remove(id);
                Ok(())
            }
            // The buffer stays recorded: the fatal teardown abandons it.
            Err(e) => Err(self.device_failure(e)),
        }
    }

    /// Copies `bytes` into buffer `id` at byte `offset`.
    pub(crate) fn write_buffer(&mut self, id: BufferId, offset: usize, bytes: &[u8]) -> Result<(), RunError> {
        self.guard()?;
        let a = self.buffers.get(id)?;
        check_range(id, a, offset, bytes.len())?;
        if bytes.is_empty() {
            return Ok(());
        }
        self.make_current()?;
        match self
            .driver
            .memcpy_to_device(DevicePtr(a.ptr.0 + offset as u64), bytes)
        {
            Ok(()) => Ok(()),
            Err(e) => Err(self.device_failure(e)),
        }
    }

    /// Copies `len` bytes of buffer `id` from byte `offset` to the host.
    pub(crate) fn read_buffer(
        &mut self,
        id: BufferId,
        offset: usize,
        len: usize,
    ) -> Result<Vec<u8>, RunError> {
        self.guard()?;
        let a = self.buffers.get(id)?;
        check_range(id, a, offset, len)?;
        let mut out = vec![0u8; len];
        if len == 0 {
            return Ok(out);
        }
        self.make_current()?;
        match self
            .driver
            .memcpy_to_host(&mut out, DevicePtr(a.ptr.0 + offset as u64))
        {
            Ok(()) => Ok(out),
            Err(e) => Err(self.device_failure(e)),
        }
    }
}
