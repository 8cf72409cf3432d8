//! a5's register mapping on the CANN driver: one `halResMap` per AICore, with `RES_AICORE`, as
//! [`HAL`] (the `ArchHal` of [`crate::ENTRY`]).
//!
//! The facts it follows (hicann/driver `pkg_inc/hal_pkg/dpa_pkg.h` and
//! `src/ascend_hal/dpa/rmo/rmo_user_res_map.c`): `res_map_info` is five `u32`s; `halResMap` refuses
//! unless `target_proc_type` is `PROCESS_CP1` and `flag` and `rsv` are 0; `RES_AICORE` is 0 (1 is
//! `RES_HSCB_AICORE`, another register set, which would map the wrong registers without an
//! error). The declarations are the generated bindings of `cardguard_cann.h`, which the
//! conformance tests check against those sources. The HAL takes the physical id.
//!
//! This file owns a5's HAL symbols and the call; it never retries and never decides what a
//! failure means (the device runner does). Without the `onboard` feature [`HAL`] maps nothing.

use platform_common::arch_hal::ArchHal;

/// The HAL symbols a5's mapping calls.
pub const REQUIRED: &[&str] = &["halResMap"];

/// a5's register mapping on the CANN driver.
#[cfg(feature = "onboard")]
pub const HAL: ArchHal = ArchHal {
    required: REQUIRED,
    res_map: Some(onboard::res_map),
    mem_ctl: None,
};

/// Built without `onboard`: no CANN driver, nothing to map.
#[cfg(not(feature = "onboard"))]
pub const HAL: ArchHal = ArchHal::NONE;

#[cfg(feature = "onboard")]
mod onboard {
    use std::ffi::{c_uint, c_ulong};

    use platform_common::acl::bindings::{
        res_map_info, PFN_halResMap, PROCESS_CP1, RES_AICORE, RES_MAP_INFO_RSV_LEN,
    };
    use platform_common::acl::hal_symbol;
    use platform_common::arch_hal::{hal_result, symbol_missing, HalLibrary};
    use platform_common::driver::{DeviceId, DriverCall, DriverResult};

    /// `halResMap(physical, {PROCESS_CP1, RES_AICORE, core, 0, {0}})`: the address of AICore
    /// `core`'s registers on logical `device`.
    pub(super) fn res_map(lib: &dyn HalLibrary, device: DeviceId, core: u32) -> DriverResult<u64> {
        let call = DriverCall::HalResMap;
        let device = lib.hal_device(call, device)?;
        // SAFETY: `PFN_halResMap` is the bindings' type of exactly this symbol.
        let f = unsafe { hal_symbol::<PFN_halResMap>(lib, "halResMap") }
            .flatten()
            .ok_or_else(|| symbol_missing(call, "halResMap"))?;
        let mut info = res_map_info {
            target_proc_type: PROCESS_CP1,
            res_type: RES_AICORE,
            res_id: core,
            flag: 0,
            rsv: [0; RES_MAP_INFO_RSV_LEN as usize],
        };
        let mut va: c_ulong = 0;
        let mut len: c_uint = 0;
        // SAFETY: `info`, `va` and `len` are valid for the call; the device id is a plain value.
        hal_result(call, unsafe { f(device as c_uint, &mut info, &mut va, &mut len) })?;
        #[allow(clippy::useless_conversion)] // `c_ulong` is 32 bits on some targets.
        Ok(u64::from(va))
    }
}
