//! [`AclDriver`]: the [`Driver`] trait over the CANN C API, one small `unsafe` block per call.
//!
//! This file owns the translation of each driver call into its C call: arguments in, raw code
//! out (through `result`). It never retries, never logs a code as anything but a code, and never
//! calls a symbol that did not resolve: an absent symbol is a [`DriverError`] in the loader code
//! space ([`codes::LOADER_SYMBOL_MISSING`]), classified as infrastructure.
//!
//! Kernels cross the ABI as CANN's do: `rtRegisterAllKernel` receives the blob file's bytes, and
//! `rtKernelLaunchWithHandleV2` the arguments as 8-byte values. Real AICore blobs need the CANN
//! compiler (out of scope): on real cards registration of this project's blobs is expected to
//! fail. The launch's origin and the roles of its arguments, which CANN does not need, go
//! through the optional extension `cgSimSetLaunchInfo` where the library exports it
//! (`libsim_acl.so` does, so its fault counters see only case launches).

use std::ffi::c_void;
use std::fmt;
use std::path::PathBuf;
use std::ptr;

use super::aicpu_args::{aicpu_args_ex, aicpu_scheduler_args, AICPU_KERNEL_TYPE, AICPU_SCHEDULER_OP};
use super::bindings::*;
use super::config::AclConfig;
use super::convert::{arg_role, as_ptr, device_i32, timeout_i32, v1_seconds};
use super::error::AclLoadError;
use super::library::Libraries;
use super::result;
use super::symbols::Symbols;
use crate::arch_hal::{symbol_missing, ArchHal};
use crate::driver::{
    AicpuTask, DeviceId, DevicePtr, Driver, DriverCall, DriverInfo, DriverKind, DriverResult, KernelArg,
    KernelHandle, LaunchOrigin, RegisterWindow, SdmaOrigin, Stream, StreamFailureMode,
};
use crate::error::{codes, DriverError};
use crate::kernel::KernelBlob;
use crate::lease::DeviceLease;
use crate::visible::VisibleDevices;

/// The CANN runtime (or a library exporting its C ABI), loaded at run time.
pub struct AclDriver {
    pub(super) libs: Libraries,
    pub(super) syms: Symbols,
    files: Vec<PathBuf>,
    /// The process's `ASCEND_RT_VISIBLE_DEVICES`: the HAL calls get the physical id.
    pub(super) visible: VisibleDevices,
    /// The arch's register mapping ([`ArchHal::NONE`] until [`AclDriver::with_arch`]).
    pub(super) arch: ArchHal,
    /// The arch's HAL symbols looked up so far, with their addresses (`None`: absent).
    pub(super) arch_syms: std::sync::Mutex<Vec<(&'static str, Option<usize>)>>,
}

impl fmt::Debug for AclDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AclDriver")
            .field("libraries", &self.libs)
            .field("symbols", &self.syms)
            .finish()
    }
}

/// Resolves `$sym` or returns the typed "symbol missing" error of `$call`.
macro_rules! sym {
    ($self:ident, $sym:ident, $call:expr) => {
        match $self.syms.$sym(&$self.libs) {
            Some(f) => f,
            None => return Err(result::missing($call, stringify!($sym))),
        }
    };
}

impl AclDriver {
    /// Opens the configured libraries and checks that they are a CANN runtime (`aclInit`
    /// resolves) exporting every symbol the driver calls ([`super::REQUIRED_SYMBOLS`]), so a
    /// broken install stops a run before any card is touched. Loaded without an arch, it maps no
    /// registers ([`AclDriver::load_for`] does).
    pub fn load(cfg: &AclConfig) -> Result<Self, AclLoadError> {
        Self::load_for(cfg, ArchHal::NONE)
    }

    /// [`AclDriver::load`] for an arch's cards: the shared symbols and the arch's
    /// ([`ArchHal::required`]) must all resolve, and the register mapping calls go to `arch`. A
    /// load error names every absent symbol (shared first, then the arch's) and the CANN version
    /// the library reports.
    pub fn load_for(cfg: &AclConfig, arch: ArchHal) -> Result<Self, AclLoadError> {
        let driver = Self::open(cfg)?.with_arch(arch);
        let mut missing = driver.syms.missing(&driver.libs);
        missing.extend(driver.missing_arch_symbols());
        if !missing.is_empty() {
            return Err(AclLoadError::MissingSymbols {
                libraries: driver.files.clone(),
                symbols: missing,
                version: driver.cann_version(),
            });
        }
        Ok(driver)
    }

    /// [`AclDriver::load_for`] with [`AclConfig::from_env`]: what `--platform onboard` uses.
    pub fn load_default(arch: ArchHal) -> Result<Self, AclLoadError> {
        Self::load_for(&AclConfig::from_env()?, arch)
    }

    /// Opens the configured libraries and checks only `aclInit`; every other symbol is resolved
    /// on first use, and an absent one fails that call with [`codes::LOADER_SYMBOL_MISSING`].
    pub fn open(cfg: &AclConfig) -> Result<Self, AclLoadError> {
        let files = cfg.resolve()?;
        let libs = Libraries::open(&files)?;
        let driver = Self {
            files: libs.paths(),
            libs,
            syms: Symbols::default(),
            visible: VisibleDevices::from_env()?,
            arch: ArchHal::NONE,
            arch_syms: std::sync::Mutex::new(Vec::new()),
        };
        if driver.syms.aclInit(&driver.libs).is_none() {
            return Err(AclLoadError::NotCann {
                libraries: driver.files,
                symbol: "aclInit",
            });
        }
        tracing::info!(libraries = ?driver.files, "acl driver loaded");
        Ok(driver)
    }

    #[cfg_attr(not(feature = "sim"), allow(dead_code))]
    pub(crate) fn symbols(&self) -> &Symbols {
        &self.syms
    }

    #[cfg_attr(not(feature = "sim"), allow(dead_code))]
    pub(crate) fn libs(&self) -> &Libraries {
        &self.libs
    }

    /// The CANN version the library reports: `aclsysGetVersionStr("runtime")`, else
    /// `aclrtGetVersion` as `major.minor.patch`; `None` where it exports neither or both fail.
    pub fn cann_version(&self) -> Option<String> {
        if let Some(f) = self.syms.aclsysGetVersionStr(&self.libs) {
            let mut name = *b"runtime\0";
            let mut buf = [0 as std::ffi::c_char; ACL_PKG_VERSION_MAX_SIZE as usize];
            // SAFETY: `name` is a NUL-terminated string and `buf` has the
            // ACL_PKG_VERSION_MAX_SIZE bytes the call may write, both alive for the call.
            let rc = unsafe { f(name.as_mut_ptr().cast(), buf.as_mut_ptr()) };
            if rc == ACL_SUCCESS {
                // The call wrote a string within `buf`; its last byte is made NUL regardless.
                buf[buf.len() - 1] = 0;
                // SAFETY: `buf` holds a NUL (its last byte), so the string ends within it.
                let text = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
                let text = text.to_string_lossy().trim().to_owned();
                if !text.is_empty() {
                    return Some(text);
                }
            }
        }
        let f = self.syms.aclrtGetVersion(&self.libs)?;
        let (mut major, mut minor, mut patch) = (0i32, 0i32, 0i32);
        // SAFETY: three valid, writable i32s for the call.
        let rc = unsafe { f(&mut major, &mut minor, &mut patch) };
        (rc == ACL_SUCCESS).then(|| format!("{major}.{minor}.{patch}"))
    }

    /// The same driver with `visible` as the process's map (a test's; [`AclDriver::open`] reads
    /// the environment).
    pub fn with_visible(mut self, visible: VisibleDevices) -> Self {
        self.visible = visible;
        self
    }

    /// The op-execute timeout, in microseconds, that the runtime applies for `requested_us`: as
    /// requested through V2, rounded up to whole seconds where only V1 resolves.
    pub fn applied_op_execute_us(&self, requested_us: u64) -> u64 {
        if self.syms.aclrtSetOpExecuteTimeOutV2(&self.libs).is_some() {
            return requested_us;
        }
        u64::from(v1_seconds(requested_us)) * 1_000_000
    }

    /// The files loaded, in load order.
    pub fn libraries(&self) -> &[PathBuf] {
        &self.files
    }

    /// The symbols looked up so far (resolution is lazy), in table order.
    pub fn resolved_symbols(&self) -> Vec<&'static str> {
        self.syms.resolved()
    }

    /// Whether the library exports cardguard's simulator extensions (it is `libsim_acl.so`).
    pub fn has_sim_extensions(&self) -> bool {
        self.syms.cgSimStartRun(&self.libs).is_some()
    }
}

impl AclDriver {
    /// An `aclError` (or ACL-numbered `rtError_t`) of `call`; a failure carries what the runtime
    /// said of it, read at once with `aclGetRecentErrMsg` (optional: absent, no message).
    fn acl(&self, call: DriverCall, rc: aclError) -> DriverResult<()> {
        result::acl(call, rc).map_err(|e| self.with_recent_message(e))
    }

    /// `e` with the runtime's most recent error message of this thread, where it has one.
    fn with_recent_message(&self, e: DriverError) -> DriverError {
        let Some(f) = self.syms.aclGetRecentErrMsg(&self.libs) else {
            return e;
        };
        // SAFETY: takes nothing; returns null or a NUL-terminated string the runtime owns.
        let text = unsafe { f() };
        if text.is_null() {
            return e;
        }
        // SAFETY: non-null, NUL-terminated, and read before any other runtime call of this thread.
        let text = unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy();
        e.with_runtime_message(&text)
    }
}

impl Driver for AclDriver {
    fn info(&self) -> DriverInfo {
        DriverInfo {
            kind: DriverKind::Acl,
            library: Some(self.files.iter().map(|p| p.display().to_string()).collect()),
        }
    }

    fn init(&self) -> DriverResult<()> {
        let call = DriverCall::Init;
        let f = sym!(self, aclInit, call);
        // SAFETY: a null config path is documented as "no configuration file".
        self.acl(call, unsafe { f(ptr::null()) })
    }

    fn set_device(&self, device: DeviceId) -> DriverResult<()> {
        let call = DriverCall::SetDevice;
        let id = device_i32(call, device)?;
        let f = sym!(self, aclrtSetDevice, call);
        // SAFETY: takes a device id by value.
        self.acl(call, unsafe { f(id) })
    }

    fn reset_device(&self, device: DeviceId) -> DriverResult<()> {
        let call = DriverCall::ResetDevice;
        let id = device_i32(call, device)?;
        let f = sym!(self, aclrtResetDevice, call);
        // SAFETY: takes a device id by value.
        self.acl(call, unsafe { f(id) })
    }

    fn reset_device_force(&self, lease: &DeviceLease) -> DriverResult<()> {
        let call = DriverCall::ResetDeviceForce;
        let id = device_i32(call, lease.card())?;
        let f = sym!(self, aclrtResetDeviceForce, call);
        // SAFETY: takes a device id by value; the lease makes this process the card's only user.
        self.acl(call, unsafe { f(id) })
    }

    fn set_op_execute_timeout(&self, timeout_us: u64) -> DriverResult<()> {
        let call = DriverCall::SetOpExecuteTimeout;
        if let Some(f) = self.syms.aclrtSetOpExecuteTimeOutV2(&self.libs) {
            let mut applied: u64 = 0;
            // SAFETY: `applied` is a valid, writable u64 for the call.
            let rc = unsafe { f(timeout_us, &mut applied) };
            self.acl(call, rc)?;
            tracing::debug!(
                requested_us = timeout_us,
                applied_us = applied,
                "op-execute timeout set"
            );
            return Ok(());
        }
        // CANN without V2 (8.1): the V1 call takes whole seconds; round up, never to 0
        // (which would mean the runtime's default).
        let f = sym!(self, aclrtSetOpExecuteTimeOut, call);
        let secs = v1_seconds(timeout_us);
        // SAFETY: takes a number of seconds by value.
        self.acl(call, unsafe { f(secs) })?;
        tracing::debug!(
            requested_us = timeout_us,
            applied_s = secs,
            "op-execute timeout set (V1, seconds)"
        );
        Ok(())
    }

    fn create_stream(&self) -> DriverResult<Stream> {
        let call = DriverCall::CreateStream;
        let f = sym!(self, aclrtCreateStream, call);
        let mut stream: aclrtStream = ptr::null_mut();
        // SAFETY: `stream` is a valid, writable out-pointer for the call.
        self.acl(call, unsafe { f(&mut stream) })?;
        Ok(Stream(stream as usize as u64))
    }

    fn set_stream_failure_mode(&self, stream: Stream, mode: StreamFailureMode) -> DriverResult<()> {
        let call = DriverCall::SetStreamFailureMode;
        let f = sym!(self, aclrtSetStreamFailureMode, call);
        // SAFETY: the handle came from aclrtCreateStream; the mode is a value acl_rt.h defines.
        self.acl(call, unsafe { f(as_ptr(stream.0), mode.raw()) })
    }

    fn destroy_stream_force(&self, stream: Stream) -> DriverResult<()> {
        let call = DriverCall::DestroyStreamForce;
        let Some(f) = self.syms.aclrtDestroyStreamForce(&self.libs) else {
            // A library without it: the plain destroy (which waits for unfinished work).
            return self.destroy_stream(stream);
        };
        // SAFETY: the handle came from aclrtCreateStream; the runtime validates it.
        self.acl(call, unsafe { f(as_ptr(stream.0)) })
    }

    fn sdma_copy(
        &self,
        stream: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        origin: SdmaOrigin,
    ) -> DriverResult<()> {
        let call = DriverCall::SdmaCopy;
        let f = sym!(self, aclrtMemcpyAsync, call);
        if let Some(info) = self.syms.cgSimSetLaunchInfo(&self.libs) {
            let o = match origin {
                SdmaOrigin::Case => CG_LAUNCH_ORIGIN_SDMA_CASE,
                SdmaOrigin::Warmup => CG_LAUNCH_ORIGIN_SDMA_WARMUP,
                SdmaOrigin::Probe => CG_LAUNCH_ORIGIN_SDMA_PROBE,
            };
            // SAFETY: no argument roles (null with 0).
            self.acl(call, unsafe { info(o, ptr::null(), 0) })?;
        }
        // SAFETY: both addresses are device allocations the runtime checks (destMax is the
        // caller's size); the stream came from aclrtCreateStream.
        let rc = unsafe {
            f(
                as_ptr(dst.0),
                bytes,
                as_ptr(src.0),
                bytes,
                ACL_MEMCPY_DEVICE_TO_DEVICE,
                as_ptr(stream.0),
            )
        };
        self.acl(call, rc)
    }

    fn finalize(&self) -> DriverResult<()> {
        let call = DriverCall::Finalize;
        let f = sym!(self, aclFinalize, call);
        // SAFETY: takes nothing.
        self.acl(call, unsafe { f() })
    }

    fn applied_op_execute_us(&self, requested_us: u64) -> u64 {
        AclDriver::applied_op_execute_us(self, requested_us)
    }

    fn destroy_stream(&self, stream: Stream) -> DriverResult<()> {
        let call = DriverCall::DestroyStream;
        let f = sym!(self, aclrtDestroyStream, call);
        // SAFETY: the handle came from aclrtCreateStream; the runtime validates it.
        self.acl(call, unsafe { f(as_ptr(stream.0)) })
    }

    fn synchronize_stream_with_timeout(&self, stream: Stream, timeout_ms: u32) -> DriverResult<()> {
        let call = DriverCall::SynchronizeStreamWithTimeout;
        let f = sym!(self, aclrtSynchronizeStreamWithTimeout, call);
        // SAFETY: the handle came from aclrtCreateStream; the timeout is bounded (never -1).
        self.acl(call, unsafe { f(as_ptr(stream.0), timeout_i32(timeout_ms)) })
    }

    fn synchronize_device_with_timeout(&self, timeout_ms: u32) -> DriverResult<()> {
        let call = DriverCall::SynchronizeDeviceWithTimeout;
        let f = sym!(self, aclrtSynchronizeDeviceWithTimeout, call);
        // SAFETY: takes a bounded timeout by value.
        self.acl(call, unsafe { f(timeout_i32(timeout_ms)) })
    }

    fn malloc(&self, size: usize) -> DriverResult<DevicePtr> {
        let call = DriverCall::Malloc;
        let f = sym!(self, aclrtMalloc, call);
        let mut p: *mut c_void = ptr::null_mut();
        // SAFETY: `p` is a valid, writable out-pointer for the call.
        self.acl(call, unsafe { f(&mut p, size, ACL_MEM_MALLOC_HUGE_FIRST) })?;
        Ok(DevicePtr(p as usize as u64))
    }

    fn free(&self, ptr: DevicePtr) -> DriverResult<()> {
        let call = DriverCall::Free;
        let f = sym!(self, aclrtFree, call);
        // SAFETY: the address came from aclrtMalloc; the runtime validates it.
        self.acl(call, unsafe { f(as_ptr(ptr.0)) })
    }

    fn memcpy_to_device(&self, dst: DevicePtr, src: &[u8]) -> DriverResult<()> {
        let call = DriverCall::MemcpyToDevice;
        let f = sym!(self, aclrtMemcpy, call);
        // SAFETY: `src` is readable for `src.len()` bytes; the destination is a device address
        // the runtime checks against its allocation (destMax is the caller's size).
        let rc = unsafe {
            f(
                as_ptr(dst.0),
                src.len(),
                src.as_ptr().cast(),
                src.len(),
                ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        self.acl(call, rc)
    }

    fn memcpy_to_host(&self, dst: &mut [u8], src: DevicePtr) -> DriverResult<()> {
        let call = DriverCall::MemcpyToHost;
        let f = sym!(self, aclrtMemcpy, call);
        // SAFETY: `dst` is writable for `dst.len()` bytes (destMax); the source is a device
        // address the runtime checks against its allocation.
        let rc = unsafe {
            f(
                dst.as_mut_ptr().cast(),
                dst.len(),
                as_ptr(src.0).cast_const(),
                dst.len(),
                ACL_MEMCPY_DEVICE_TO_HOST,
            )
        };
        self.acl(call, rc)
    }

    fn register_kernel(&self, blob: &KernelBlob) -> DriverResult<KernelHandle> {
        let call = DriverCall::RegisterKernel;
        let f = sym!(self, rtRegisterAllKernel, call);
        let bytes = std::fs::read(blob.path()).map_err(|e| {
            tracing::error!(blob = %blob.path().display(), error = %e, "cannot read kernel blob");
            DriverError::new(call, codes::LOADER_BLOB_UNREADABLE)
        })?;
        let bin = rtDevBinary_t {
            magic: RT_DEV_BINARY_MAGIC_ELF,
            version: 0,
            data: bytes.as_ptr().cast(),
            length: bytes.len() as u64,
        };
        let mut handle: *mut c_void = ptr::null_mut();
        // SAFETY: `bin` describes `bytes`, alive for the call (the runtime copies what it
        // keeps); `handle` is a valid, writable out-pointer.
        self.acl(call, unsafe { f(&bin, &mut handle) })?;
        Ok(KernelHandle(handle as usize as u64))
    }

    fn launch_aicore(
        &self,
        stream: Stream,
        kernel: KernelHandle,
        block_dim: u32,
        args: &[KernelArg],
        origin: LaunchOrigin,
    ) -> DriverResult<()> {
        let call = DriverCall::LaunchAicore;
        let f = sym!(self, rtKernelLaunchWithHandleV2, call);
        let (roles, mut values): (Vec<u8>, Vec<u64>) = args.iter().map(arg_role).unzip();
        let n = u32::try_from(values.len()).map_err(|_| result::invalid(call))?;
        if values.is_empty() {
            // The runtime refuses a null `args` or an `argsSize` of 0 (hicann/runtime
            // src/runtime/api/impl/api_error.cc, CheckArgs): a kernel without arguments gets
            // one zero word, which its launch info (0 arguments) tells the simulator to drop.
            values.push(0);
        }
        let size = u32::try_from(values.len() * 8).map_err(|_| result::invalid(call))?;
        if let Some(info) = self.syms.cgSimSetLaunchInfo(&self.libs) {
            let origin = match origin {
                LaunchOrigin::Case => CG_LAUNCH_ORIGIN_CASE,
                LaunchOrigin::Internal => CG_LAUNCH_ORIGIN_INTERNAL,
            };
            // SAFETY: `roles` holds `n` bytes, alive for the call.
            self.acl(call, unsafe { info(origin, roles.as_ptr(), n) })?;
        }
        let mut args_ex = rtArgsEx_t {
            args: values.as_mut_ptr().cast(),
            hostInputInfoPtr: ptr::null_mut(),
            argsSize: size,
            tilingAddrOffset: 0,
            tilingDataOffset: 0,
            hostInputInfoNum: 0,
            hasTiling: 0,
            isNoNeedH2DCopy: 0,
            reserved: [0; 4],
        };
        // SAFETY: `args_ex` points at `values` (`size` bytes), both alive for the call; the
        // handle came from rtRegisterAllKernel and the stream from aclrtCreateStream; smDesc and
        // cfgInfo may be null.
        let rc = unsafe {
            f(
                as_ptr(kernel.0),
                0,
                block_dim,
                &mut args_ex,
                ptr::null_mut(),
                as_ptr(stream.0),
                ptr::null(),
            )
        };
        self.acl(call, rc)
    }

    fn launch_aicpu(&self, stream: Stream, task: AicpuTask) -> DriverResult<()> {
        let call = DriverCall::LaunchAicpu;
        let f = sym!(self, rtAicpuKernelLaunchExWithArgs, call);
        let mut block = aicpu_scheduler_args(task.aicore.0);
        let args = aicpu_args_ex(&mut block);
        // SAFETY: `args` points at `block` (argsSize bytes, the names NUL-terminated inside it)
        // and the op name is a static C string, all alive for the call; the stream came from
        // aclrtCreateStream; smDesc may be null.
        let rc = unsafe {
            f(
                AICPU_KERNEL_TYPE,
                AICPU_SCHEDULER_OP.as_ptr(),
                1,
                &args,
                ptr::null_mut(),
                as_ptr(stream.0),
                0,
            )
        };
        self.acl(call, rc)
    }

    fn hal_res_map(&self, device: DeviceId, core: u32) -> DriverResult<u64> {
        let call = DriverCall::HalResMap;
        match self.arch.res_map {
            Some(f) => f(self, device, core),
            None => Err(symbol_missing(call, "halResMap")),
        }
    }

    fn hal_mem_ctl(&self, device: DeviceId) -> DriverResult<RegisterWindow> {
        let call = DriverCall::HalMemCtl;
        match self.arch.mem_ctl {
            Some(f) => f(self, device),
            None => Err(symbol_missing(call, "halMemCtl")),
        }
    }
}
