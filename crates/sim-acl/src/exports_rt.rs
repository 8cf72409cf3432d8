//! The `rt*` exports of `libruntime.so`: kernel registration and the two launches.
//!
//! Arguments cross as CANN's do: 8-byte values behind `rtArgsEx_t`. Their roles and the launch's
//! origin come from the calling thread's last `cgSimSetLaunchInfo`; without one, the launch
//! counts as a case launch and every argument is passed as a plain value.

use std::ffi::{c_char, c_void};

use platform_common::acl::bindings::*;
use platform_common::driver::{AicpuTask, DevicePtr, Driver, KernelArg, KernelHandle, LaunchOrigin, Stream};

use crate::abi::{call, code, handle, pointer, write_out};
use crate::blob;
use crate::state::take_next_launch;

const INVALID: rtError_t = ACL_ERROR_INVALID_PARAM;

/// Reads the `size` bytes of 8-byte arguments at `args`.
///
/// # Safety
///
/// `args` is readable for `size` bytes when `size > 0`.
unsafe fn read_args(args: *const c_void, size: u32) -> Option<Vec<u64>> {
    let size = usize::try_from(size).ok()?;
    if size % 8 != 0 || (size > 0 && args.is_null()) {
        return None;
    }
    let base = args.cast::<u64>();
    Some(
        (0..size / 8)
            // SAFETY: within the `size` readable bytes; the caller's buffer may be unaligned.
            .map(|i| unsafe { base.add(i).read_unaligned() })
            .collect(),
    )
}

/// `rtRegisterAllKernel`: registers the kernel blob whose bytes `bin` describes.
///
/// # Safety
///
/// `bin` is null or points to an `rtDevBinary_t` whose `data` is readable for `length` bytes;
/// `hdl` is null or valid for a write of a pointer.
#[no_mangle]
pub unsafe extern "C" fn rtRegisterAllKernel(bin: *const rtDevBinary_t, hdl: *mut *mut c_void) -> rtError_t {
    call("rtRegisterAllKernel", |sim| {
        if bin.is_null() || hdl.is_null() {
            return INVALID;
        }
        // SAFETY: non-null and pointing to an `rtDevBinary_t` per the contract.
        let bin = unsafe { &*bin };
        let Ok(len) = usize::try_from(bin.length) else {
            return INVALID;
        };
        if bin.magic != RT_DEV_BINARY_MAGIC_ELF || bin.data.is_null() || len == 0 {
            return INVALID;
        }
        // SAFETY: `data` is non-null and readable for `length` bytes per the contract.
        let bytes = unsafe { std::slice::from_raw_parts(bin.data.cast::<u8>(), len) };
        let blob = match blob::load(bytes) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(error = %e, "rtRegisterAllKernel: not a kernel blob");
                return INVALID;
            }
        };
        let r = sim.driver.register_kernel(&blob).map(|k| pointer::<c_void>(k.0));
        // SAFETY: `hdl` is non-null and valid for a write per the contract.
        unsafe { write_out(r, hdl) }
    })
}

/// `rtKernelLaunchWithHandleV2`: queues the registered kernel on an AICore stream.
///
/// # Safety
///
/// `args_info` is null or points to an `rtArgsEx_t` whose `args` is readable for `argsSize`
/// bytes; the other pointers are handles and never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn rtKernelLaunchWithHandleV2(
    hdl: *mut c_void,
    _tiling_key: u64,
    block_dim: u32,
    args_info: *mut rtArgsEx_t,
    _sm_desc: *mut rtSmDesc_t,
    stm: rtStream_t,
    _cfg_info: *const rtTaskCfgInfo_t,
) -> rtError_t {
    call("rtKernelLaunchWithHandleV2", |sim| {
        let info = take_next_launch();
        if args_info.is_null() {
            return INVALID;
        }
        // SAFETY: non-null and pointing to an `rtArgsEx_t` per the contract.
        let a = unsafe { &*args_info };
        // SAFETY: `a.args` is readable for `a.argsSize` bytes per the contract.
        let Some(values) = (unsafe { read_args(a.args, a.argsSize) }) else {
            return INVALID;
        };
        let (origin, roles) = match info {
            Some(i) if i.roles.len() == values.len() => (i.origin, Some(i.roles)),
            Some(i) => {
                tracing::warn!(
                    roles = i.roles.len(),
                    args = values.len(),
                    "launch info does not match the arguments"
                );
                return INVALID;
            }
            None => (LaunchOrigin::Case, None),
        };
        let mut args = Vec::with_capacity(values.len());
        for (i, v) in values.into_iter().enumerate() {
            let role = roles.as_ref().map_or(CG_ARG_SCALAR, |r| u32::from(r[i]));
            args.push(match role {
                CG_ARG_INPUT => KernelArg::Input(DevicePtr(v)),
                CG_ARG_OUTPUT => KernelArg::Output(DevicePtr(v)),
                CG_ARG_SCALAR => KernelArg::Scalar(v),
                _ => return INVALID,
            });
        }
        code(sim.driver.launch_aicore(
            Stream(handle(stm)),
            KernelHandle(handle(hdl)),
            block_dim,
            &args,
            origin,
        ))
    })
}

/// `rtAicpuKernelLaunchExWithArgs`: queues the AICPU scheduler task, whose one argument is the
/// AICore stream it schedules.
///
/// # Safety
///
/// `args_info` is null or points to an `rtAicpuArgsEx_t` whose `args` is readable for `argsSize`
/// bytes; the other pointers are never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn rtAicpuKernelLaunchExWithArgs(
    kernel_type: u32,
    _op_name: *const c_char,
    _block_dim: u32,
    args_info: *const rtAicpuArgsEx_t,
    _sm_desc: *mut rtSmDesc_t,
    stm: rtStream_t,
    _flags: u32,
) -> rtError_t {
    call("rtAicpuKernelLaunchExWithArgs", |sim| {
        if kernel_type != KERNEL_TYPE_AICPU || args_info.is_null() {
            return INVALID;
        }
        // SAFETY: non-null and pointing to an `rtAicpuArgsEx_t` per the contract.
        let a = unsafe { &*args_info };
        // SAFETY: `a.args` is readable for `a.argsSize` bytes per the contract.
        let Some(values) = (unsafe { read_args(a.args, a.argsSize) }) else {
            return INVALID;
        };
        let [aicore] = values[..] else {
            return INVALID;
        };
        let task = AicpuTask {
            aicore: Stream(aicore),
        };
        code(sim.driver.launch_aicpu(Stream(handle(stm)), task))
    })
}

// Each export has exactly the type the header declares.
const _: PFN_rtRegisterAllKernel = Some(rtRegisterAllKernel);
const _: PFN_rtKernelLaunchWithHandleV2 = Some(rtKernelLaunchWithHandleV2);
const _: PFN_rtAicpuKernelLaunchExWithArgs = Some(rtAicpuKernelLaunchExWithArgs);
