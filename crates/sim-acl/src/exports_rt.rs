//! The `rt*` exports of `libruntime.so`: kernel registration and the two launches.
//!
//! Arguments cross as CANN's do: 8-byte values behind `rtArgsEx_t`. Their roles and the launch's
//! origin come from the calling thread's last `cgSimSetLaunchInfo`; without one, the launch
//! counts as a case launch and every argument is passed as a plain value.

use std::ffi::{c_char, c_void};

use platform_common::acl::aicpu_args::{AICPU_KERNEL_NAME, AICPU_KERNEL_TYPE, AICPU_SO_NAME};
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

/// Checks an `rtArgsEx_t` the way CANN's runtime does before a launch (hicann/runtime
/// src/runtime/api/impl/api_error.cc, `CheckArgs`): `args` non-null, `argsSize` non-zero, and
/// the tiling and host-input offsets below `argsSize`. The simulator also refuses what it cannot
/// simulate: arguments already on the device (`isNoNeedH2DCopy`), tiling data and host-memory
/// input, none of which cardguard passes. Returns the reason for a refusal.
///
/// # Safety
///
/// `a.hostInputInfoPtr` is null or readable for `a.hostInputInfoNum` entries.
unsafe fn check_args_ex(a: &rtArgsEx_t) -> Result<(), &'static str> {
    if a.args.is_null() {
        return Err("args is null");
    }
    if a.argsSize == 0 {
        return Err("argsSize is 0");
    }
    if a.isNoNeedH2DCopy != 0 {
        return Err("isNoNeedH2DCopy is set (device-side arguments are not simulated)");
    }
    if a.hasTiling != 0 {
        if a.tilingDataOffset >= a.argsSize || a.tilingAddrOffset >= a.argsSize {
            return Err("a tiling offset is not below argsSize");
        }
        return Err("hasTiling is set (tiling data is not simulated)");
    }
    if a.hostInputInfoNum != 0 {
        if a.hostInputInfoPtr.is_null() {
            return Err("hostInputInfoNum is set but hostInputInfoPtr is null");
        }
        for i in 0..usize::from(a.hostInputInfoNum) {
            // SAFETY: readable for `hostInputInfoNum` entries per the contract.
            let h = unsafe { a.hostInputInfoPtr.add(i).read_unaligned() };
            if h.addrOffset >= a.argsSize || h.dataOffset >= a.argsSize {
                return Err("a host-input offset is not below argsSize");
            }
        }
        return Err("host-memory input is not simulated");
    }
    Ok(())
}

/// `rtKernelLaunchWithHandleV2`: queues the registered kernel on an AICore stream.
///
/// # Safety
///
/// `args_info` is null or points to a whole `rtArgsEx_t` (40 bytes) whose `args` is readable for
/// `argsSize` bytes; the other pointers are handles and never dereferenced.
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
        // SAFETY: non-null and pointing to a whole `rtArgsEx_t` per the contract (every field is
        // an integer or a pointer: any bytes are a valid value).
        let a = unsafe { args_info.read_unaligned() };
        // SAFETY: `hostInputInfoPtr` is null or readable for `hostInputInfoNum` entries.
        if let Err(why) = unsafe { check_args_ex(&a) } {
            tracing::warn!(reason = why, "rtKernelLaunchWithHandleV2: rtArgsEx_t rejected");
            return INVALID;
        }
        // SAFETY: `a.args` is readable for `a.argsSize` bytes per the contract.
        let Some(mut values) = (unsafe { read_args(a.args, a.argsSize) }) else {
            return INVALID;
        };
        // A kernel without arguments crosses with one zero word (the runtime refuses an empty
        // argument block); its launch info says 0 arguments.
        if info.as_ref().is_some_and(|i| i.roles.is_empty()) && values == [0] {
            values.clear();
        }
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

/// The C string at `offset` of the `size` bytes at `base`, NUL-terminated within them.
///
/// # Safety
///
/// `base` is readable for `size` bytes.
unsafe fn name_at(base: *const u8, size: usize, offset: u32) -> Option<Vec<u8>> {
    let start = usize::try_from(offset).ok()?;
    if start >= size {
        return None;
    }
    // SAFETY: `start..size` lies within the `size` readable bytes.
    let tail = unsafe { std::slice::from_raw_parts(base.add(start), size - start) };
    let end = tail.iter().position(|&b| b == 0)?;
    Some(tail[..end].to_vec())
}

/// Checks the AICPU scheduler launch the driver makes: its kernel type, the whole
/// `rtAicpuArgsEx_t`, and the argument block with the so and kernel names at their offsets.
/// Returns the AICore stream the task schedules, or the reason for a refusal.
///
/// # Safety
///
/// `a.args` is readable for `a.argsSize` bytes.
unsafe fn check_aicpu(kernel_type: u32, a: &rtAicpuArgsEx_t, no_copy: u8) -> Result<u64, &'static str> {
    if kernel_type != AICPU_KERNEL_TYPE {
        return Err("not the driver's AICPU kernel type (KERNEL_TYPE_AICPU_KFC)");
    }
    if a.args.is_null() || a.argsSize == 0 {
        return Err("no arguments");
    }
    if no_copy != 0 || a.hostInputInfoNum != 0 || a.kernelOffsetInfoNum != 0 {
        return Err("device-side arguments, host input or kernel offsets are not simulated");
    }
    let size = std::mem::size_of::<cgAicpuSchedulerArgs>();
    if usize::try_from(a.argsSize).ok() != Some(size) {
        return Err("argsSize is not the scheduler's argument block");
    }
    let base = a.args.cast::<u8>().cast_const();
    // SAFETY: readable for `argsSize` (= `size`) bytes per the contract.
    let so = unsafe { name_at(base, size, a.soNameAddrOffset) };
    // SAFETY: as above.
    let kernel = unsafe { name_at(base, size, a.kernelNameAddrOffset) };
    if so.as_deref() != Some(AICPU_SO_NAME) || kernel.as_deref() != Some(AICPU_KERNEL_NAME) {
        return Err("the so or kernel name at its offset is not the scheduler's");
    }
    // SAFETY: the block starts with the u64 AICore stream; readable, maybe unaligned.
    Ok(unsafe { base.cast::<u64>().read_unaligned() })
}

/// `rtAicpuKernelLaunchExWithArgs`: queues the AICPU scheduler task, whose argument block
/// (`cgAicpuSchedulerArgs`) names the AICore stream it schedules.
///
/// # Safety
///
/// `args_info` is null or points to a whole `rtAicpuArgsEx_t` (48 bytes) whose `args` is
/// readable for `argsSize` bytes; the other pointers are never dereferenced.
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
        if args_info.is_null() {
            return INVALID;
        }
        // The `bool` field is read as its byte: a caller's byte need not be 0 or 1.
        // SAFETY: `args_info` points to a whole `rtAicpuArgsEx_t` per the contract.
        let no_copy = unsafe {
            args_info
                .cast::<u8>()
                .add(std::mem::offset_of!(rtAicpuArgsEx_t, isNoNeedH2DCopy))
                .read()
        };
        // SAFETY: as above; the `bool` is overwritten with a valid value before the read is
        // used, through a copy of the raw bytes.
        let a = unsafe {
            let mut raw = std::mem::MaybeUninit::<rtAicpuArgsEx_t>::uninit();
            std::ptr::copy_nonoverlapping(
                args_info.cast::<u8>(),
                raw.as_mut_ptr().cast::<u8>(),
                std::mem::size_of::<rtAicpuArgsEx_t>(),
            );
            raw.as_mut_ptr()
                .cast::<u8>()
                .add(std::mem::offset_of!(rtAicpuArgsEx_t, isNoNeedH2DCopy))
                .write(u8::from(no_copy != 0));
            raw.assume_init()
        };
        // SAFETY: `a.args` is readable for `a.argsSize` bytes per the contract.
        let aicore = match unsafe { check_aicpu(kernel_type, &a, no_copy) } {
            Ok(s) => s,
            Err(why) => {
                tracing::warn!(
                    reason = why,
                    kernel_type,
                    "rtAicpuKernelLaunchExWithArgs rejected"
                );
                return INVALID;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::acl::aicpu_args::{aicpu_args_ex, aicpu_scheduler_args};

    fn args_ex(values: &mut [u64]) -> rtArgsEx_t {
        rtArgsEx_t {
            args: values.as_mut_ptr().cast(),
            hostInputInfoPtr: std::ptr::null_mut(),
            argsSize: (values.len() * 8) as u32,
            tilingAddrOffset: 0,
            tilingDataOffset: 0,
            hostInputInfoNum: 0,
            hasTiling: 0,
            isNoNeedH2DCopy: 0,
            reserved: [0; 4],
        }
    }

    #[test]
    fn a_whole_args_ex_passes() {
        let mut v = [1u64, 2];
        // SAFETY: no host-input entries.
        assert_eq!(unsafe { check_args_ex(&args_ex(&mut v)) }, Ok(()));
    }

    /// The old 24-byte declaration (args, hostInputInfoPtr, argsSize) written into a caller's
    /// memory whose next bytes are not zero: the runtime reads all 40 bytes, so does the sim.
    #[test]
    fn a_truncated_args_ex_is_refused() {
        let mut v = [7u64];
        let mut raw = [0xa5u8; 40];
        let args = v.as_mut_ptr() as usize as u64;
        raw[..8].copy_from_slice(&args.to_ne_bytes());
        raw[8..16].copy_from_slice(&0u64.to_ne_bytes());
        raw[16..20].copy_from_slice(&8u32.to_ne_bytes());
        // SAFETY: 40 readable bytes; every field of rtArgsEx_t takes any bytes.
        let a = unsafe { raw.as_ptr().cast::<rtArgsEx_t>().read_unaligned() };
        // SAFETY: hostInputInfoPtr is null; the refusal comes before any entry is read.
        assert!(unsafe { check_args_ex(&a) }.is_err());
        let mut zero = args_ex(&mut v);
        zero.argsSize = 0;
        // SAFETY: no host-input entries.
        assert_eq!(unsafe { check_args_ex(&zero) }, Err("argsSize is 0"));
        let mut tiling = args_ex(&mut v);
        tiling.hasTiling = 1;
        tiling.tilingDataOffset = 64;
        // SAFETY: no host-input entries.
        let refused = unsafe { check_args_ex(&tiling) };
        assert_eq!(refused, Err("a tiling offset is not below argsSize"));
    }

    #[test]
    fn the_aicpu_launch_must_be_the_drivers() {
        let mut block = aicpu_scheduler_args(0x55);
        let a = aicpu_args_ex(&mut block);
        // SAFETY: `a.args` points at `block`, argsSize bytes (so below).
        let ok = unsafe { check_aicpu(KERNEL_TYPE_AICPU_KFC, &a, 0) };
        assert_eq!(ok, Ok(0x55));
        // The old declaration's "AICPU" (1) is KERNEL_TYPE_FWK; 2 is a plain AICPU kernel.
        for t in [KERNEL_TYPE_FWK, KERNEL_TYPE_AICPU, KERNEL_TYPE_CCE] {
            // SAFETY: as above.
            assert!(unsafe { check_aicpu(t, &a, 0) }.is_err(), "kernel type {t}");
        }
        let mut swapped = a;
        std::mem::swap(&mut swapped.soNameAddrOffset, &mut swapped.kernelNameAddrOffset);
        // SAFETY: as above.
        assert!(unsafe { check_aicpu(KERNEL_TYPE_AICPU_KFC, &swapped, 0) }.is_err());
        let mut short = a;
        short.argsSize = 8;
        // SAFETY: the block is longer than 8 bytes.
        assert!(unsafe { check_aicpu(KERNEL_TYPE_AICPU_KFC, &short, 0) }.is_err());
    }
}
