//! What one attempt gave in the lane ([`CaseRun`]) and how a failure to get the case's kernels
//! onto the worker is classified.
//!
//! This file owns those two small things. It never decides a heal or a retry.

use platform_common::FailureClass;

use crate::case::run_error_report;
use crate::report::model::{AttemptOutcome, ErrorReport};
use crate::worker::KernelSetupError;

/// The result of one attempt in the lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseRun {
    /// Passed or failed.
    pub outcome: AttemptOutcome,
    /// Why it failed (its class tells the lane whether the worker is retired:
    /// [`crate::lane::heal::after_case`]).
    pub error: Option<ErrorReport>,
}

impl CaseRun {
    /// A pass.
    pub fn passed() -> Self {
        Self {
            outcome: AttemptOutcome::Passed,
            error: None,
        }
    }

    /// A failure of `error`'s class.
    pub fn failed(error: ErrorReport) -> Self {
        Self {
            outcome: AttemptOutcome::Failed,
            error: Some(error),
        }
    }

    /// The failure's class, if it failed.
    pub fn class(&self) -> Option<FailureClass> {
        self.error.as_ref().map(|e| e.class)
    }
}

/// A case's kernels could not be registered: a blob that cannot be found or loaded is
/// `infrastructure` (nothing reached the device), a registration the runner refused or failed
/// has the runner error's class.
pub fn setup_error_report(e: &KernelSetupError) -> ErrorReport {
    match e {
        KernelSetupError::Load { .. } => ErrorReport::new(FailureClass::Infrastructure, e.to_string()),
        KernelSetupError::Register { source, .. } => run_error_report(source, &e.to_string()),
    }
}
