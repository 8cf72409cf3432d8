//! The rules every export follows: a panic never unwinds across the C ABI (it becomes
//! `ACL_ERROR_INTERNAL_ERROR`), an unusable configuration fails every call with
//! `ACL_ERROR_INVALID_PARAM`, and a driver result becomes its raw code.
//!
//! This file owns those conversions and nothing else.

use std::panic::{catch_unwind, AssertUnwindSafe};

use platform_common::acl::bindings::{aclError, ACL_ERROR_INVALID_PARAM, ACL_SUCCESS};
use platform_common::driver::DriverResult;

use crate::state::{sim, Sim};

/// `ACL_ERROR_INTERNAL_ERROR`: what a panic inside the simulator becomes.
pub(crate) const ACL_ERROR_INTERNAL_ERROR: aclError = 500_000;

/// Runs `f` on the process's simulator, with the rules above.
pub(crate) fn call(name: &'static str, f: impl FnOnce(&'static Sim) -> aclError) -> aclError {
    let Some(sim) = sim() else {
        return ACL_ERROR_INVALID_PARAM;
    };
    match catch_unwind(AssertUnwindSafe(|| f(sim))) {
        Ok(rc) => rc,
        Err(_) => {
            tracing::error!(call = name, "panic inside libsim_acl");
            ACL_ERROR_INTERNAL_ERROR
        }
    }
}

/// The raw code of a driver result (the code's own space: ACL or HAL numbering).
pub(crate) fn code<T>(r: DriverResult<T>) -> aclError {
    match r {
        Ok(_) => ACL_SUCCESS,
        Err(e) => e.code.raw,
    }
}

/// `Ok(v)` -> `v` written through `out`; `Err` -> its code.
///
/// # Safety
///
/// `out` must be valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(r: DriverResult<T>, out: *mut T) -> aclError {
    match r {
        Ok(v) => {
            // SAFETY: the caller guarantees `out` is valid for a write of `T`.
            unsafe { out.write(v) };
            ACL_SUCCESS
        }
        Err(e) => e.code.raw,
    }
}

/// A pointer-sized handle as the simulator's `u64`.
pub(crate) fn handle<T>(p: *mut T) -> u64 {
    p as usize as u64
}

/// The simulator's `u64` handle as a pointer-sized handle.
pub(crate) fn pointer<T>(h: u64) -> *mut T {
    h as usize as *mut T
}
