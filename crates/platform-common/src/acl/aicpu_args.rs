//! The AICPU scheduler's launch arguments: the block the driver hands
//! `rtAicpuKernelLaunchExWithArgs` and the `rtAicpuArgsEx_t` over it, in one place so the
//! simulated library's tests can check exactly what the driver sends.

use std::ptr;

use super::bindings::*;

/// The op name of the AICPU scheduler task.
pub(crate) const AICPU_SCHEDULER_OP: &std::ffi::CStr = c"cardguard_scheduler";
/// The AICPU scheduler's kernel (function) name, inside its argument block.
pub const AICPU_KERNEL_NAME: &[u8] = b"cardguard_aicpu_scheduler";
/// The shared object holding the AICPU scheduler, inside its argument block.
pub const AICPU_SO_NAME: &[u8] = b"libcardguard_aicpu.so";
/// The kernel type of the AICPU scheduler launch: the one upstream launches its own AICPU
/// scheduler with (hw-native-sys/simpler src/common/aicpu_loader/host/load_aicpu_op.cpp).
pub const AICPU_KERNEL_TYPE: u32 = KERNEL_TYPE_AICPU_KFC;

/// A C string `name` in a fixed `CG_AICPU_NAME_LEN` field (NUL-padded; the names are shorter).
const fn name_field(name: &[u8]) -> [std::ffi::c_char; CG_AICPU_NAME_LEN as usize] {
    let mut out = [0 as std::ffi::c_char; CG_AICPU_NAME_LEN as usize];
    let mut i = 0;
    while i < name.len() && i + 1 < out.len() {
        out[i] = name[i] as std::ffi::c_char;
        i += 1;
    }
    out
}

/// The AICPU scheduler's argument block for the AICore stream `aicore`.
pub fn aicpu_scheduler_args(aicore: u64) -> cgAicpuSchedulerArgs {
    cgAicpuSchedulerArgs {
        aicoreStream: aicore,
        kernelName: name_field(AICPU_KERNEL_NAME),
        soName: name_field(AICPU_SO_NAME),
    }
}

/// An `rtAicpuArgsEx_t` over the scheduler's argument block `block`: what the driver launches
/// (the simulated library's tests check exactly this value).
pub fn aicpu_args_ex(block: &mut cgAicpuSchedulerArgs) -> rtAicpuArgsEx_t {
    rtAicpuArgsEx_t {
        args: (block as *mut cgAicpuSchedulerArgs).cast(),
        hostInputInfoPtr: ptr::null_mut(),
        kernelOffsetInfoPtr: ptr::null_mut(),
        argsSize: std::mem::size_of::<cgAicpuSchedulerArgs>() as u32,
        hostInputInfoNum: 0,
        kernelOffsetInfoNum: 0,
        soNameAddrOffset: std::mem::offset_of!(cgAicpuSchedulerArgs, soName) as u32,
        kernelNameAddrOffset: std::mem::offset_of!(cgAicpuSchedulerArgs, kernelName) as u32,
        isNoNeedH2DCopy: false,
        timeout: 0,
        reserved: 0,
    }
}
