//! Typed driver errors, the raw code a driver call returns, and failure classification.
//!
//! This module owns the meaning of raw codes (their rows live in [`crate::code_table`]). It never
//! inspects message text: a failure's class follows from the error's type and its code alone
//! ([`CodeClass`] for what the code says about the card, [`FailureClass`] for what the attempt
//! was).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::call::DriverCall;
pub use crate::code_table::{lookup, CodeClass, CodeInfo, CodeSource, CodeSpace, CODE_TABLE};
use crate::runtime_message::RuntimeMessage;

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
        lookup(self.space, self.raw)
    }

    /// What the code says about the card: its row's class, else by range (an ACL 1xxxxx is
    /// usage, 2xxxxx resource, anything else a driver returns a device fault; a loader code is
    /// the harness's). A code outside the table is never hardware: only the codes the table names
    /// quarantine a card.
    pub fn class(self) -> CodeClass {
        if let Some(info) = self.info() {
            return info.class;
        }
        match self.space {
            CodeSpace::Acl if (100_000..200_000).contains(&self.raw) => CodeClass::Usage,
            CodeSpace::Acl if (200_000..300_000).contains(&self.raw) => CodeClass::Resource,
            CodeSpace::Acl | CodeSpace::Hal => CodeClass::Device,
            CodeSpace::Loader => CodeClass::Harness,
        }
    }

    /// Whether the code says the card needs service ([`CodeClass::Hardware`]).
    pub fn is_hardware(self) -> bool {
        self.class() == CodeClass::Hardware
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
    /// `ACL_ERROR_RT_SOCKET_CLOSE`: the hdc channel to the card disconnected (hardware).
    pub const RT_SOCKET_CLOSE: Code = Code::acl(507901);
    /// `ACL_ERROR_RT_STREAM_NOT_COMPLETE`: destroying a stream that still has pending work.
    pub const RT_STREAM_NOT_COMPLETE: Code = Code::acl(507004);
    /// `ACL_ERROR_RT_LOST_HEARTBEAT` (hardware).
    pub const RT_LOST_HEARTBEAT: Code = Code::acl(507010);
    /// `ACL_ERROR_RT_DEVICE_MEM_ERROR` (hardware).
    pub const RT_DEVICE_MEM_ERROR: Code = Code::acl(507053);
    /// `ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR` (hardware).
    pub const RT_HBM_MULTI_BIT_ECC_ERROR: Code = Code::acl(507054);
    /// `ACL_ERROR_RT_LINK_ERROR` (hardware).
    pub const RT_LINK_ERROR: Code = Code::acl(507056);
    /// HAL rc 62, `DRV_ERROR_NO_PROCESS` (hicann/runtime pkg_inc/driver/ascend_hal_error.h): what
    /// `halResMap` returns on a sticky context (a5 register mapping).
    pub const HAL_NO_PROCESS: Code = Code::hal(62);
    /// The `acl` driver's library lacks the call's symbol (the call's name is the symbol).
    pub const LOADER_SYMBOL_MISSING: Code = Code::loader(1);
    /// The `acl` driver could not read a kernel blob's file to register it.
    pub const LOADER_BLOB_UNREADABLE: Code = Code::loader(2);
}

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
///
/// Two errors are equal when their call and code are: the runtime's words are not part of what
/// an error is (the in-process simulator says none, `libsim_acl.so` says some, for one failure).
#[derive(Debug, Clone, Copy, thiserror::Error, Serialize, Deserialize)]
#[error("{call} failed: {code}")]
pub struct DriverError {
    /// The driver call that failed.
    pub call: DriverCall,
    /// The raw code it returned.
    pub code: Code,
    /// What the runtime itself said of the failure (`aclGetRecentErrMsg` right after the call),
    /// where it said anything. Words for people: never classified, not part of `Display`.
    #[serde(
        default,
        with = "crate::runtime_message::serde_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub runtime_message: Option<RuntimeMessage>,
}

impl PartialEq for DriverError {
    fn eq(&self, other: &Self) -> bool {
        (self.call, self.code) == (other.call, other.code)
    }
}

impl Eq for DriverError {}

impl DriverError {
    /// An error of `call` with `code`.
    pub const fn new(call: DriverCall, code: Code) -> Self {
        Self {
            call,
            code,
            runtime_message: None,
        }
    }

    /// The error with the runtime's own words `text` attached (blank: none).
    pub fn with_runtime_message(mut self, text: &str) -> Self {
        self.runtime_message = RuntimeMessage::intern(text);
        self
    }

    /// The failure class, from the code alone.
    pub fn class(&self) -> FailureClass {
        classify_code(self.code)
    }
}

/// Classifies a raw driver code into the class of the attempt it ends, from its [`CodeClass`]:
/// usage is usage; resource, device and hardware are device-runtime failures (retried; a hardware
/// code also quarantines its card, which the dispatcher reads from the code); the harness's codes
/// are infrastructure.
pub fn classify_code(code: Code) -> FailureClass {
    match code.class() {
        CodeClass::Usage => FailureClass::Usage,
        CodeClass::Resource | CodeClass::Device | CodeClass::Hardware => FailureClass::DeviceRuntime,
        CodeClass::Harness => FailureClass::Infrastructure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_words_are_kept_but_not_part_of_equality() {
        let plain = DriverError::new(DriverCall::Malloc, codes::RT_MEMORY_ALLOCATION);
        let said = plain.with_runtime_message("EE9999: out of memory");
        assert_eq!(
            said.runtime_message.map(|m| m.as_str()),
            Some("EE9999: out of memory")
        );
        assert_eq!(said, plain);
        assert_ne!(
            said,
            DriverError::new(DriverCall::Free, codes::RT_MEMORY_ALLOCATION)
        );
        let json = serde_json::to_value(said).unwrap();
        assert_eq!(json["runtime_message"], "EE9999: out of memory");
        assert!(serde_json::to_value(plain)
            .unwrap()
            .get("runtime_message")
            .is_none());
        let back: DriverError = serde_json::from_value(json).unwrap();
        assert_eq!(back.runtime_message, said.runtime_message);
    }

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
                assert_ne!((a.space, a.raw), (b.space, b.raw), "{} twice", a.name);
                assert_ne!(a.name, b.name, "{} twice", a.name);
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
        assert_eq!(classify_code(Code::acl(107_999)), FailureClass::Usage);
        assert_eq!(Code::acl(207_999).class(), CodeClass::Resource);
        assert_eq!(Code::acl(599_999).class(), CodeClass::Device);
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

    #[test]
    fn the_issue_names_each_class_by_its_codes() {
        for raw in [507054, 507053, 507010, 507056, 507901] {
            assert_eq!(Code::acl(raw).class(), CodeClass::Hardware, "{raw}");
            assert!(Code::acl(raw).is_hardware());
            assert_eq!(classify_code(Code::acl(raw)), FailureClass::DeviceRuntime);
        }
        for raw in [107019, 107020, 107022, 107023, 107035, 507000, 507018, 507899] {
            assert_eq!(Code::acl(raw).class(), CodeClass::Device, "{raw}");
        }
        assert_eq!(codes::RT_MEMORY_ALLOCATION.class(), CodeClass::Resource);
        assert_eq!(
            classify_code(codes::RT_MEMORY_ALLOCATION),
            FailureClass::DeviceRuntime
        );
        for raw in [107000, 107001, 107002, 100000] {
            assert_eq!(Code::acl(raw).class(), CodeClass::Usage, "{raw}");
        }
        assert_eq!(codes::HAL_NO_PROCESS.class(), CodeClass::Device);
        // Only rows of the table are hardware; no range guess ever quarantines a card.
        assert!(CODE_TABLE
            .iter()
            .filter(|r| r.class == CodeClass::Hardware)
            .all(|r| r.source == CodeSource::RtErrorCodes));
    }
}
