//! DESIGN section 5 step 6, "retry the trigger": whether an ended attempt is final or retried.
//!
//! An infrastructure kill (the lane killed by a signal the dispatcher did not send, see
//! [`super::blame`]) is filed as class `infrastructure` and retried too: the fact is
//! [`AttemptFacts::infrastructure_kill`], never read from the message. Its retries come out of the
//! same `--retries` budget, so a case that the OOM killer ends every time it runs ends `crashed`
//! after its attempts, and the kills of a lane cannot loop forever through one case.
//!
//! This file owns the retry rule as a pure function of the attempt's facts. It never queues the
//! retry (the event loop does, at the front of the queue) and never decides where it runs
//! ([`super::placement`]: a card holding its runtime, or its own once reset).

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
    /// Whether the attempt's lane was killed by a signal the dispatcher did not send (its error
    /// is then class `infrastructure`, and retried all the same).
    pub infrastructure_kill: bool,
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

/// Whether a failed attempt may be retried at all: a device-class failure (a device-runtime
/// error; a crash or a timeout of the lane is filed as one), or an infrastructure failure that is
/// an infrastructure kill (`infrastructure_kill`). A result mismatch, a usage error or any other
/// infrastructure error (a kernel blob that cannot be loaded, no card left) never is, nor is a
/// pass or a skip.
pub fn retryable(outcome: AttemptOutcome, error: Option<&ErrorReport>, infrastructure_kill: bool) -> bool {
    outcome.is_failure()
        && error.is_some_and(|e| match e.class {
            FailureClass::DeviceRuntime => true,
            FailureClass::Infrastructure => infrastructure_kill,
            _ => false,
        })
}

/// The decision after an attempt: retried while it is retryable and `--retries` is not used up.
pub fn after_attempt(f: &AttemptFacts<'_>) -> AttemptDecision {
    if retryable(f.outcome, f.error, f.infrastructure_kill) && f.attempt <= f.retries {
        let why = if f.infrastructure_kill {
            "was an infrastructure kill (its lane was killed from outside)"
        } else {
            "failed with a device-class error"
        };
        AttemptDecision::Retry {
            reason: format!(
                "attempt {} {why}; retry {} of {} on a healthy card: one holding its runtime, or \
                 its own once reset, if one is free within an init's wait",
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

    /// Every row of step 6 (and of `--retries` as docs/reference/cli.md states it).
    #[test]
    fn retry_table() {
        type Row = (
            &'static str,
            AttemptOutcome,
            Option<FailureClass>,
            bool,
            u32,
            u32,
            bool,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                 outcome,     class,                  infra kill, attempt, retries, retried
            ("device error, first attempt",          A::Failed,   Some(C::DeviceRuntime),  false, 1, 2, true),
            ("device error, second attempt",         A::Failed,   Some(C::DeviceRuntime),  false, 2, 2, true),
            ("device error, retries used up",        A::Failed,   Some(C::DeviceRuntime),  false, 3, 2, false),
            ("device error, --retries 0",            A::Failed,   Some(C::DeviceRuntime),  false, 1, 0, false),
            ("lane timed out (device class)",        A::TimedOut, Some(C::DeviceRuntime),  false, 1, 2, true),
            ("lane crashed (device class)",          A::Crashed,  Some(C::DeviceRuntime),  false, 1, 2, true),
            ("golden mismatch is never retried",     A::Failed,   Some(C::Result),         false, 1, 2, false),
            ("usage error is never retried",         A::Failed,   Some(C::Usage),          false, 1, 2, false),
            ("infrastructure is never retried",      A::Failed,   Some(C::Infrastructure), false, 1, 2, false),
            ("an infrastructure kill is retried",    A::Crashed,  Some(C::Infrastructure), true,  1, 2, true),
            ("an infrastructure kill, second time",  A::Crashed,  Some(C::Infrastructure), true,  2, 2, true),
            ("infrastructure kills use --retries",   A::Crashed,  Some(C::Infrastructure), true,  3, 2, false),
            ("an infra kill fact never retries a mismatch", A::Failed, Some(C::Result),   true,  1, 2, false),
            ("a failure without an error",           A::Failed,   None,                    false, 1, 2, false),
            ("a pass",                               A::Passed,   None,                    false, 1, 2, false),
            ("a legitimate skip is never retried",   A::Skipped,  Some(C::DeviceRuntime),  false, 1, 2, false),
        ];
        for &(what, outcome, class, infra, attempt, retries, retried) in rows {
            let error = class.map(|c| ErrorReport::new(c, "x"));
            let d = after_attempt(&AttemptFacts {
                outcome,
                error: error.as_ref(),
                attempt,
                retries,
                infrastructure_kill: infra,
            });
            assert_eq!(
                matches!(d, AttemptDecision::Retry { .. }),
                retried,
                "{what}: {d:?}"
            );
            assert_eq!(
                retryable(outcome, error.as_ref(), infra) && attempt <= retries,
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
                infrastructure_kill: false,
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
            infrastructure_kill: false,
        });
        let AttemptDecision::Retry { reason } = d else {
            panic!("retried: {d:?}");
        };
        assert!(
            reason.starts_with("attempt 2 failed with a device-class error; retry 2 of 3"),
            "{reason}"
        );
        let e = ErrorReport::new(C::Infrastructure, "killed");
        let d = after_attempt(&AttemptFacts {
            outcome: A::Crashed,
            error: Some(&e),
            attempt: 1,
            retries: 2,
            infrastructure_kill: true,
        });
        let AttemptDecision::Retry { reason } = d else {
            panic!("retried: {d:?}");
        };
        assert!(
            reason.starts_with(
                "attempt 1 was an infrastructure kill (its lane was killed from outside); retry 1 of 2"
            ),
            "{reason}"
        );
    }
}
