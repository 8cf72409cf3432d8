//! Judging an expected-failure case: from what the body did (the raw attempt) to what is
//! reported.
//!
//! A case without an expectation reports what it did. One with an expectation passes when it
//! failed as expected (by class or by code), fails with class `result` when it passed ("expected
//! failure did not happen"), and keeps its own failure (class, call, code) when it failed
//! otherwise. The lane heals from the raw attempt, never from the judged one: a device fault that
//! was expected still retires the worker. This file owns that rule as a pure function.

use platform_common::{Arch, Code, FailureClass};

use super::attempt::CaseRun;
use crate::case::{Expectation, Expected};
use crate::report::model::{AttemptOutcome, ErrorReport};

/// A judged attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// What the report gets.
    pub reported: CaseRun,
    /// Whether an expected failure happened.
    pub met: bool,
}

/// The code [`Expected::OpTimeout`] stands for on `arch`.
pub fn op_timeout_code(arch: Arch) -> Code {
    crate::platform::arch_entry(arch).facts.op_timeout_code()
}

/// Whether `error` is the failure `expected` describes on `arch`.
pub fn matches(expected: Expected, error: &ErrorReport, arch: Arch) -> bool {
    match expected {
        Expected::Class(c) => error.class == c,
        Expected::Code(c) => error.code == Some(c),
        Expected::OpTimeout => error.code == Some(op_timeout_code(arch)),
    }
}

/// Judges `raw` under `expect` on `arch`.
pub fn judge(raw: CaseRun, expect: Option<&Expectation>, arch: Arch) -> Judged {
    let Some(e) = expect else {
        return Judged {
            reported: raw,
            met: false,
        };
    };
    let what = match e.expected {
        Expected::OpTimeout => format!("the op-timeout {}", op_timeout_code(arch)),
        other => other.to_string(),
    };
    match (raw.outcome, raw.error) {
        (AttemptOutcome::Failed, Some(err)) if matches(e.expected, &err, arch) => Judged {
            reported: CaseRun::passed(),
            met: true,
        },
        (AttemptOutcome::Failed, Some(mut err)) => {
            err.message = format!(
                "expected {what} ({}), but the case failed otherwise: {}",
                e.reason, err.message
            );
            Judged {
                reported: CaseRun::failed(err),
                met: false,
            }
        }
        (outcome, error) if outcome != AttemptOutcome::Passed => Judged {
            reported: CaseRun { outcome, error },
            met: false,
        },
        _ => Judged {
            reported: CaseRun::failed(ErrorReport::new(
                FailureClass::Result,
                format!("expected failure did not happen: expected {what} ({})", e.reason),
            )),
            met: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use platform_common::driver::DriverCall;
    use platform_common::error::codes;
    use platform_common::DriverError;

    use super::*;

    fn expect(expected: Expected) -> Expectation {
        Expectation {
            reason: "known".into(),
            expected,
        }
    }

    #[test]
    fn expectation_table() {
        let op_timeout_a5 = ErrorReport::from_driver(
            &DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR),
            "hang",
        );
        let mismatch = ErrorReport::new(FailureClass::Result, "golden mismatch");
        let failed = |e: &ErrorReport| CaseRun::failed(e.clone());
        type Row = (
            &'static str,
            CaseRun,
            Option<Expected>,
            Arch,
            AttemptOutcome,
            Option<FailureClass>,
            bool,
        );
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            // what,                                   raw,                      expects,                                       arch,       reported,                class,                        met
            ("no expectation: as it ran",              failed(&mismatch),        None,                                          Arch::A5,   AttemptOutcome::Failed, Some(FailureClass::Result),    false),
            ("the expected class: passes",             failed(&mismatch),        Some(Expected::Class(FailureClass::Result)),   Arch::A5,   AttemptOutcome::Passed, None,                          true),
            ("the expected code: passes",              failed(&op_timeout_a5),   Some(Expected::Code(codes::RT_INTERNAL_ERROR)), Arch::A5,  AttemptOutcome::Passed, None,                          true),
            ("the arch's op-timeout on a5: passes",    failed(&op_timeout_a5),   Some(Expected::OpTimeout),                     Arch::A5,   AttemptOutcome::Passed, None,                          true),
            ("a5's code is not a2a3's op-timeout",     failed(&op_timeout_a5),   Some(Expected::OpTimeout),                     Arch::A2a3, AttemptOutcome::Failed, Some(FailureClass::DeviceRuntime), false),
            ("another class: its own failure",         failed(&op_timeout_a5),   Some(Expected::Class(FailureClass::Result)),   Arch::A5,   AttemptOutcome::Failed, Some(FailureClass::DeviceRuntime), false),
            ("a pass: the expected failure is missing", CaseRun::passed(),       Some(Expected::Class(FailureClass::Result)),   Arch::A5,   AttemptOutcome::Failed, Some(FailureClass::Result),    false),
        ];
        for (what, raw, expected, arch, outcome, class, met) in rows {
            let e = expected.map(expect);
            let j = judge(raw, e.as_ref(), arch);
            assert_eq!(j.reported.outcome, outcome, "{what}");
            assert_eq!(j.reported.class(), class, "{what}");
            assert_eq!(j.met, met, "{what}");
        }
    }

    #[test]
    fn messages_say_what_was_expected() {
        let e = expect(Expected::OpTimeout);
        let j = judge(CaseRun::passed(), Some(&e), Arch::A2a3);
        let msg = j.reported.error.unwrap().message;
        assert!(
            msg.starts_with("expected failure did not happen: expected the op-timeout 507018"),
            "{msg}"
        );
        let other = ErrorReport::from_driver(
            &DriverError::new(DriverCall::Malloc, codes::RT_DRV_INTERNAL_ERROR),
            "alloc",
        );
        let j = judge(CaseRun::failed(other), Some(&e), Arch::A5);
        let err = j.reported.error.unwrap();
        assert_eq!(
            err.code,
            Some(codes::RT_DRV_INTERNAL_ERROR),
            "the real failure keeps its code"
        );
        assert!(err.message.contains("failed otherwise: alloc"), "{}", err.message);
    }
}
