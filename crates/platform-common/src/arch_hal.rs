//! [`ArchHal`]: the function table through which an arch crate maps its AICore registers on the
//! CANN driver, and [`HalLibrary`], what that driver lends the table's functions.
//!
//! The two arches map registers with different HAL calls (issue 18 item 4): a5 one `halResMap`
//! per core (`RES_AICORE`), a2a3 `halGetDeviceInfoByBuff(MODULE_TYPE_AICORE, INFO_TYPE_OCCUPY)`
//! and `halMemCtl(CTRL_TYPE_ADDR_MAP, ...)`. Each arch crate owns its calls, the symbols they
//! need and the constants they pass (`platform_a5::hal`, `platform_a2a3::hal`) and states them as
//! one [`ArchHal`] in its `ArchEntry`; the `acl` driver checks [`ArchHal::required`] at load and
//! forwards [`crate::Driver::hal_res_map`] / [`crate::Driver::hal_mem_ctl`] to the table. What
//! both share stays here: looking a symbol up in the loaded libraries, the logical-to-physical id
//! translation the HAL needs ([`crate::visible`]), and a `drvError_t` as a typed error.
//!
//! The simulated card answers both calls for both arches itself (it is one machine serving both);
//! this table is the real driver's only. This file never names an arch and makes no C call.

use std::ffi::c_void;
use std::fmt;

use crate::driver::{DeviceId, DriverCall, DriverResult, RegisterWindow};
use crate::error::{codes, Code, DriverError};
use crate::visible::PhysicalId;

/// The loaded CANN libraries as an arch's register mapping uses them (the `acl` driver implements
/// it).
pub trait HalLibrary {
    /// The address of the symbol `name` in the loaded libraries (searched in load order), `None`
    /// when none exports it. Calling it is the caller's business: it must know the symbol's
    /// declared type (a `PFN_*` of the generated bindings).
    fn symbol_address(&self, name: &'static str) -> Option<*mut c_void>;

    /// The physical id the HAL knows logical `device` by (upstream's `acl_to_hal_device_id`,
    /// hw-native-sys/simpler src/common/platform/include/common/acl_hal_device.h); a card the
    /// process's map does not show is `call`'s `ACL_ERROR_INVALID_DEVICEID`, as the runtime
    /// refuses it.
    fn hal_device(&self, call: DriverCall, device: DeviceId) -> DriverResult<PhysicalId>;
}

/// a5's mapping: the address of AICore `core`'s registers on logical `device`.
pub type ResMapFn = fn(&dyn HalLibrary, DeviceId, u32) -> DriverResult<u64>;
/// a2a3's mapping: the register window and partial-good mask of logical `device`.
pub type MemCtlFn = fn(&dyn HalLibrary, DeviceId) -> DriverResult<RegisterWindow>;

/// An arch's register mapping on the CANN driver: which HAL symbols must resolve for it, and the
/// calls. A call the arch does not make is `None`; the driver answers it with
/// [`codes::LOADER_SYMBOL_MISSING`] (the arch's runner never makes it).
#[derive(Clone, Copy)]
pub struct ArchHal {
    /// The HAL symbols the arch's mapping calls: a load for this arch fails naming those absent.
    pub required: &'static [&'static str],
    /// `halResMap`, where the arch maps registers per core (a5).
    pub res_map: Option<ResMapFn>,
    /// `halMemCtl`, where the arch maps a register window (a2a3).
    pub mem_ctl: Option<MemCtlFn>,
}

impl ArchHal {
    /// No register mapping: what a CANN driver loaded without an arch has (and an arch crate built
    /// without its `onboard` feature states).
    pub const NONE: ArchHal = ArchHal {
        required: &[],
        res_map: None,
        mem_ctl: None,
    };
}

impl fmt::Debug for ArchHal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArchHal")
            .field("required", &self.required)
            .field("res_map", &self.res_map.is_some())
            .field("mem_ctl", &self.mem_ctl.is_some())
            .finish()
    }
}

/// A `drvError_t` of `call` (0 is `DRV_ERROR_NONE`, hicann/runtime
/// pkg_inc/driver/ascend_hal_error.h).
pub fn hal_result(call: DriverCall, rc: i32) -> DriverResult<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(DriverError::new(call, Code::hal(rc)))
    }
}

/// `call`'s symbol `symbol` is exported by none of the loaded libraries (or, for a call the arch
/// does not make, the driver has no mapping for it): a loader error, class infrastructure.
pub fn symbol_missing(call: DriverCall, symbol: &'static str) -> DriverError {
    tracing::error!(call = %call, symbol, "the loaded CANN libraries do not export this symbol, or this arch does not call it");
    DriverError::new(call, codes::LOADER_SYMBOL_MISSING)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hal_code_is_typed_and_zero_is_success() {
        assert_eq!(hal_result(DriverCall::HalResMap, 0), Ok(()));
        assert_eq!(
            hal_result(DriverCall::HalResMap, 62),
            Err(DriverError::new(DriverCall::HalResMap, codes::HAL_NO_PROCESS))
        );
    }

    #[test]
    fn no_mapping_requires_nothing() {
        assert!(ArchHal::NONE.required.is_empty());
        assert!(ArchHal::NONE.res_map.is_none() && ArchHal::NONE.mem_ctl.is_none());
        assert_eq!(
            symbol_missing(DriverCall::HalMemCtl, "halMemCtl").code,
            codes::LOADER_SYMBOL_MISSING
        );
    }
}
