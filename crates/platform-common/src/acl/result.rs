//! Raw return codes of the C calls to typed [`DriverError`]s: one small function per documented
//! set of codes (`aclError` and `rtError_t` share the ACL numbering, so both go through `acl`; a `drvError_t`
//! goes through [`crate::arch_hal::hal_result`], as only the arch crates' HAL calls return one).
//!
//! This file never names or classifies a code: the code table in [`crate::error`] does.

use super::bindings::{aclError, ACL_SUCCESS};
use crate::driver::{DriverCall, DriverResult};
use crate::error::{codes, Code, DriverError};

/// An `aclError` of `call`.
pub(crate) fn acl(call: DriverCall, rc: aclError) -> DriverResult<()> {
    if rc == ACL_SUCCESS {
        Ok(())
    } else {
        Err(DriverError::new(call, Code::acl(rc)))
    }
}

/// `call`'s symbol is exported by none of the loaded libraries.
pub(crate) fn missing(call: DriverCall, symbol: &'static str) -> DriverError {
    tracing::error!(call = %call, symbol, "the loaded CANN libraries do not export this symbol");
    DriverError::new(call, codes::LOADER_SYMBOL_MISSING)
}

/// An argument that cannot cross the C ABI (a device id or count beyond the C type).
pub(crate) fn invalid(call: DriverCall) -> DriverError {
    DriverError::new(call, codes::INVALID_PARAM)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{CodeSpace, FailureClass};

    #[test]
    fn success_is_ok_and_codes_keep_their_space() {
        assert!(acl(DriverCall::Malloc, 0).is_ok());
        // `rtError_t` shares the ACL numbering.
        let e = acl(DriverCall::LaunchAicore, 207001).unwrap_err();
        assert_eq!(e.code, codes::RT_MEMORY_ALLOCATION);
        // A `drvError_t` (the arch crates' HAL calls) keeps the HAL space.
        let e = crate::arch_hal::hal_result(DriverCall::HalResMap, 62).unwrap_err();
        assert_eq!(e.code, codes::HAL_NO_PROCESS);
        let e = missing(DriverCall::ResetDeviceForce, "aclrtResetDeviceForce");
        assert_eq!(e.code.space, CodeSpace::Loader);
        assert_eq!(e.class(), FailureClass::Infrastructure);
    }
}
