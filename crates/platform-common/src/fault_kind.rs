//! The words an operator uses for a fault: [`FaultKind`] (`op-timeout`, `launch failure`,
//! `hardware fault`, ...) and [`describe`]'s `op-timeout (507000 at stream sync)`.
//!
//! The kind follows from typed data only: the code's row of the code table (its class, its
//! op-timeout mark and label), the call it failed in, and the arch's facts (the code an arch's
//! op-timeout and its bounded drain surface with). It never reads a message. This file owns the
//! vocabulary and the rule; the report crate shows it (the summary's failed cases and card lines).

use std::fmt;

use crate::arch::ArchFacts;
use crate::call::DriverCall;
use crate::code_table::{lookup, CodeClass};
use crate::error::{Code, CodeSpace};

/// What kind of fault a failed call was, in an operator's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// An op ran past its execution time and was reaped (the arch's op-timeout code at a stream
    /// sync, or a code that says so wherever it is met).
    OpTimeout,
    /// A kernel launch call itself failed.
    LaunchFailure,
    /// The card is damaged or unreachable (a hardware code: HBM ECC, a link, the heartbeat).
    HardwareFault,
    /// The context was already sticky: the cascade of an earlier fault (`507899`, HAL rc 62) or
    /// the arch's bounded drain of a poisoned context.
    StickyContext,
    /// Any other device fault (an exception, an abort): the context is sticky from here.
    DeviceFault,
    /// A device resource ran out.
    ResourceExhausted,
    /// The caller asked for something invalid.
    UsageError,
    /// cardguard could not reach the driver.
    HarnessFailure,
    /// A code the table does not know.
    UnknownCode,
}

impl FaultKind {
    /// The kind of `code`, failed in `call` (when a call is known) on the arch of `facts`.
    pub fn of(facts: &ArchFacts, call: Option<DriverCall>, code: Code) -> Self {
        let Some(row) = lookup(code.space, code.raw) else {
            return Self::UnknownCode;
        };
        let at_stream_sync = call == Some(DriverCall::SynchronizeStreamWithTimeout);
        let at_device_sync = call == Some(DriverCall::SynchronizeDeviceWithTimeout);
        let at_launch = matches!(call, Some(DriverCall::LaunchAicore | DriverCall::LaunchAicpu));
        match row.class {
            CodeClass::Hardware => Self::HardwareFault,
            CodeClass::Harness => Self::HarnessFailure,
            CodeClass::Usage => Self::UsageError,
            _ if at_launch => Self::LaunchFailure,
            _ if row.op_timeout || (at_stream_sync && code == facts.op_timeout) => Self::OpTimeout,
            _ if at_device_sync && code == facts.drain_error => Self::StickyContext,
            _ if code == crate::error::codes::RT_DRV_INTERNAL_ERROR || code.space == CodeSpace::Hal => {
                Self::StickyContext
            }
            CodeClass::Resource => Self::ResourceExhausted,
            CodeClass::Device => Self::DeviceFault,
        }
    }

    /// The kind as people read it.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpTimeout => "op-timeout",
            Self::LaunchFailure => "launch failure",
            Self::HardwareFault => "hardware fault",
            Self::StickyContext => "sticky context",
            Self::DeviceFault => "device fault",
            Self::ResourceExhausted => "resource exhausted",
            Self::UsageError => "usage error",
            Self::HarnessFailure => "harness failure",
            Self::UnknownCode => "unknown code",
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A code as people read it in a sentence: an ACL code by its number (`507000`), a code of
/// another space with its space (`HAL rc 62`, `loader error 1`), so the two never look alike.
pub fn short_code(code: Code) -> String {
    match code.space {
        CodeSpace::Acl => code.raw.to_string(),
        CodeSpace::Hal => format!("HAL rc {}", code.raw),
        CodeSpace::Loader => format!("loader error {}", code.raw),
    }
}

/// The fault in one phrase: its kind, then its code and where it was met or what it means
/// (`op-timeout (507000 at stream sync)`, `launch failure (207001)`, `hardware fault (507054 HBM
/// ECC)`, `sticky context (507899 at malloc)`).
pub fn describe(facts: &ArchFacts, call: Option<DriverCall>, code: Code) -> String {
    let kind = FaultKind::of(facts, call, code);
    let mut s = format!("{kind} ({}", short_code(code));
    match (kind, lookup(code.space, code.raw).and_then(|r| r.label), call) {
        (_, Some(label), _) => {
            s.push(' ');
            s.push_str(label);
        }
        (FaultKind::LaunchFailure, None, _) | (_, None, None) => {}
        (_, None, Some(call)) => {
            s.push_str(" at ");
            s.push_str(call.what());
        }
    }
    s.push(')');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::Arch;
    use crate::error::codes;

    /// a5's and a2a3's facts as their crates state them (this crate names none; the arch crates'
    /// own tests check the real values).
    const A5: ArchFacts = ArchFacts {
        arch: Arch::A5,
        max_block_dim: 36,
        op_timeout: codes::RT_INTERNAL_ERROR,
        drain_error: codes::RT_STREAM_SYNC_TIMEOUT,
    };
    const A2A3: ArchFacts = ArchFacts {
        arch: Arch::A2a3,
        max_block_dim: 24,
        op_timeout: codes::RT_AICPU_EXCEPTION,
        drain_error: codes::RT_AICORE_EXCEPTION,
    };

    #[test]
    fn every_class_of_the_code_table_has_its_words() {
        use DriverCall as C;
        #[rustfmt::skip]
        let rows: &[(&ArchFacts, Option<DriverCall>, Code, &str)] = &[
            (&A5,   Some(C::SynchronizeStreamWithTimeout), codes::RT_INTERNAL_ERROR,  "op-timeout (507000 at stream sync)"),
            (&A2A3, Some(C::SynchronizeStreamWithTimeout), codes::RT_AICPU_EXCEPTION, "op-timeout (507018 at stream sync)"),
            (&A5,   Some(C::SynchronizeStreamWithTimeout), codes::RT_AICPU_EXCEPTION, "device fault (507018 at stream sync)"),
            (&A2A3, Some(C::SynchronizeStreamWithTimeout), codes::RT_INTERNAL_ERROR,  "device fault (507000 at stream sync)"),
            (&A5,   Some(C::SynchronizeStreamWithTimeout), Code::acl(507014),         "op-timeout (507014 at stream sync)"),
            (&A5,   Some(C::LaunchAicore),                 codes::RT_MEMORY_ALLOCATION, "launch failure (207001)"),
            (&A5,   Some(C::LaunchAicpu),                  codes::RT_AICORE_EXCEPTION, "launch failure (507015)"),
            (&A5,   Some(C::SynchronizeStreamWithTimeout), Code::acl(507054),         "hardware fault (507054 HBM ECC)"),
            (&A5,   Some(C::SynchronizeStreamWithTimeout), Code::acl(507901),         "hardware fault (507901 hdc disconnected)"),
            (&A5,   Some(C::Malloc),                       codes::RT_DRV_INTERNAL_ERROR, "sticky context (507899 at malloc)"),
            (&A5,   Some(C::HalResMap),                    codes::HAL_NO_PROCESS,     "sticky context (HAL rc 62 at register mapping)"),
            (&A5,   Some(C::SynchronizeDeviceWithTimeout), codes::RT_STREAM_SYNC_TIMEOUT, "sticky context (507046 at device sync)"),
            (&A2A3, Some(C::SynchronizeDeviceWithTimeout), codes::RT_AICORE_EXCEPTION, "sticky context (507015 at device sync)"),
            (&A5,   Some(C::SynchronizeStreamWithTimeout), codes::RT_AICORE_EXCEPTION, "device fault (507015 at stream sync)"),
            (&A5,   Some(C::Malloc),                       Code::acl(207018),         "resource exhausted (207018 at malloc)"),
            (&A5,   Some(C::LaunchAicore),                 codes::INVALID_PARAM,      "usage error (100000 at AICore launch)"),
            (&A5,   Some(C::RegisterKernel),               Code::loader(2),           "harness failure (loader error 2 at kernel registration)"),
            (&A5,   None,                                  Code::acl(999_999),        "unknown code (999999)"),
        ];
        for (facts, call, code, want) in rows {
            assert_eq!(
                describe(facts, *call, *code),
                *want,
                "{call:?} {code:?} on {facts}"
            );
        }
    }

    /// Each class of the table meets one kind of its own at least (nothing falls through).
    #[test]
    fn every_row_has_a_kind_of_its_class() {
        for row in crate::code_table::CODE_TABLE {
            let kind = FaultKind::of(
                &A5,
                Some(DriverCall::Malloc),
                Code {
                    space: row.space,
                    raw: row.raw,
                },
            );
            let fits = match row.class {
                CodeClass::Hardware => kind == FaultKind::HardwareFault,
                CodeClass::Harness => kind == FaultKind::HarnessFailure,
                CodeClass::Usage => kind == FaultKind::UsageError,
                CodeClass::Resource => kind == FaultKind::ResourceExhausted,
                CodeClass::Device => matches!(
                    kind,
                    FaultKind::DeviceFault | FaultKind::OpTimeout | FaultKind::StickyContext
                ),
            };
            assert!(fits, "{} ({:?}) is {kind}", row.name, row.class);
        }
    }
}
