//! Plain conversions of the `acl` driver's arguments into their C types (device ids, timeouts,
//! handles, argument roles). No call crosses the ABI here.

use std::ffi::c_void;

use super::bindings::{CG_ARG_INPUT, CG_ARG_OUTPUT, CG_ARG_SCALAR};
use crate::driver::{DeviceId, DriverCall, DriverResult, KernelArg};
use crate::error::{codes, DriverError};

/// The V1 op-execute timeout (whole seconds) for `us`: rounded up, never 0 (the default).
pub(super) fn v1_seconds(us: u64) -> u32 {
    u32::try_from(us.div_ceil(1_000_000).max(1)).unwrap_or(u32::MAX)
}

/// A card number as CANN's `int32_t` device id.
pub(super) fn device_i32(call: DriverCall, device: DeviceId) -> DriverResult<i32> {
    i32::try_from(device).map_err(|_| DriverError::new(call, codes::INVALID_DEVICEID))
}

/// A timeout in milliseconds as CANN's `int32_t` (never -1, "forever").
pub(super) fn timeout_i32(ms: u32) -> i32 {
    i32::try_from(ms).unwrap_or(i32::MAX)
}

pub(super) fn as_ptr(raw: u64) -> *mut c_void {
    raw as usize as *mut c_void
}

pub(super) fn arg_role(arg: &KernelArg) -> (u8, u64) {
    match *arg {
        KernelArg::Input(p) => (CG_ARG_INPUT as u8, p.0),
        KernelArg::Output(p) => (CG_ARG_OUTPUT as u8, p.0),
        KernelArg::Scalar(v) => (CG_ARG_SCALAR as u8, v),
    }
}
