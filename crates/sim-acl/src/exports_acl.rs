//! The `acl*` exports: device, stream, memory and timeout calls of `libascendcl.so`.
//!
//! Each export checks its pointers, calls the process's [`platform_common::sim::SimDriver`] and
//! returns the simulator's raw code. `aclrtResetDeviceForce` takes a lease of its own in the
//! sim root (`abi-leases/`): the C ABI carries none, so the caller's lease (held by the
//! `AclDriver` caller, in its own lock directory) cannot be handed over.

use std::ffi::{c_char, c_void};

use platform_common::acl::bindings::*;
use platform_common::driver::{DevicePtr, Driver, Stream, StreamFailureMode};
use platform_common::error::codes;
use platform_common::lease::DeviceLease;

use crate::abi::{call, code, handle, pointer, write_out};

const INVALID: aclError = ACL_ERROR_INVALID_PARAM;

/// A CANN device id as a card number.
fn card(device_id: i32) -> Result<u32, aclError> {
    u32::try_from(device_id).map_err(|_| codes::INVALID_DEVICEID.raw)
}

/// A CANN timeout in milliseconds (`-1`: forever) as the simulator's `u32`.
fn timeout_ms(timeout: i32) -> u32 {
    u32::try_from(timeout).unwrap_or(u32::MAX)
}

/// `aclInit`.
#[no_mangle]
pub extern "C" fn aclInit(_config_path: *const c_char) -> aclError {
    call("aclInit", |sim| code(sim.driver.init()))
}

/// `aclFinalize`: the simulator keeps its contexts until the process ends; after an unconfirmed
/// force reset of an SDMA-provisioned card it blocks for the remote-event timeout first.
#[no_mangle]
pub extern "C" fn aclFinalize() -> aclError {
    call("aclFinalize", |sim| code(sim.driver.finalize()))
}

/// `aclrtSetDevice`.
#[no_mangle]
pub extern "C" fn aclrtSetDevice(device_id: i32) -> aclError {
    call("aclrtSetDevice", |sim| match card(device_id) {
        Ok(c) => code(sim.driver.set_device(c)),
        Err(rc) => rc,
    })
}

/// `aclrtResetDevice`.
#[no_mangle]
pub extern "C" fn aclrtResetDevice(device_id: i32) -> aclError {
    call("aclrtResetDevice", |sim| match card(device_id) {
        Ok(c) => code(sim.driver.reset_device(c)),
        Err(rc) => rc,
    })
}

/// `aclrtResetDeviceForce`.
#[no_mangle]
pub extern "C" fn aclrtResetDeviceForce(device_id: i32) -> aclError {
    call("aclrtResetDeviceForce", |sim| {
        let c = match card(device_id) {
            Ok(c) => c,
            Err(rc) => return rc,
        };
        match DeviceLease::acquire(&sim.leases, c, "libsim_acl") {
            Ok(lease) => code(sim.driver.reset_device_force(&lease)),
            Err(e) => {
                tracing::error!(card = c, error = %e, "libsim_acl cannot take its reset lease");
                codes::RT_DRV_INTERNAL_ERROR.raw
            }
        }
    })
}

/// `aclrtSetOpExecuteTimeOutV2`.
///
/// # Safety
///
/// `actual_timeout` is null or valid for a write of a `u64`.
#[no_mangle]
pub unsafe extern "C" fn aclrtSetOpExecuteTimeOutV2(timeout: u64, actual_timeout: *mut u64) -> aclError {
    call("aclrtSetOpExecuteTimeOutV2", |sim| {
        let rc = code(sim.driver.set_op_execute_timeout(timeout));
        if rc == ACL_SUCCESS && !actual_timeout.is_null() {
            // SAFETY: non-null and valid for a write per this function's contract.
            unsafe { actual_timeout.write(timeout) };
        }
        rc
    })
}

/// `aclrtSetOpExecuteTimeOut`: the V1 call, in whole seconds.
#[no_mangle]
pub extern "C" fn aclrtSetOpExecuteTimeOut(timeout: u32) -> aclError {
    call("aclrtSetOpExecuteTimeOut", |sim| {
        code(sim.driver.set_op_execute_timeout(u64::from(timeout) * 1_000_000))
    })
}

/// `aclGetRecentErrMsg`: the message of this thread's last failing call (null when none).
#[no_mangle]
pub extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    crate::abi::recent_message()
}

/// The version `aclrtGetVersion` reports for the simulated runtime.
const SIM_VERSION: (i32, i32, i32) = (8, 5, 0);

/// `aclrtGetVersion`: the simulated runtime's version.
///
/// # Safety
///
/// Each pointer is null or valid for a write of an `i32`.
#[no_mangle]
pub unsafe extern "C" fn aclrtGetVersion(major: *mut i32, minor: *mut i32, patch: *mut i32) -> aclError {
    call("aclrtGetVersion", |_| {
        if major.is_null() || minor.is_null() || patch.is_null() {
            return INVALID;
        }
        // SAFETY: non-null and valid for writes per this function's contract.
        unsafe {
            major.write(SIM_VERSION.0);
            minor.write(SIM_VERSION.1);
            patch.write(SIM_VERSION.2);
        }
        ACL_SUCCESS
    })
}

/// `aclrtCreateStream`.
///
/// # Safety
///
/// `stream` is null or valid for a write of an `aclrtStream`.
#[no_mangle]
pub unsafe extern "C" fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError {
    call("aclrtCreateStream", |sim| {
        if stream.is_null() {
            return INVALID;
        }
        let r = sim.driver.create_stream().map(|s| pointer::<c_void>(s.0));
        // SAFETY: non-null and valid for a write per this function's contract.
        unsafe { write_out(r, stream) }
    })
}

/// `aclrtDestroyStream`.
#[no_mangle]
pub extern "C" fn aclrtDestroyStream(stream: aclrtStream) -> aclError {
    call("aclrtDestroyStream", |sim| {
        code(sim.driver.destroy_stream(Stream(handle(stream))))
    })
}

/// `aclrtSetStreamFailureMode`: a mode other than `ACL_CONTINUE_ON_FAILURE` or
/// `ACL_STOP_ON_FAILURE` is refused (100000).
#[no_mangle]
pub extern "C" fn aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64) -> aclError {
    call(
        "aclrtSetStreamFailureMode",
        |sim| match StreamFailureMode::from_raw(mode) {
            Some(m) => code(sim.driver.set_stream_failure_mode(Stream(handle(stream)), m)),
            None => INVALID,
        },
    )
}

/// `aclrtDestroyStreamForce`.
#[no_mangle]
pub extern "C" fn aclrtDestroyStreamForce(stream: aclrtStream) -> aclError {
    call("aclrtDestroyStreamForce", |sim| {
        code(sim.driver.destroy_stream_force(Stream(handle(stream))))
    })
}

/// `aclrtMemcpyAsync`, device to device only (the SDMA copy); the other kinds are refused.
/// The copy's origin is a case's unless `cgSimSetLaunchInfo` said otherwise just before.
#[no_mangle]
pub extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    call("aclrtMemcpyAsync", |sim| {
        if count > dest_max || kind != ACL_MEMCPY_DEVICE_TO_DEVICE {
            return INVALID;
        }
        let origin = crate::state::take_sdma_origin();
        code(sim.driver.sdma_copy(
            Stream(handle(stream)),
            DevicePtr(handle(dst)),
            DevicePtr(handle(src.cast_mut())),
            count,
            origin,
        ))
    })
}

/// `aclrtSynchronizeStreamWithTimeout`.
#[no_mangle]
pub extern "C" fn aclrtSynchronizeStreamWithTimeout(stream: aclrtStream, timeout: i32) -> aclError {
    call("aclrtSynchronizeStreamWithTimeout", |sim| {
        code(
            sim.driver
                .synchronize_stream_with_timeout(Stream(handle(stream)), timeout_ms(timeout)),
        )
    })
}

/// `aclrtSynchronizeDeviceWithTimeout`.
#[no_mangle]
pub extern "C" fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> aclError {
    call("aclrtSynchronizeDeviceWithTimeout", |sim| {
        code(sim.driver.synchronize_device_with_timeout(timeout_ms(timeout)))
    })
}

/// `aclrtMalloc`.
///
/// # Safety
///
/// `dev_ptr` is null or valid for a write of a pointer.
#[no_mangle]
pub unsafe extern "C" fn aclrtMalloc(
    dev_ptr: *mut *mut c_void,
    size: usize,
    _policy: aclrtMemMallocPolicy,
) -> aclError {
    call("aclrtMalloc", |sim| {
        if dev_ptr.is_null() {
            return INVALID;
        }
        let r = sim.driver.malloc(size).map(|p| pointer::<c_void>(p.0));
        // SAFETY: non-null and valid for a write per this function's contract.
        unsafe { write_out(r, dev_ptr) }
    })
}

/// `aclrtFree`.
#[no_mangle]
pub extern "C" fn aclrtFree(dev_ptr: *mut c_void) -> aclError {
    call("aclrtFree", |sim| {
        code(sim.driver.free(DevicePtr(handle(dev_ptr))))
    })
}

/// `aclrtMemcpy`, host to device and device to host (the kinds the driver uses).
///
/// # Safety
///
/// For `ACL_MEMCPY_HOST_TO_DEVICE`, `src` is readable for `count` bytes; for
/// `ACL_MEMCPY_DEVICE_TO_HOST`, `dst` is writable for `count` bytes. The device side is checked
/// by the simulator against its allocation.
#[no_mangle]
pub unsafe extern "C" fn aclrtMemcpy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
) -> aclError {
    call("aclrtMemcpy", |sim| {
        if count > dest_max || dst.is_null() || src.is_null() {
            return INVALID;
        }
        match kind {
            ACL_MEMCPY_HOST_TO_DEVICE => {
                // SAFETY: `src` is non-null and readable for `count` bytes per the contract.
                let bytes = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), count) };
                code(sim.driver.memcpy_to_device(DevicePtr(handle(dst)), bytes))
            }
            ACL_MEMCPY_DEVICE_TO_HOST => {
                // SAFETY: `dst` is non-null and writable for `count` bytes per the contract, and
                // is host memory the simulator's device memory never aliases.
                let bytes = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), count) };
                code(
                    sim.driver
                        .memcpy_to_host(bytes, DevicePtr(handle(src.cast_mut()))),
                )
            }
            _ => INVALID,
        }
    })
}

// Each export has exactly the type the header declares.
const _: PFN_aclInit = Some(aclInit);
const _: PFN_aclrtSetOpExecuteTimeOut = Some(aclrtSetOpExecuteTimeOut);
const _: PFN_aclrtGetVersion = Some(aclrtGetVersion);
const _: PFN_aclGetRecentErrMsg = Some(aclGetRecentErrMsg);
const _: PFN_aclFinalize = Some(aclFinalize);
const _: PFN_aclrtSetDevice = Some(aclrtSetDevice);
const _: PFN_aclrtResetDevice = Some(aclrtResetDevice);
const _: PFN_aclrtResetDeviceForce = Some(aclrtResetDeviceForce);
const _: PFN_aclrtSetOpExecuteTimeOutV2 = Some(aclrtSetOpExecuteTimeOutV2);
const _: PFN_aclrtCreateStream = Some(aclrtCreateStream);
const _: PFN_aclrtDestroyStream = Some(aclrtDestroyStream);
const _: PFN_aclrtSynchronizeStreamWithTimeout = Some(aclrtSynchronizeStreamWithTimeout);
const _: PFN_aclrtSynchronizeDeviceWithTimeout = Some(aclrtSynchronizeDeviceWithTimeout);
const _: PFN_aclrtMalloc = Some(aclrtMalloc);
const _: PFN_aclrtFree = Some(aclrtFree);
const _: PFN_aclrtMemcpy = Some(aclrtMemcpy);
const _: PFN_aclrtMemcpyAsync = Some(aclrtMemcpyAsync);
const _: PFN_aclrtSetStreamFailureMode = Some(aclrtSetStreamFailureMode);
const _: PFN_aclrtDestroyStreamForce = Some(aclrtDestroyStreamForce);
