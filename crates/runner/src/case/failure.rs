//! [`CaseFailure`]: why a case body failed, with its failure class, and how the typed errors a
//! body meets become one.
//!
//! A device error keeps its type all the way: a body's `?` on a case-context operation turns the
//! operation's error into a `CaseFailure` of the runner error's class (`device_runtime` for a
//! driver error or a refusal of an unusable runner, `usage` for a request refused before any
//! driver call), with the driver call and code. A failed comparison or an explicit
//! [`CaseFailure::result`] is class `result`. This file owns that mapping (by type, never by
//! message text) and never decides a retry or a heal (the dispatcher and the lane do, from the
//! class).

use std::fmt;

use platform_common::runner_base::RunError;
use platform_common::{Code, FailureClass};

use crate::report::model::ErrorReport;
use cardguard_reference::{CaseMismatch, Mismatch};

/// Why a case body failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseFailure {
    report: ErrorReport,
}

impl CaseFailure {
    /// A wrong result (class `result`, never retried): a check the body makes failed.
    pub fn result(message: impl Into<String>) -> Self {
        Self::of_class(FailureClass::Result, message)
    }

    /// Something around the case is broken (class `infrastructure`, never retried): a file the
    /// body needs is missing, a setup cannot be built.
    pub fn infrastructure(message: impl Into<String>) -> Self {
        Self::of_class(FailureClass::Infrastructure, message)
    }

    /// The case is written wrong (class `usage`, never retried).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::of_class(FailureClass::Usage, message)
    }

    fn of_class(class: FailureClass, message: impl Into<String>) -> Self {
        Self {
            report: ErrorReport::new(class, message),
        }
    }

    /// A runner error, classified by its type, the message `context: error`.
    pub fn from_run_error(e: &RunError, context: &str) -> Self {
        Self {
            report: run_error_report(e, context),
        }
    }

    /// The failure class.
    pub fn class(&self) -> FailureClass {
        self.report.class
    }

    /// The code of the driver error behind it, if one is.
    pub fn code(&self) -> Option<Code> {
        self.report.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.report.message
    }

    /// The same failure with `context: ` before its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.report.message = format!("{context}: {}", self.report.message);
        self
    }

    /// The report an attempt carries.
    pub fn into_report(self) -> ErrorReport {
        self.report
    }

    /// The report an attempt carries, by reference.
    pub fn report(&self) -> &ErrorReport {
        &self.report
    }
}

impl fmt::Display for CaseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.report.fmt(f)
    }
}

impl std::error::Error for CaseFailure {}

impl From<ErrorReport> for CaseFailure {
    fn from(report: ErrorReport) -> Self {
        Self { report }
    }
}

impl From<Mismatch> for CaseFailure {
    /// Values out of tolerance: a golden mismatch (class `result`).
    fn from(m: Mismatch) -> Self {
        Self::result(format!("golden mismatch: {m}"))
    }
}

impl From<CaseMismatch> for CaseFailure {
    /// Outputs that differ from a reference case's: a golden mismatch (class `result`).
    fn from(m: CaseMismatch) -> Self {
        Self::result(format!("golden mismatch: {m}"))
    }
}

/// The report of a runner error, classified by its type: `context: error`, with the driver call
/// and code when a call failed (for a refusal, the call and code that first poisoned the runner).
pub fn run_error_report(e: &RunError, context: &str) -> ErrorReport {
    let message = if context.is_empty() {
        e.to_string()
    } else {
        format!("{context}: {e}")
    };
    let mut report = match e.driver_error() {
        Some(d) => ErrorReport::from_driver(&d, message),
        None => ErrorReport::new(e.class(), message),
    };
    report.class = e.class();
    report
}

#[cfg(test)]
mod tests {
    use platform_common::driver::DriverCall;
    use platform_common::error::codes;
    use platform_common::runner_base::UsageError;
    use platform_common::DriverError;

    use super::*;

    #[test]
    fn run_errors_keep_their_typed_class() {
        let d = DriverError::new(DriverCall::Malloc, codes::INVALID_PARAM);
        // A driver error during a run marks the runner unusable whatever its code: device-runtime.
        let f = CaseFailure::from_run_error(&RunError::Device(d), "launch 1");
        assert_eq!(f.class(), FailureClass::DeviceRuntime);
        assert_eq!(f.code(), Some(codes::INVALID_PARAM));
        assert!(f.message().starts_with("launch 1: "), "{f}");
        let u = CaseFailure::from_run_error(&RunError::Usage(UsageError::BlockDimZero), "launch 1");
        assert_eq!((u.class(), u.code()), (FailureClass::Usage, None));
    }

    #[test]
    fn explicit_failures_and_mismatches_have_their_class() {
        assert_eq!(CaseFailure::result("x").class(), FailureClass::Result);
        assert_eq!(
            CaseFailure::infrastructure("x").class(),
            FailureClass::Infrastructure
        );
        assert_eq!(CaseFailure::usage("x").class(), FailureClass::Usage);
        let m = Mismatch::Length {
            actual: 1,
            expected: 2,
        };
        let f = CaseFailure::from(m).context("output z");
        assert_eq!(f.class(), FailureClass::Result);
        assert_eq!(
            f.message(),
            "output z: golden mismatch: 1 values where 2 were expected"
        );
    }
}
