//! Outcomes: of one attempt, and a case's final one (derived from its attempts by
//! [`verdict`](super::verdict::verdict)), and what a flaky case counts as.
//!
//! This file owns the outcome vocabulary of `report.json`. It never records an attempt (the
//! builder does) and never renders one.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a flaky case (passed after a failed attempt) counts as: `--flaky-result pass|fail`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlakyResult {
    /// A flaky case is reported `flaky` and does not fail the run (the default).
    #[default]
    Pass,
    /// A flaky case is reported `failed`.
    Fail,
}

/// A case's final verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The first attempt passed.
    Passed,
    /// The last attempt failed (error or golden mismatch).
    Failed,
    /// The last attempt passed after at least one failed attempt.
    Flaky,
    /// The case was selected but could not run, for a stated reason.
    Skipped,
    /// The last attempt exceeded the case timeout.
    TimedOut,
    /// The last attempt's lane process died.
    Crashed,
}

impl Outcome {
    /// Every outcome, in summary order.
    pub const ALL: [Outcome; 6] = [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Flaky,
        Outcome::Skipped,
        Outcome::TimedOut,
        Outcome::Crashed,
    ];

    /// The name as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Flaky => "flaky",
            Outcome::Skipped => "skipped",
            Outcome::TimedOut => "timed_out",
            Outcome::Crashed => "crashed",
        }
    }

    /// Whether this verdict makes the run exit 1.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::TimedOut | Outcome::Crashed)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The outcome of one attempt of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// The case ran and matched its golden.
    Passed,
    /// The case returned an error or a golden mismatch.
    Failed,
    /// The case exceeded `--case-timeout`; its lane was killed.
    TimedOut,
    /// The lane process died while running the case.
    Crashed,
    /// The lane declined to run the case, for a stated reason (never retried).
    Skipped,
}

impl AttemptOutcome {
    /// The name as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            AttemptOutcome::Passed => "passed",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::TimedOut => "timed_out",
            AttemptOutcome::Crashed => "crashed",
            AttemptOutcome::Skipped => "skipped",
        }
    }

    /// Failed, timed out or crashed.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            AttemptOutcome::Failed | AttemptOutcome::TimedOut | AttemptOutcome::Crashed
        )
    }
}

impl fmt::Display for AttemptOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
