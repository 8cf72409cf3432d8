//! DESIGN section 5 step 6, "retry the trigger": whether an ended attempt is final or retried.
//!
//! This file owns the retry rule as a pure function of the attempt's facts. It never queues the
//! retry (the event loop does, at the front of the queue) and never decides where it runs (the
//! next healthy card free for it).

use platform_common::FailureClass;

use crate::report::model::{AttemptOutcome, ErrorReport};

/// What the retry rule needs to know about one ended attempt.
#[derive(Debug, Clone, Copy)]
pub struct AttemptFacts<'a> {
    /// How it ended (a lane's death is already blamed: `crashed` or `timed_out`).
    pub outcome: AttemptOutcome,
    /// Why it failed.
    pub error: Option<&'a ErrorReport>,
    /// Its number, from 1.
    pub attempt: u32,
    /// Extra attempts after a device-class failure: the case's own setting, else `--retries`
    /// ([`retries_for`]).
    pub retries: u32,
}

/// What happens to the case after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptDecision {
    /// Its verdict is final.
    Final,
    /// It runs again; the reason goes into the journal's `retry_scheduled`.
    Retry {
        /// Why, for people.
        reason: String,
    },
}

/// The retries that apply to a case: its own (a case's or its class's setting), else `--retries`.
pub fn retries_for(own: Option<u32>, flag: u32) -> u32 {
    own.unwrap_or(flag)
}

/// Whether a failed attempt may be retried at all: only a device-class failure (a device-runtime
/// error; a crash or a timeout of the lane is filed as one). A result mismatch, a usage or an
/// infrastructure error never is, nor is a pass or a skip.
pub fn retryable(outcome: AttemptOutcome, error: Option<&ErrorReport>) -> bool {
    outcome.is_failure() && error.is_some_and(|e| e.class == FailureClass::DeviceRuntime)
}

/// The decision after an attempt: retried while it is retryable and `--retries` is not used up.
pub fn after_attempt(f: &AttemptFacts<'_>) -> AttemptDecision {
    if retryable(f.outcome, f.error) && f.attempt <= f.retries {
        AttemptDecision::Retry {
            reason: format!(
                "attempt {} failed with a device-class error; retry {} of {} on the next healthy card \
                 free for it (the force-reset card or another one)",
                f.attempt, f.attempt, f.retries
            ),
        }
    } else {
        AttemptDecision::Final
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AttemptOutcome as A;
    use FailureClass as C;

    /// Every row of step 6 (and of the README's "retries" behaviour).
    #[test]
    fn retry_table() {
        type Row = (&'static str, AttemptOutcome, Option<FailureClass>, u32, u32, bool);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                 outcome,     class,                  attempt, retries, retried
            ("device error, first attempt",          A::Failed,   Some(C::DeviceRuntime),  1, 2, true),
            ("device error, second attempt",         A::Failed,   Some(C::DeviceRuntime),  2, 2, true),
            ("device error, retries used up",        A::Failed,   Some(C::DeviceRuntime),  3, 2, false),
            ("device error, --retries 0",            A::Failed,   Some(C::DeviceRuntime),  1, 0, false),
            ("lane timed out (device class)",        A::TimedOut, Some(C::DeviceRuntime),  1, 2, true),
            ("lane crashed (device class)",          A::Crashed,  Some(C::DeviceRuntime),  1, 2, true),
            ("golden mismatch is never retried",     A::Failed,   Some(C::Result),         1, 2, false),
            ("usage error is never retried",         A::Failed,   Some(C::Usage),          1, 2, false),
            ("infrastructure is never retried",      A::Failed,   Some(C::Infrastructure), 1, 2, false),
            ("a failure without an error",           A::Failed,   None,                    1, 2, false),
            ("a pass",                               A::Passed,   None,                    1, 2, false),
            ("a legitimate skip is never retried",   A::Skipped,  Some(C::DeviceRuntime),  1, 2, false),
        ];
        for &(what, outcome, class, attempt, retries, retried) in rows {
            let error = class.map(|c| ErrorReport::new(c, "x"));
            let d = after_attempt(&AttemptFacts {
                outcome,
                error: error.as_ref(),
                attempt,
                retries,
            });
            assert_eq!(
                matches!(d, AttemptDecision::Retry { .. }),
                retried,
                "{what}: {d:?}"
            );
            assert_eq!(
                retryable(outcome, error.as_ref()) && attempt <= retries,
                retried,
                "{what}"
            );
        }
    }

    /// A case's own retries win over the flag, both ways.
    #[test]
    fn own_retries_override_the_flag() {
        #[rustfmt::skip]
        let rows: &[(Option<u32>, u32, u32)] = &[
            // own,    --retries, applies
            (None,     2,         2),
            (Some(0),  2,         0),
            (Some(5),  0,         5),
            (Some(2),  2,         2),
        ];
        for &(own, flag, want) in rows {
            assert_eq!(retries_for(own, flag), want, "{own:?} over {flag}");
        }
        let e = ErrorReport::new(C::DeviceRuntime, "launch failed");
        let first = |retries| {
            after_attempt(&AttemptFacts {
                outcome: A::Failed,
                error: Some(&e),
                attempt: 1,
                retries,
            })
        };
        assert_eq!(
            first(retries_for(Some(0), 2)),
            AttemptDecision::Final,
            "own 0 over --retries 2"
        );
        assert!(
            matches!(first(retries_for(Some(1), 0)), AttemptDecision::Retry { .. }),
            "own 1 over --retries 0"
        );
    }

    #[test]
    fn the_retry_reason_counts_the_retries() {
        let e = ErrorReport::new(C::DeviceRuntime, "op timeout");
        let d = after_attempt(&AttemptFacts {
            outcome: A::Failed,
            error: Some(&e),
            attempt: 2,
            retries: 3,
        });
        let AttemptDecision::Retry { reason } = d else {
            panic!("retried: {d:?}");
        };
        assert!(
            reason.starts_with("attempt 2 failed with a device-class error; retry 2 of 3"),
            "{reason}"
        );
    }
}
