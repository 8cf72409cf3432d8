//! The `hal*` exports of `libascend_hal.so`: register mapping (a5, `halResMap`), and the register
//! window (`halMemCtl(CTRL_TYPE_ADDR_MAP)`) with the partial-good mask
//! (`halGetDeviceInfoByBuff(MODULE_TYPE_AICORE, INFO_TYPE_OCCUPY)`) (a2a3). They return HAL
//! (`drvError_t`) codes, and refuse what the real driver refuses (the sources are cited beside
//! each check), so that a declaration that drifts from CANN's fails the tests. Like the real
//! HAL, they take the physical card id, not the logical one `ASCEND_RT_VISIBLE_DEVICES` gives
//! the ACL calls (hw-native-sys/simpler src/common/platform/include/common/acl_hal_device.h); a
//! card outside the map is `DRV_ERROR_INVALID_DEVICE`.

use std::ffi::{c_int, c_uint, c_ulong, c_void};

use platform_common::acl::bindings::*;
use platform_common::driver::Driver;

use crate::abi::call;

/// Bytes of one AICore's register mapping.
const CORE_REGISTER_BYTES: c_uint = 0x1000;

/// Bytes of the a2a3 AICore control register window `halMemCtl` maps.
const REGISTER_WINDOW_BYTES: u64 = 0x1000_0000;

/// The end of `enum ctrlType` in the driver the simulator follows: 9 (hicann/runtime
/// pkg_inc/driver/ascend_hal_define.h, `CTRL_TYPE_MAX` after `CTRL_TYPE_GET_DCACHE_ADDR = 8`).
/// `halMemCtl` answers any type at or above it with `DRV_ERROR_NOT_SUPPORT` (hicann/driver
/// src/ascend_hal/svm/v2/devmm/devmm_svm.c and src/ascend_hal/svm/v3/api/master/svm_mem_ctl.c).
pub(crate) const CTRL_TYPE_MAX: c_int = 9;

/// Bytes of the `uint64_t[2]` AICore bitmap of `INFO_TYPE_OCCUPY` (hicann/runtime
/// pkg_inc/driver/ascend_hal_base.h, the table above `halGetDeviceInfoByBuff`).
const OCCUPY_BYTES: i32 = 16;

/// Why `halResMap` refuses `info`, as a code; `None` when it maps it (see [`halResMap`]).
pub(crate) fn res_map_refusal(info: &res_map_info) -> Option<drvError_t> {
    if info.target_proc_type != PROCESS_CP1 || info.flag != 0 || info.rsv.iter().any(|&r| r != 0) {
        return Some(DRV_ERROR_NOT_SUPPORT);
    }
    if info.res_type >= RES_MAP_TYPE_MAX {
        return Some(DRV_ERROR_PARA_ERROR);
    }
    if info.res_type != RES_AICORE {
        return Some(DRV_ERROR_NOT_SUPPORT);
    }
    None
}

/// The `halMemCtl` request the simulator serves, or the code it answers instead (see
/// [`halMemCtl`]).
///
/// # Safety
///
/// `param_value` is null or readable for `param_value_size` bytes.
pub(crate) unsafe fn mem_ctl_request(
    type_: c_int,
    param_value: *const c_void,
    param_value_size: usize,
    out_value: *const c_void,
) -> Result<AddrMapInPara, drvError_t> {
    if !(0..CTRL_TYPE_MAX).contains(&type_) {
        return Err(DRV_ERROR_NOT_SUPPORT);
    }
    if c_uint::try_from(type_).ok() != Some(CTRL_TYPE_ADDR_MAP) {
        return Err(DRV_ERROR_NOT_SUPPORT);
    }
    if param_value.is_null()
        || param_value_size != std::mem::size_of::<AddrMapInPara>()
        || out_value.is_null()
    {
        return Err(DRV_ERROR_INVALID_VALUE);
    }
    // SAFETY: readable for `param_value_size` (= its size) bytes; may be unaligned.
    let input = unsafe { param_value.cast::<AddrMapInPara>().read_unaligned() };
    if input.addr_type != ADDR_MAP_TYPE_REG_AIC_CTRL {
        return Err(DRV_ERROR_NOT_SUPPORT);
    }
    Ok(input)
}

/// `halResMap` of one AICore's registers. Refused as the driver's `rmo_res_info_check` refuses
/// (hicann/driver src/ascend_hal/dpa/rmo/rmo_user_res_map.c): null `va`/`len` is
/// `DRV_ERROR_PARA_ERROR`; a target other than `PROCESS_CP1`, a non-zero `flag` or `rsv` is
/// `DRV_ERROR_NOT_SUPPORT`. A `res_type` at or above `RES_MAP_TYPE_MAX` is `DRV_ERROR_PARA_ERROR`;
/// a known type other than `RES_AICORE` (e.g. `RES_HSCB_AICORE`) is not simulated:
/// `DRV_ERROR_NOT_SUPPORT`.
///
/// # Safety
///
/// `res_info` is null or points to a whole `res_map_info` (20 bytes); `va` and `len` are null or
/// valid for writes.
#[no_mangle]
pub unsafe extern "C" fn halResMap(
    dev_id: c_uint,
    res_info: *mut res_map_info,
    va: *mut c_ulong,
    len: *mut c_uint,
) -> drvError_t {
    call("halResMap", |sim| {
        if res_info.is_null() || va.is_null() || len.is_null() {
            return DRV_ERROR_PARA_ERROR;
        }
        // SAFETY: non-null and pointing to a whole `res_map_info` per the contract (integer
        // fields only: any bytes are a valid value).
        let info = unsafe { res_info.read_unaligned() };
        if let Some(rc) = res_map_refusal(&info) {
            return rc;
        }
        let Some(card) = sim.visible.logical(dev_id) else {
            return DRV_ERROR_INVALID_DEVICE;
        };
        match sim.driver.hal_res_map(card, info.res_id) {
            Ok(addr) => {
                // SAFETY: `va` and `len` are non-null and valid for writes per the contract.
                // (`c_ulong` is 64 bits on the Linux targets CANN supports, as are the
                // simulator's addresses.)
                unsafe {
                    va.write(addr as c_ulong);
                    len.write(CORE_REGISTER_BYTES);
                }
                DRV_ERROR_NONE
            }
            Err(e) => e.code.raw,
        }
    })
}

/// `halMemCtl`. Any type at or above [`CTRL_TYPE_MAX`] is `DRV_ERROR_NOT_SUPPORT`, as on the real
/// driver; the one type simulated is `CTRL_TYPE_ADDR_MAP` of `ADDR_MAP_TYPE_REG_AIC_CTRL` (the
/// others below the end are `DRV_ERROR_NOT_SUPPORT` here too). The request is an
/// `AddrMapInPara` of exactly its size; the reply an `AddrMapOutPara`, its size written through
/// `out_size_ret` when that is not null (upstream passes null).
///
/// # Safety
///
/// `param_value` is null or readable for `param_value_size` bytes; `out_value` is null or
/// writable for an `AddrMapOutPara`; `out_size_ret` is null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn halMemCtl(
    type_: c_int,
    param_value: *mut c_void,
    param_value_size: usize,
    out_value: *mut c_void,
    out_size_ret: *mut usize,
) -> drvError_t {
    call("halMemCtl", |sim| {
        // SAFETY: `param_value` is null or readable for `param_value_size` bytes per the contract.
        let input = match unsafe { mem_ctl_request(type_, param_value, param_value_size, out_value) } {
            Ok(i) => i,
            Err(rc) => return rc,
        };
        let Some(card) = sim.visible.logical(input.devid) else {
            return DRV_ERROR_INVALID_DEVICE;
        };
        match sim.driver.hal_mem_ctl(card) {
            Ok(w) => {
                let out = AddrMapOutPara {
                    ptr: w.base,
                    len: REGISTER_WINDOW_BYTES,
                };
                // SAFETY: `out_value` is writable for an `AddrMapOutPara` (maybe unaligned) and
                // `out_size_ret` is null or valid for a write, per the contract.
                unsafe {
                    out_value.cast::<AddrMapOutPara>().write_unaligned(out);
                    if !out_size_ret.is_null() {
                        out_size_ret.write(std::mem::size_of::<AddrMapOutPara>());
                    }
                }
                DRV_ERROR_NONE
            }
            Err(e) => e.code.raw,
        }
    })
}

/// `halGetDeviceInfoByBuff`; the one query simulated is `MODULE_TYPE_AICORE` /
/// `INFO_TYPE_OCCUPY`: the usable AICores as a `uint64_t[2]` bitmap (bit `i` of word 0 is AICore
/// `i`). Other queries are `DRV_ERROR_NOT_SUPPORT`; a buffer under 16 bytes is
/// `DRV_ERROR_INVALID_VALUE`.
///
/// # Safety
///
/// `buf` is null or writable for `*size` bytes; `size` is null or valid for reads and writes.
#[no_mangle]
pub unsafe extern "C" fn halGetDeviceInfoByBuff(
    dev_id: u32,
    module_type: i32,
    info_type: i32,
    buf: *mut c_void,
    size: *mut i32,
) -> drvError_t {
    call("halGetDeviceInfoByBuff", |sim| {
        if u32::try_from(module_type).ok() != Some(MODULE_TYPE_AICORE)
            || u32::try_from(info_type).ok() != Some(INFO_TYPE_OCCUPY)
        {
            return DRV_ERROR_NOT_SUPPORT;
        }
        if buf.is_null() || size.is_null() {
            return DRV_ERROR_INVALID_VALUE;
        }
        // SAFETY: non-null and valid for reads per the contract.
        if unsafe { size.read() } < OCCUPY_BYTES {
            return DRV_ERROR_INVALID_VALUE;
        }
        let Some(card) = sim.visible.logical(dev_id) else {
            return DRV_ERROR_INVALID_DEVICE;
        };
        match sim.driver.hal_mem_ctl(card) {
            Ok(w) => {
                let bitmap: [u64; 2] = [w.core_mask, 0];
                // SAFETY: `buf` is writable for at least 16 bytes (checked above), maybe
                // unaligned; `size` is valid for writes.
                unsafe {
                    buf.cast::<[u64; 2]>().write_unaligned(bitmap);
                    size.write(OCCUPY_BYTES);
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
const _: PFN_halGetDeviceInfoByBuff = Some(halGetDeviceInfoByBuff);

#[cfg(test)]
mod tests {
    use super::*;

    fn aicore(core: u32) -> res_map_info {
        res_map_info {
            target_proc_type: PROCESS_CP1,
            res_type: RES_AICORE,
            res_id: core,
            flag: 0,
            rsv: [0; RES_MAP_INFO_RSV_LEN as usize],
        }
    }

    #[test]
    fn res_map_takes_only_what_the_driver_takes() {
        assert_eq!(res_map_refusal(&aicore(3)), None);
        let with = |f: fn(&mut res_map_info)| {
            let mut i = aicore(0);
            f(&mut i);
            res_map_refusal(&i)
        };
        // The old declaration's AICore type (1) is another register set, not simulated.
        assert_eq!(
            with(|i| i.res_type = RES_HSCB_AICORE),
            Some(DRV_ERROR_NOT_SUPPORT)
        );
        assert_eq!(
            with(|i| i.res_type = RES_MAP_TYPE_MAX),
            Some(DRV_ERROR_PARA_ERROR)
        );
        assert_eq!(with(|i| i.res_type = 0x7fff_ffff), Some(DRV_ERROR_PARA_ERROR));
        assert_eq!(with(|i| i.rsv[0] = 1), Some(DRV_ERROR_NOT_SUPPORT));
        assert_eq!(with(|i| i.flag = 1), Some(DRV_ERROR_NOT_SUPPORT));
        assert_eq!(with(|i| i.target_proc_type = 5), Some(DRV_ERROR_NOT_SUPPORT));
    }

    #[test]
    fn mem_ctl_refuses_an_unknown_type_and_the_old_invented_request() {
        let input = AddrMapInPara {
            addr_type: ADDR_MAP_TYPE_REG_AIC_CTRL,
            devid: 2,
        };
        let out = AddrMapOutPara { ptr: 0, len: 0 };
        let p = (&input as *const AddrMapInPara).cast::<c_void>();
        let o = (&out as *const AddrMapOutPara).cast::<c_void>();
        let size = std::mem::size_of::<AddrMapInPara>();
        let req = |t: c_int, n: usize| {
            // SAFETY: `p` is readable for `size` bytes, and `n` is never more.
            unsafe { mem_ctl_request(t, p, n, o) }
        };
        assert_eq!(req(CTRL_TYPE_ADDR_MAP as c_int, size).map(|i| i.devid), Ok(2));
        assert_eq!(req(0x4347, size).unwrap_err(), DRV_ERROR_NOT_SUPPORT);
        assert_eq!(req(CTRL_TYPE_MAX, size).unwrap_err(), DRV_ERROR_NOT_SUPPORT);
        assert_eq!(req(-1, size).unwrap_err(), DRV_ERROR_NOT_SUPPORT);
        assert_eq!(
            req(CTRL_TYPE_ADDR_MAP as c_int, 4).unwrap_err(),
            DRV_ERROR_INVALID_VALUE
        );
        let other = AddrMapInPara {
            addr_type: 0,
            devid: 2,
        };
        // SAFETY: `other` is readable for `size` bytes.
        let r = unsafe { mem_ctl_request(0, (&other as *const AddrMapInPara).cast(), size, o) };
        assert_eq!(r.unwrap_err(), DRV_ERROR_NOT_SUPPORT);
    }
}
