//! a2a3's register mapping on the CANN driver: the partial-good mask from
//! `halGetDeviceInfoByBuff(MODULE_TYPE_AICORE, INFO_TYPE_OCCUPY)` and the register window from
//! `halMemCtl(CTRL_TYPE_ADDR_MAP, AddrMapInPara, AddrMapOutPara)`, as [`HAL`] (the `ArchHal` of
//! [`crate::ENTRY`]). The EACCES retry is [`crate::registers`]' (it applies on every driver).
//!
//! The facts it follows: `CTRL_TYPE_ADDR_MAP` is 0 and anything at or above `CTRL_TYPE_MAX` is
//! `DRV_ERROR_NOT_SUPPORT`; `AddrMapInPara {addr_type, devid}`, `AddrMapOutPara {ptr, len}`
//! (hicann/runtime `pkg_inc/driver/ascend_hal_define.h`); the occupy bitmap is `uint64_t[2]`
//! (hicann/runtime `pkg_inc/driver/ascend_hal_base.h`); upstream makes the same two calls in this
//! order with a null reply size (hw-native-sys/simpler
//! `src/a2a3/platform/onboard/host/host_regs.cpp`). The declarations are the generated bindings of
//! `cardguard_cann.h`, which the conformance tests check against those sources. The HAL takes the
//! physical id.
//!
//! This file owns a2a3's HAL symbols and the calls; it never retries and never decides what a
//! failure means. Without the `onboard` feature [`HAL`] maps nothing.

use platform_common::arch_hal::ArchHal;

/// The HAL symbols a2a3's mapping calls, in call order.
pub const REQUIRED: &[&str] = &["halGetDeviceInfoByBuff", "halMemCtl"];

/// a2a3's register mapping on the CANN driver.
#[cfg(feature = "onboard")]
pub const HAL: ArchHal = ArchHal {
    required: REQUIRED,
    res_map: None,
    mem_ctl: Some(onboard::mem_ctl),
};

/// Built without `onboard`: no CANN driver, nothing to map.
#[cfg(not(feature = "onboard"))]
pub const HAL: ArchHal = ArchHal::NONE;

#[cfg(feature = "onboard")]
mod onboard {
    use std::ffi::c_int;
    use std::ptr;

    use platform_common::acl::bindings::{
        AddrMapInPara, AddrMapOutPara, PFN_halGetDeviceInfoByBuff, PFN_halMemCtl, ADDR_MAP_TYPE_REG_AIC_CTRL,
        CTRL_TYPE_ADDR_MAP, INFO_TYPE_OCCUPY, MODULE_TYPE_AICORE,
    };
    use platform_common::acl::hal_symbol;
    use platform_common::arch_hal::{hal_result, symbol_missing, HalLibrary};
    use platform_common::driver::{DeviceId, DriverCall, DriverResult, RegisterWindow};

    /// Words of the usable-core bitmap `halGetDeviceInfoByBuff(MODULE_TYPE_AICORE,
    /// INFO_TYPE_OCCUPY)` fills: `uint64_t[2]` (hicann/runtime pkg_inc/driver/ascend_hal_base.h).
    const OCCUPY_BITMAP_WORDS: usize = 2;

    /// The partial-good mask, then the register window, of logical `device`.
    pub(super) fn mem_ctl(lib: &dyn HalLibrary, device: DeviceId) -> DriverResult<RegisterWindow> {
        let call = DriverCall::HalMemCtl;
        let device = lib.hal_device(call, device)?;
        // SAFETY: each `PFN_*` is the bindings' type of exactly the symbol named.
        let info = unsafe { hal_symbol::<PFN_halGetDeviceInfoByBuff>(lib, "halGetDeviceInfoByBuff") }
            .flatten()
            .ok_or_else(|| symbol_missing(call, "halGetDeviceInfoByBuff"))?;
        // SAFETY: as above.
        let map = unsafe { hal_symbol::<PFN_halMemCtl>(lib, "halMemCtl") }
            .flatten()
            .ok_or_else(|| symbol_missing(call, "halMemCtl"))?;
        let mut bitmap = [0u64; OCCUPY_BITMAP_WORDS];
        let mut size = std::mem::size_of_val(&bitmap) as i32;
        // SAFETY: `bitmap` is writable for `size` bytes and `size` is a valid, writable i32.
        let rc = unsafe {
            info(
                device,
                MODULE_TYPE_AICORE as i32,
                INFO_TYPE_OCCUPY as i32,
                bitmap.as_mut_ptr().cast(),
                &mut size,
            )
        };
        hal_result(call, rc)?;
        let mut input = AddrMapInPara {
            addr_type: ADDR_MAP_TYPE_REG_AIC_CTRL,
            devid: device,
        };
        let mut out = AddrMapOutPara { ptr: 0, len: 0 };
        // SAFETY: `input` is readable for its stated size and `out` writable for its own; the
        // reply size pointer may be null (upstream passes null too).
        let rc = unsafe {
            map(
                CTRL_TYPE_ADDR_MAP as c_int,
                (&mut input as *mut AddrMapInPara).cast(),
                std::mem::size_of::<AddrMapInPara>(),
                (&mut out as *mut AddrMapOutPara).cast(),
                ptr::null_mut(),
            )
        };
        hal_result(call, rc)?;
        Ok(RegisterWindow {
            base: out.ptr,
            core_mask: bitmap[0],
        })
    }
}
