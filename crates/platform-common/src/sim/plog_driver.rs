//! [`PlogDriver`]: the in-process simulator (`--platform sim`) writing its device log: every
//! failing call of the driver it wraps leaves one line in the process's [`Plog`], as the real
//! runtime's failing calls do in its plog (`libsim_acl.so` writes the same lines from its
//! exports, `sim-acl`'s `abi.rs`).
//!
//! This file owns that delegation and nothing else: every call goes to the inner driver
//! unchanged, and its result comes back unchanged.

use std::sync::Arc;

use super::plog::Plog;
use crate::driver::{
    AicpuTask, DeviceId, DevicePtr, Driver, DriverInfo, DriverResult, KernelArg, KernelHandle, LaunchOrigin,
    RegisterWindow, SdmaOrigin, Stream, StreamFailureMode,
};
use crate::kernel::KernelBlob;
use crate::lease::DeviceLease;

/// A driver whose failing calls are logged to a plog.
#[derive(Debug)]
pub struct PlogDriver {
    inner: Arc<dyn Driver>,
    plog: Plog,
}

impl PlogDriver {
    /// `inner`, logging to `$ASCEND_PROCESS_LOG_PATH`'s plog where the variable is set; `inner`
    /// itself otherwise.
    pub fn from_env(inner: Arc<dyn Driver>) -> Arc<dyn Driver> {
        match Plog::from_env() {
            Some(plog) => Arc::new(Self { inner, plog }),
            None => inner,
        }
    }

    /// `inner`, logging to `plog`.
    pub fn new(inner: Arc<dyn Driver>, plog: Plog) -> Self {
        Self { inner, plog }
    }

    fn log<T>(&self, r: DriverResult<T>) -> DriverResult<T> {
        if let Err(e) = &r {
            self.plog.call_failed(e.call.name(), e.code);
        }
        r
    }
}

impl Driver for PlogDriver {
    fn info(&self) -> DriverInfo {
        self.inner.info()
    }

    fn init(&self) -> DriverResult<()> {
        self.log(self.inner.init())
    }

    fn set_device(&self, device: DeviceId) -> DriverResult<()> {
        self.log(self.inner.set_device(device))
    }

    fn reset_device(&self, device: DeviceId) -> DriverResult<()> {
        self.log(self.inner.reset_device(device))
    }

    fn reset_device_force(&self, lease: &DeviceLease) -> DriverResult<()> {
        self.log(self.inner.reset_device_force(lease))
    }

    fn set_op_execute_timeout(&self, timeout_us: u64) -> DriverResult<()> {
        self.log(self.inner.set_op_execute_timeout(timeout_us))
    }

    fn create_stream(&self) -> DriverResult<Stream> {
        self.log(self.inner.create_stream())
    }

    fn set_stream_failure_mode(&self, stream: Stream, mode: StreamFailureMode) -> DriverResult<()> {
        self.log(self.inner.set_stream_failure_mode(stream, mode))
    }

    fn destroy_stream_force(&self, stream: Stream) -> DriverResult<()> {
        self.log(self.inner.destroy_stream_force(stream))
    }

    fn sdma_copy(
        &self,
        stream: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        origin: SdmaOrigin,
    ) -> DriverResult<()> {
        self.log(self.inner.sdma_copy(stream, dst, src, bytes, origin))
    }

    fn finalize(&self) -> DriverResult<()> {
        self.log(self.inner.finalize())
    }

    fn applied_op_execute_us(&self, requested_us: u64) -> u64 {
        self.inner.applied_op_execute_us(requested_us)
    }

    fn destroy_stream(&self, stream: Stream) -> DriverResult<()> {
        self.log(self.inner.destroy_stream(stream))
    }

    fn synchronize_stream_with_timeout(&self, stream: Stream, timeout_ms: u32) -> DriverResult<()> {
        self.log(self.inner.synchronize_stream_with_timeout(stream, timeout_ms))
    }

    fn synchronize_device_with_timeout(&self, timeout_ms: u32) -> DriverResult<()> {
        self.log(self.inner.synchronize_device_with_timeout(timeout_ms))
    }

    fn malloc(&self, size: usize) -> DriverResult<DevicePtr> {
        self.log(self.inner.malloc(size))
    }

    fn free(&self, ptr: DevicePtr) -> DriverResult<()> {
        self.log(self.inner.free(ptr))
    }

    fn memcpy_to_device(&self, dst: DevicePtr, src: &[u8]) -> DriverResult<()> {
        self.log(self.inner.memcpy_to_device(dst, src))
    }

    fn memcpy_to_host(&self, dst: &mut [u8], src: DevicePtr) -> DriverResult<()> {
        self.log(self.inner.memcpy_to_host(dst, src))
    }

    fn register_kernel(&self, blob: &KernelBlob) -> DriverResult<KernelHandle> {
        self.log(self.inner.register_kernel(blob))
    }

    fn launch_aicore(
        &self,
        stream: Stream,
        kernel: KernelHandle,
        block_dim: u32,
        args: &[KernelArg],
        origin: LaunchOrigin,
    ) -> DriverResult<()> {
        self.log(self.inner.launch_aicore(stream, kernel, block_dim, args, origin))
    }

    fn launch_aicpu(&self, stream: Stream, task: AicpuTask) -> DriverResult<()> {
        self.log(self.inner.launch_aicpu(stream, task))
    }

    fn hal_res_map(&self, device: DeviceId, core: u32) -> DriverResult<u64> {
        self.log(self.inner.hal_res_map(device, core))
    }

    fn hal_mem_ctl(&self, device: DeviceId) -> DriverResult<RegisterWindow> {
        self.log(self.inner.hal_mem_ctl(device))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{SimConfig, SimDriver};

    #[test]
    fn a_failing_call_is_logged_and_its_result_unchanged() {
        let tmp = tempfile::tempdir().unwrap();
        let facts = crate::ArchFacts {
            arch: crate::Arch::A5,
            max_block_dim: 1,
            op_timeout: crate::Code::acl(1),
            drain_error: crate::Code::acl(2),
        };
        let cfg = SimConfig::new(facts, tmp.path().join("sim")).with_cards(1);
        let d = PlogDriver::new(
            Arc::new(SimDriver::new(cfg)),
            Plog::under(&tmp.path().join("log")),
        );
        // No current device: the runtime's "context null".
        let e = d.create_stream().unwrap_err();
        assert_eq!(e.code.raw, 107002);
        let dir = tmp.path().join("log/debug/plog");
        let file = std::fs::read_dir(dir).unwrap().next().unwrap().unwrap().path();
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains("aclrtCreateStream: ErrCode=107002"), "{text}");
        assert_eq!(text.lines().count(), 1);
    }
}
