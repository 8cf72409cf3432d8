//! The `hal*` exports of `libascend_hal.so`: register mapping (a5) and the register window with
//! its partial-good mask (a2a3). They return HAL (`drvError_t`) codes.

use std::ffi::{c_int, c_uint, c_ulong, c_void};

use platform_common::acl::bindings::*;
use platform_common::driver::Driver;

use crate::abi::call;

/// Bytes of one AICore's register mapping.
const CORE_REGISTER_BYTES: c_uint = 0x1000;

/// `halResMap` of one AICore's registers.
///
/// # Safety
///
/// `res_info` is null or points to a `res_map_info`; `va` and `len` are null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn halResMap(
    dev_id: c_uint,
    res_info: *mut res_map_info,
    va: *mut c_ulong,
    len: *mut c_uint,
) -> drvError_t {
    call("halResMap", |sim| {
        if res_info.is_null() || va.is_null() {
            return DRV_ERROR_INVALID_VALUE;
        }
        // SAFETY: non-null and pointing to a `res_map_info` per the contract.
        let info = unsafe { &*res_info };
        if info.res_type != RES_ADDR_TYPE_AICORE {
            return DRV_ERROR_INVALID_VALUE;
        }
        match sim.driver.hal_res_map(dev_id, info.res_id) {
            Ok(addr) => {
                // SAFETY: `va` is non-null and valid for a write per the contract. (`c_ulong` is
                // 64 bits on the Linux targets CANN supports, as are the simulator's addresses.)
                unsafe { va.write(addr as c_ulong) };
                if !len.is_null() {
                    // SAFETY: non-null and valid for a write per the contract.
                    unsafe { len.write(CORE_REGISTER_BYTES) };
                }
                DRV_ERROR_NONE
            }
            Err(e) => e.code.raw,
        }
    })
}

/// `halMemCtl`; the one request served is [`CG_MEM_CTL_REG_WINDOW`].
///
/// # Safety
///
/// `param_value` is null or readable for `param_value_size` bytes; `out_value` is null or
/// writable for `*out_size_ret` bytes; `out_size_ret` is null or valid for reads and writes.
#[no_mangle]
pub unsafe extern "C" fn halMemCtl(
    type_: c_int,
    param_value: *mut c_void,
    param_value_size: usize,
    out_value: *mut c_void,
    out_size_ret: *mut usize,
) -> drvError_t {
    call("halMemCtl", |sim| {
        let in_size = std::mem::size_of::<cg_mem_ctl_reg_window_in>();
        let out_size = std::mem::size_of::<cg_mem_ctl_reg_window_out>();
        if c_uint::try_from(type_).ok() != Some(CG_MEM_CTL_REG_WINDOW)
            || param_value.is_null()
            || param_value_size < in_size
            || out_value.is_null()
            || out_size_ret.is_null()
        {
            return DRV_ERROR_INVALID_VALUE;
        }
        // SAFETY: non-null and valid for reads per the contract.
        if unsafe { out_size_ret.read() } < out_size {
            return DRV_ERROR_INVALID_VALUE;
        }
        // SAFETY: readable for at least `in_size` bytes (checked above); may be unaligned.
        let input = unsafe { param_value.cast::<cg_mem_ctl_reg_window_in>().read_unaligned() };
        match sim.driver.hal_mem_ctl(input.devId) {
            Ok(w) => {
                let out = cg_mem_ctl_reg_window_out {
                    base: w.base,
                    core_mask: w.core_mask,
                };
                // SAFETY: writable for at least `out_size` bytes (checked above); may be
                // unaligned; `out_size_ret` is valid for writes.
                unsafe {
                    out_value.cast::<cg_mem_ctl_reg_window_out>().write_unaligned(out);
                    out_size_ret.write(out_size);
                }
                DRV_ERROR_NONE
            }
            Err(e) => e.code.raw,
        }
    })
}

// Each export has exactly the type the header declares.
const _: PFN_halResMap = Some(halResMap);
const _: PFN_halMemCtl = Some(halMemCtl);
