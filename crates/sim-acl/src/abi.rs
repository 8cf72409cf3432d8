//! The rules every export follows: a panic never unwinds across the C ABI (it becomes
//! `ACL_ERROR_INTERNAL_ERROR`), an unusable configuration fails every call with
//! `ACL_ERROR_INVALID_PARAM`, a driver result becomes its raw code, and a failing call leaves
//! a message for `aclGetRecentErrMsg` on its thread (kept until the thread's next failure) and a
//! line in the process's device log under `ASCEND_PROCESS_LOG_PATH`, where that is set (the
//! plog layout of `platform_common::sim::Plog`).
//!
//! This file owns those conversions and nothing else.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use platform_common::acl::bindings::{aclError, ACL_ERROR_INVALID_PARAM, ACL_SUCCESS};
use platform_common::driver::DriverResult;
use platform_common::sim::Plog;
use platform_common::Code;

use crate::state::{sim, Sim};

/// `ACL_ERROR_INTERNAL_ERROR`: what a panic inside the simulator becomes.
pub(crate) const ACL_ERROR_INTERNAL_ERROR: aclError = 500_000;

/// Runs `f` on the process's simulator, with the rules above.
pub(crate) fn call(name: &'static str, f: impl FnOnce(&'static Sim) -> aclError) -> aclError {
    let rc = match sim() {
        None => ACL_ERROR_INVALID_PARAM,
        Some(sim) => match catch_unwind(AssertUnwindSafe(|| f(sim))) {
            Ok(rc) => rc,
            Err(_) => {
                tracing::error!(call = name, "panic inside libsim_acl");
                ACL_ERROR_INTERNAL_ERROR
            }
        },
    };
    if rc != ACL_SUCCESS {
        remember_failure(name, rc);
    }
    rc
}

thread_local! {
    /// The message of this thread's last failing call.
    static RECENT: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records the message a failing `name` leaves, in the shape of the runtime's error messages
/// (an error id, then what failed and its code).
fn remember_failure(name: &str, rc: aclError) {
    let text =
        format!("EE9999: Inner Error! {name} execute failed, error code {rc} (simulated by libsim_acl)");
    // The text holds no NUL: it is made of a symbol name and digits.
    let text = CString::new(text).ok();
    RECENT.with(|r| *r.borrow_mut() = text);
    static PLOG: OnceLock<Option<Plog>> = OnceLock::new();
    if let Some(plog) = PLOG.get_or_init(Plog::from_env) {
        // The HAL exports return HAL codes, the others ACL codes.
        let code = if name.starts_with("hal") {
            Code::hal(rc)
        } else {
            Code::acl(rc)
        };
        plog.call_failed(name, code);
    }
}

/// The message of this thread's last failing call, or null when none failed; the string lives
/// until this thread's next failing call.
pub(crate) fn recent_message() -> *const c_char {
    RECENT.with(|r| r.borrow().as_ref().map_or(std::ptr::null(), |c| c.as_ptr()))
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
