//! Typed driver errors, the table of every code cardguard meets, and failure classification.
//!
//! This module owns the meaning of raw codes. It never inspects message text: a failure's class
//! follows from the error's type and its code alone ([`FailureClass`]).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::call::DriverCall;

/// Which numbering a raw code belongs to: the ACL/runtime space (`aclError`, `rtError_t`), the
/// HAL driver space (`drvError_t`, e.g. `halResMap` rc 62), or cardguard's own loader space (a
/// CANN symbol that could not be resolved at call time, [`codes::LOADER_SYMBOL_MISSING`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeSpace {
    /// `aclError` / `rtError_t` codes (1xxxxx, 2xxxxx, 5xxxxx).
    Acl,
    /// HAL (`drvError_t`) return codes.
    Hal,
    /// cardguard's `acl` loader: the call never reached the library (its symbol is absent).
    Loader,
}

/// A raw code as a driver call returned it. `Copy`; names and hints are looked up only when shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Code {
    /// The numbering the raw value belongs to.
    pub space: CodeSpace,
    /// The raw value.
    pub raw: i32,
}

impl Code {
    /// An ACL/runtime code.
    pub const fn acl(raw: i32) -> Self {
        Self {
            space: CodeSpace::Acl,
            raw,
        }
    }

    /// A HAL return code.
    pub const fn hal(raw: i32) -> Self {
        Self {
            space: CodeSpace::Hal,
            raw,
        }
    }

    /// A loader code of the `acl` driver.
    pub const fn loader(raw: i32) -> Self {
        Self {
            space: CodeSpace::Loader,
            raw,
        }
    }

    /// The table entry for this code, when cardguard knows it.
    pub fn info(self) -> Option<&'static CodeInfo> {
        CODE_TABLE.iter().find(|c| c.code == self)
    }

    /// The symbolic name, or `UNKNOWN` for a code outside the table.
    pub fn name(self) -> &'static str {
        self.info().map_or("UNKNOWN", |i| i.name)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.space {
            CodeSpace::Acl => write!(f, "{} ({})", self.raw, self.name()),
            CodeSpace::Hal => write!(f, "rc={} ({})", self.raw, self.name()),
            CodeSpace::Loader => write!(f, "loader error {} ({})", self.raw, self.name()),
        }
    }
}

/// Well-known codes, by name, so code never spells a magic number twice.
pub mod codes {
    use super::Code;

    /// `ACL_ERROR_INVALID_PARAM`.
    pub const INVALID_PARAM: Code = Code::acl(100000);
    /// `ACL_ERROR_REPEAT_INITIALIZE`: `aclInit` called twice in one process (harmless).
    pub const REPEAT_INITIALIZE: Code = Code::acl(100002);
    /// `ACL_ERROR_RT_INVALID_DEVICEID`.
    pub const INVALID_DEVICEID: Code = Code::acl(107001);
    /// `ACL_ERROR_RT_CONTEXT_NULL`: a call that needs a current device before any `set_device`.
    pub const RT_CONTEXT_NULL: Code = Code::acl(107002);
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION`: the seed's trigger at `rtKernelLaunchWithHandleV2`.
    pub const RT_MEMORY_ALLOCATION: Code = Code::acl(207001);
    /// `ACL_ERROR_RT_INTERNAL_ERROR`: a5 op-timeout at the AICPU stream sync; soft re-init's
    /// `aclrtSetOpExecuteTimeOutV2`.
    pub const RT_INTERNAL_ERROR: Code = Code::acl(507000);
    /// `ACL_ERROR_RT_CONTEXT_RELEASE_ERROR`.
    pub const RT_CONTEXT_RELEASE_ERROR: Code = Code::acl(507007);
    /// `ACL_ERROR_RT_DEV_SETUP_ERROR`: a card that cannot be opened at all (sim plan `dead`).
    pub const RT_DEV_SETUP_ERROR: Code = Code::acl(507033);
    /// `ACL_ERROR_RT_AICORE_TIMEOUT`.
    pub const RT_AICORE_TIMEOUT: Code = Code::acl(507014);
    /// `ACL_ERROR_RT_AICORE_EXCEPTION`: a2a3 bounded device drain on a poisoned context.
    pub const RT_AICORE_EXCEPTION: Code = Code::acl(507015);
    /// `ACL_ERROR_RT_AICPU_TIMEOUT`.
    pub const RT_AICPU_TIMEOUT: Code = Code::acl(507017);
    /// `ACL_ERROR_RT_AICPU_EXCEPTION`: a2a3 op-timeout; sync of an error-state stream.
    pub const RT_AICPU_EXCEPTION: Code = Code::acl(507018);
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`: a5 bounded device drain on a poisoned context.
    pub const RT_STREAM_SYNC_TIMEOUT: Code = Code::acl(507046);
    /// `ACL_ERROR_RT_DRV_INTERNAL_ERROR`: malloc / stream creation on a sticky context.
    pub const RT_DRV_INTERNAL_ERROR: Code = Code::acl(507899);
    /// `ACL_ERROR_RT_SOCKET_CLOSE`: destroying a stream that still has pending work.
    pub const RT_SOCKET_CLOSE: Code = Code::acl(507901);
    /// HAL rc 62, `DRV_ERROR_NO_PROCESS` (hicann/runtime pkg_inc/driver/ascend_hal_error.h): what
    /// `halResMap` returns on a sticky context (a5 register mapping).
    pub const HAL_NO_PROCESS: Code = Code::hal(62);
    /// The `acl` driver's library lacks the call's symbol (the call's name is the symbol).
    pub const LOADER_SYMBOL_MISSING: Code = Code::loader(1);
    /// The `acl` driver could not read a kernel blob's file to register it.
    pub const LOADER_BLOB_UNREADABLE: Code = Code::loader(2);
}

/// One row of the code table.
#[derive(Debug)]
pub struct CodeInfo {
    /// The code.
    pub code: Code,
    /// Symbolic name as CANN spells it.
    pub name: &'static str,
    /// What the code means where cardguard meets it.
    pub meaning: &'static str,
    /// What an operator should do.
    pub hint: &'static str,
}

/// Every code in the seed investigation and in DESIGN section 4.
pub static CODE_TABLE: &[CodeInfo] = &[
    CodeInfo {
        code: codes::INVALID_PARAM,
        name: "ACL_ERROR_INVALID_PARAM",
        meaning: "a parameter of the call is invalid",
        hint: "a caller bug or bad input; not a device fault",
    },
    CodeInfo {
        code: codes::REPEAT_INITIALIZE,
        name: "ACL_ERROR_REPEAT_INITIALIZE",
        meaning: "aclInit was already called in this process",
        hint: "harmless; callers treat it as success",
    },
    CodeInfo {
        code: codes::INVALID_DEVICEID,
        name: "ACL_ERROR_RT_INVALID_DEVICEID",
        meaning: "no such device id",
        hint: "check --devices against the cards this host has",
    },
    CodeInfo {
        code: codes::RT_CONTEXT_NULL,
        name: "ACL_ERROR_RT_CONTEXT_NULL",
        meaning: "no current context: the call came before aclrtSetDevice",
        hint: "a caller bug: set the device first",
    },
    CodeInfo {
        code: codes::RT_MEMORY_ALLOCATION,
        name: "ACL_ERROR_RT_MEMORY_ALLOCATION",
        meaning: "kernel launch failed (rtKernelLaunchWithHandleV2); the context is now sticky-errored",
        hint: "usually transient: the runner force-resets the card and retries the case",
    },
    CodeInfo {
        code: codes::RT_INTERNAL_ERROR,
        name: "ACL_ERROR_RT_INTERNAL_ERROR",
        meaning:
            "runtime internal error; on a5 the op-timeout reaped by STARS, seen at the AICPU stream sync",
        hint: "the context is sticky: force-reset the card (the runner does) or use a fresh process",
    },
    CodeInfo {
        code: codes::RT_CONTEXT_RELEASE_ERROR,
        name: "ACL_ERROR_RT_CONTEXT_RELEASE_ERROR",
        meaning: "the context could not be released cleanly",
        hint: "a teardown on a faulted card; force-reset the card",
    },
    CodeInfo {
        code: codes::RT_DEV_SETUP_ERROR,
        name: "ACL_ERROR_RT_DEV_SETUP_ERROR",
        meaning: "the device could not be set up (opened)",
        hint: "the card is broken or absent: quarantine it and use another card",
    },
    CodeInfo {
        code: codes::RT_AICORE_TIMEOUT,
        name: "ACL_ERROR_RT_AICORE_TIMEOUT",
        meaning: "an AICore task exceeded its execution time",
        hint: "a hung kernel; the context is sticky: force-reset the card",
    },
    CodeInfo {
        code: codes::RT_AICORE_EXCEPTION,
        name: "ACL_ERROR_RT_AICORE_EXCEPTION",
        meaning: "AICore exception; on a2a3 the bounded device drain of a poisoned context",
        hint: "the context is sticky: force-reset the card",
    },
    CodeInfo {
        code: codes::RT_AICPU_TIMEOUT,
        name: "ACL_ERROR_RT_AICPU_TIMEOUT",
        meaning: "an AICPU task exceeded its execution time",
        hint: "the context is sticky: force-reset the card",
    },
    CodeInfo {
        code: codes::RT_AICPU_EXCEPTION,
        name: "ACL_ERROR_RT_AICPU_EXCEPTION",
        meaning: "AICPU exception; on a2a3 the op-timeout, and any sync of an error-state stream",
        hint: "the context is sticky: force-reset the card; never sync an error-state stream in teardown",
    },
    CodeInfo {
        code: codes::RT_STREAM_SYNC_TIMEOUT,
        name: "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT",
        meaning: "stream sync timed out; on a5 the bounded device drain of a poisoned context",
        hint: "the drain is never trusted: the runner marks the card unusable and force-resets it",
    },
    CodeInfo {
        code: codes::RT_DRV_INTERNAL_ERROR,
        name: "ACL_ERROR_RT_DRV_INTERNAL_ERROR",
        meaning: "driver internal error; malloc or stream creation on a sticky-errored context (the cascade)",
        hint: "an earlier fault poisoned this process's context: force-reset the card or use a fresh process",
    },
    CodeInfo {
        code: codes::RT_SOCKET_CLOSE,
        name: "ACL_ERROR_RT_SOCKET_CLOSE",
        meaning: "hdc disconnect; destroying a stream that still has pending work",
        hint: "teardown on a faulted card; abandon handles and force-reset",
    },
    CodeInfo {
        code: codes::HAL_NO_PROCESS,
        name: "DRV_ERROR_NO_PROCESS",
        meaning:
            "the driver finds no process for the request (rc 62); on a5 halResMap is the first call to meet a sticky context",
        hint: "an earlier fault poisoned this process's context: force-reset the card or use a fresh process",
    },
    CodeInfo {
        code: codes::LOADER_SYMBOL_MISSING,
        name: "CG_LOADER_SYMBOL_MISSING",
        meaning: "the loaded CANN libraries do not export the call's symbol; the call never ran",
        hint: "point ONBOARD_ACL_LIB or ASCEND_HOME_PATH at a CANN install that has it",
    },
    CodeInfo {
        code: codes::LOADER_BLOB_UNREADABLE,
        name: "CG_LOADER_BLOB_UNREADABLE",
        meaning: "the kernel blob's file could not be read for registration; the call never ran",
        hint: "rebuild the kernels (cargo xtask build-kernels) and check the blob directory",
    },
];

/// The failure classes the runner acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The device or its context failed: heal the pool, reset the card, retry the case.
    DeviceRuntime,
    /// The case ran and computed a wrong answer: never retried.
    Result,
    /// The harness around the device failed (library missing, lane died, no card left).
    Infrastructure,
    /// The caller asked for something invalid: never retried.
    Usage,
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::DeviceRuntime => "device_runtime",
            Self::Result => "result",
            Self::Infrastructure => "infrastructure",
            Self::Usage => "usage",
        })
    }
}

/// A driver call failed. Names the call and carries the raw code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{call} failed: {code}")]
pub struct DriverError {
    /// The driver call that failed.
    pub call: DriverCall,
    /// The raw code it returned.
    pub code: Code,
}

impl DriverError {
    /// An error of `call` with `code`.
    pub const fn new(call: DriverCall, code: Code) -> Self {
        Self { call, code }
    }

    /// The failure class, from the code alone.
    pub fn class(&self) -> FailureClass {
        classify_code(self.code)
    }
}

/// Classifies a raw driver code. Parameter errors are usage; everything else a driver returns is a
/// device-runtime failure (the context may be poisoned, so the runner treats it as such).
pub fn classify_code(code: Code) -> FailureClass {
    match code.space {
        CodeSpace::Acl if code == codes::INVALID_PARAM || code == codes::INVALID_DEVICEID => {
            FailureClass::Usage
        }
        // 1xxxxx other than the above: ACL-level misuse (uninitialised, repeat init...).
        CodeSpace::Acl if (100000..200000).contains(&code.raw) => FailureClass::Usage,
        CodeSpace::Acl | CodeSpace::Hal => FailureClass::DeviceRuntime,
        // The harness could not reach the driver: no device was involved.
        CodeSpace::Loader => FailureClass::Infrastructure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_seed_code_has_a_row() {
        for raw in [
            207001, 507000, 507014, 507015, 507017, 507018, 507046, 507899, 507901, 507007, 100002,
        ] {
            assert!(Code::acl(raw).info().is_some(), "no table row for {raw}");
        }
        assert_eq!(Code::hal(62).name(), "DRV_ERROR_NO_PROCESS");
    }

    #[test]
    fn table_has_no_duplicates() {
        for (i, a) in CODE_TABLE.iter().enumerate() {
            for b in &CODE_TABLE[i + 1..] {
                assert_ne!(a.code, b.code, "{} twice", a.name);
            }
        }
    }

    #[test]
    fn classification_is_by_code() {
        assert_eq!(
            classify_code(codes::RT_DRV_INTERNAL_ERROR),
            FailureClass::DeviceRuntime
        );
        assert_eq!(classify_code(codes::HAL_NO_PROCESS), FailureClass::DeviceRuntime);
        assert_eq!(classify_code(codes::INVALID_PARAM), FailureClass::Usage);
        assert_eq!(classify_code(Code::acl(999_999)), FailureClass::DeviceRuntime);
        assert_eq!(
            classify_code(codes::LOADER_SYMBOL_MISSING),
            FailureClass::Infrastructure
        );
    }

    #[test]
    fn display_names_call_and_code() {
        let e = DriverError::new(DriverCall::Malloc, codes::RT_DRV_INTERNAL_ERROR);
        assert_eq!(
            e.to_string(),
            "aclrtMalloc failed: 507899 (ACL_ERROR_RT_DRV_INTERNAL_ERROR)"
        );
        let e = DriverError::new(DriverCall::HalResMap, codes::HAL_NO_PROCESS);
        assert_eq!(e.to_string(), "halResMap failed: rc=62 (DRV_ERROR_NO_PROCESS)");
        let e = DriverError::new(DriverCall::ResetDeviceForce, codes::LOADER_SYMBOL_MISSING);
        assert_eq!(
            e.to_string(),
            "aclrtResetDeviceForce failed: loader error 1 (CG_LOADER_SYMBOL_MISSING)"
        );
    }
}
