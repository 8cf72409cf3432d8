//! [`StampedDriver`]: a [`Driver`] that stamps a [`Breadcrumb`] around every call of the driver
//! it wraps (the call and since when before it, cleared after it; a case launch counted before
//! it), so a case stuck in a call can be told by its call and its launch.
//!
//! This file owns the stamping and nothing else: every call goes to the wrapped driver unchanged,
//! with its result. Per call it costs two atomic stores and a `CLOCK_MONOTONIC` reading; it never
//! allocates.

use std::sync::Arc;

use platform_common::driver::{
    AicpuTask, DeviceId, DevicePtr, Driver, DriverCall, DriverInfo, DriverResult, KernelArg, KernelHandle,
    LaunchOrigin, RegisterWindow, SdmaOrigin, Stream, StreamFailureMode,
};
use platform_common::kernel::KernelBlob;
use platform_common::DeviceLease;

use super::record::Breadcrumb;
use crate::clock::mono_ns;

/// A driver whose every call is stamped on a breadcrumb.
#[derive(Debug)]
pub struct StampedDriver {
    inner: Arc<dyn Driver>,
    crumb: Arc<Breadcrumb>,
}

impl StampedDriver {
    /// `inner`, stamping `crumb`.
    pub fn new(inner: Arc<dyn Driver>, crumb: Arc<Breadcrumb>) -> Self {
        Self { inner, crumb }
    }

    fn stamp<T>(&self, call: DriverCall, f: impl FnOnce(&dyn Driver) -> T) -> T {
        self.crumb.enter(call, mono_ns());
        let out = f(self.inner.as_ref());
        self.crumb.leave();
        out
    }
}

impl Driver for StampedDriver {
    fn info(&self) -> DriverInfo {
        self.inner.info()
    }

    fn init(&self) -> DriverResult<()> {
        self.stamp(DriverCall::Init, |d| d.init())
    }

    fn set_device(&self, device: DeviceId) -> DriverResult<()> {
        self.stamp(DriverCall::SetDevice, |d| d.set_device(device))
    }

    fn reset_device(&self, device: DeviceId) -> DriverResult<()> {
        self.stamp(DriverCall::ResetDevice, |d| d.reset_device(device))
    }

    fn reset_device_force(&self, lease: &DeviceLease) -> DriverResult<()> {
        self.stamp(DriverCall::ResetDeviceForce, |d| d.reset_device_force(lease))
    }

    fn set_op_execute_timeout(&self, timeout_us: u64) -> DriverResult<()> {
        self.stamp(DriverCall::SetOpExecuteTimeout, |d| {
            d.set_op_execute_timeout(timeout_us)
        })
    }

    fn create_stream(&self) -> DriverResult<Stream> {
        self.stamp(DriverCall::CreateStream, |d| d.create_stream())
    }

    fn destroy_stream(&self, stream: Stream) -> DriverResult<()> {
        self.stamp(DriverCall::DestroyStream, |d| d.destroy_stream(stream))
    }

    fn set_stream_failure_mode(&self, stream: Stream, mode: StreamFailureMode) -> DriverResult<()> {
        self.stamp(DriverCall::SetStreamFailureMode, |d| {
            d.set_stream_failure_mode(stream, mode)
        })
    }

    fn destroy_stream_force(&self, stream: Stream) -> DriverResult<()> {
        self.stamp(DriverCall::DestroyStreamForce, |d| d.destroy_stream_force(stream))
    }

    fn sdma_copy(
        &self,
        stream: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        origin: SdmaOrigin,
    ) -> DriverResult<()> {
        self.stamp(DriverCall::SdmaCopy, |d| {
            d.sdma_copy(stream, dst, src, bytes, origin)
        })
    }

    fn finalize(&self) -> DriverResult<()> {
        self.stamp(DriverCall::Finalize, |d| d.finalize())
    }

    fn applied_op_execute_us(&self, requested_us: u64) -> u64 {
        self.inner.applied_op_execute_us(requested_us)
    }

    fn synchronize_stream_with_timeout(&self, stream: Stream, timeout_ms: u32) -> DriverResult<()> {
        self.stamp(DriverCall::SynchronizeStreamWithTimeout, |d| {
            d.synchronize_stream_with_timeout(stream, timeout_ms)
        })
    }

    fn synchronize_device_with_timeout(&self, timeout_ms: u32) -> DriverResult<()> {
        self.stamp(DriverCall::SynchronizeDeviceWithTimeout, |d| {
            d.synchronize_device_with_timeout(timeout_ms)
        })
    }

    fn malloc(&self, size: usize) -> DriverResult<DevicePtr> {
        self.stamp(DriverCall::Malloc, |d| d.malloc(size))
    }

    fn free(&self, ptr: DevicePtr) -> DriverResult<()> {
        self.stamp(DriverCall::Free, |d| d.free(ptr))
    }

    fn memcpy_to_device(&self, dst: DevicePtr, src: &[u8]) -> DriverResult<()> {
        self.stamp(DriverCall::MemcpyToDevice, |d| d.memcpy_to_device(dst, src))
    }

    fn memcpy_to_host(&self, dst: &mut [u8], src: DevicePtr) -> DriverResult<()> {
        self.stamp(DriverCall::MemcpyToHost, |d| d.memcpy_to_host(dst, src))
    }

    fn register_kernel(&self, blob: &KernelBlob) -> DriverResult<KernelHandle> {
        self.stamp(DriverCall::RegisterKernel, |d| d.register_kernel(blob))
    }

    fn launch_aicore(
        &self,
        stream: Stream,
        kernel: KernelHandle,
        block_dim: u32,
        args: &[KernelArg],
        origin: LaunchOrigin,
    ) -> DriverResult<()> {
        if origin == LaunchOrigin::Case {
            self.crumb.launch_started();
        }
        self.stamp(DriverCall::LaunchAicore, |d| {
            d.launch_aicore(stream, kernel, block_dim, args, origin)
        })
    }

    fn launch_aicpu(&self, stream: Stream, task: AicpuTask) -> DriverResult<()> {
        self.stamp(DriverCall::LaunchAicpu, |d| d.launch_aicpu(stream, task))
    }

    fn hal_res_map(&self, device: DeviceId, core: u32) -> DriverResult<u64> {
        self.stamp(DriverCall::HalResMap, |d| d.hal_res_map(device, core))
    }

    fn hal_mem_ctl(&self, device: DeviceId) -> DriverResult<RegisterWindow> {
        self.stamp(DriverCall::HalMemCtl, |d| d.hal_mem_ctl(device))
    }
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use platform_common::sim::{start_run, FaultPlan, SimDriver};
    use platform_common::Arch;

    use super::*;

    /// Every call goes through with its result; the breadcrumb is clear after each and counts
    /// case launches only.
    #[test]
    fn calls_pass_through_and_leave_the_breadcrumb_clear() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::platform::arch_entry(Arch::A5)
            .sim_config(dir.path().join("sim"))
            .with_cards(1);
        start_run(&cfg, &[0], &FaultPlan::default()).unwrap();
        let crumb = Arc::new(Breadcrumb::default());
        let d = StampedDriver::new(Arc::new(SimDriver::new(cfg)), Arc::clone(&crumb));
        crumb.start_case(0);
        d.init().unwrap();
        d.set_device(0).unwrap();
        let s = d.create_stream().unwrap();
        let p = d.malloc(64).unwrap();
        assert_eq!(crumb.read().in_call, None);
        let blob = platform_common::kernel::load_builtin(Arch::A5, "noop").unwrap();
        let k = d.register_kernel(&blob).unwrap();
        let args = vec![KernelArg::Scalar(0); blob.meta().num_args as usize];
        d.launch_aicore(s, k, 1, &args, LaunchOrigin::Internal).unwrap();
        assert_eq!(crumb.read().launch, 0, "an internal launch is not the case's");
        d.launch_aicore(s, k, 1, &args, LaunchOrigin::Case).unwrap();
        d.synchronize_stream_with_timeout(s, 1000).unwrap();
        assert_eq!(crumb.read().launch, 1);
        d.free(p).unwrap();
        assert_eq!(
            d.free(p).unwrap_err().call,
            DriverCall::Free,
            "errors pass through"
        );
        assert_eq!(crumb.read().in_call, None);
        d.destroy_stream(s).unwrap();
        d.reset_device(0).unwrap();
    }
}
