//! The verdict: a case's final outcome derived from its attempts (nextest's rule: a case stores
//! every attempt and its verdict is computed, never stored on its own).
//!
//! This file owns the rule, a pure function with its table of cases. It never records an attempt
//! (the builder does) and never renders one.

use platform_common::FailureClass;

use super::attempt::Attempt;
use super::outcome::{AttemptOutcome, FlakyResult, Outcome};

/// Derives a case's final verdict from its attempts (nextest's rule).
///
/// - A skip reason makes it `skipped`, whatever its attempts (a legitimate skip has none; a case
///   an interrupted run left waiting for a retry keeps its attempts beside the reason).
/// - Skipped attempts are set aside (a lane may decline a case with a reason).
/// - No attempt left: `skipped` when there is a skip reason or a skipped attempt, else `failed`
///   (a selected case never ends without a verdict).
/// - Last attempt passed: `passed` if it was the only one; `flaky` if an earlier one failed (or
///   `failed` under [`FlakyResult::Fail`]); an earlier attempt of class `infrastructure` (its
///   lane killed from outside, the one infrastructure failure that is retried) does not count:
///   after only such attempts the pass is `passed`.
/// - Last attempt failed, timed out or crashed: that outcome.
pub fn verdict(attempts: &[Attempt], skip_reason: Option<&str>, flaky_result: FlakyResult) -> Outcome {
    if skip_reason.is_some() {
        // A stated reason wins: a legitimate skip never ran, and a case an interrupted run left
        // waiting for its retry has no verdict of its own (its attempts stay listed).
        return Outcome::Skipped;
    }
    let ran: Vec<&Attempt> = attempts
        .iter()
        .filter(|a| a.outcome != AttemptOutcome::Skipped)
        .collect();
    let Some(last) = ran.last() else {
        let any_skipped = attempts.iter().any(|a| a.outcome == AttemptOutcome::Skipped);
        return if any_skipped {
            Outcome::Skipped
        } else {
            Outcome::Failed
        };
    };
    match last.outcome {
        AttemptOutcome::Passed => {
            // An earlier attempt lost to an infrastructure kill (its lane killed from outside) is
            // no failure of the case's: it does not make the pass flaky. (No other infrastructure
            // failure is ever retried, so only such a kill can come before a pass.)
            let retried = ran[..ran.len() - 1].iter().any(|a| {
                a.outcome.is_failure()
                    && a.error
                        .as_ref()
                        .map_or(true, |e| e.class != FailureClass::Infrastructure)
            });
            match (retried, flaky_result) {
                (false, _) => Outcome::Passed,
                (true, FlakyResult::Pass) => Outcome::Flaky,
                (true, FlakyResult::Fail) => Outcome::Failed,
            }
        }
        AttemptOutcome::Failed => Outcome::Failed,
        AttemptOutcome::TimedOut => Outcome::TimedOut,
        AttemptOutcome::Crashed => Outcome::Crashed,
        AttemptOutcome::Skipped => unreachable!("skipped attempts were filtered out"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attempt::ErrorReport;

    fn att(outcome: AttemptOutcome) -> Attempt {
        Attempt {
            device: Some(0),
            pid: Some(10),
            outcome,
            duration_ms: 5,
            started_ms: 0,
            error: outcome
                .is_failure()
                .then(|| ErrorReport::new(FailureClass::DeviceRuntime, "boom")),
            output: Default::default(),
        }
    }

    use AttemptOutcome as A;

    #[test]
    fn verdict_single_pass_is_passed() {
        assert_eq!(
            verdict(&[att(A::Passed)], None, FlakyResult::Pass),
            Outcome::Passed
        );
    }

    #[test]
    fn verdict_pass_after_failures_is_flaky() {
        for first in [A::Failed, A::TimedOut, A::Crashed] {
            let a = [att(first), att(A::Passed)];
            assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Flaky, "{first}");
        }
        let a = [att(A::Crashed), att(A::Failed), att(A::Passed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Flaky);
    }

    #[test]
    fn a_pass_after_infrastructure_kills_is_passed_not_flaky() {
        let mut killed = att(A::Crashed);
        killed.error = Some(ErrorReport::new(
            FailureClass::Infrastructure,
            "killed by SIGKILL",
        ));
        for flaky in [FlakyResult::Pass, FlakyResult::Fail] {
            let a = [killed.clone(), killed.clone(), att(A::Passed)];
            assert_eq!(verdict(&a, None, flaky), Outcome::Passed);
        }
        // A device fault among them still makes it flaky.
        let a = [killed.clone(), att(A::Failed), att(A::Passed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Flaky);
        // And the kill ends the case crashed when it is the last attempt.
        let a = [att(A::Passed), killed];
        assert_eq!(verdict(&a[1..], None, FlakyResult::Pass), Outcome::Crashed);
    }

    #[test]
    fn verdict_flaky_counts_as_failed_under_flaky_result_fail() {
        let a = [att(A::Failed), att(A::Passed)];
        assert_eq!(verdict(&a, None, FlakyResult::Fail), Outcome::Failed);
        assert_eq!(
            verdict(&[att(A::Passed)], None, FlakyResult::Fail),
            Outcome::Passed
        );
    }

    #[test]
    fn verdict_all_failed_takes_the_last_attempts_outcome() {
        let a = [att(A::Failed), att(A::Failed), att(A::Failed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Failed);
        let a = [att(A::Failed), att(A::Crashed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Crashed);
        let a = [att(A::Crashed), att(A::TimedOut)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::TimedOut);
        let a = [att(A::TimedOut), att(A::Failed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Failed);
    }

    #[test]
    fn verdict_skips() {
        assert_eq!(
            verdict(&[], Some("needs 4 cards"), FlakyResult::Pass),
            Outcome::Skipped
        );
        assert_eq!(
            verdict(&[att(A::Skipped)], None, FlakyResult::Pass),
            Outcome::Skipped
        );
        // An interrupted run's case that waited for its retry: skipped, its attempt kept.
        assert_eq!(
            verdict(
                &[att(A::Crashed)],
                Some("run interrupted by SIGINT"),
                FlakyResult::Pass
            ),
            Outcome::Skipped
        );
        // A skipped attempt does not hide a real one.
        let a = [att(A::Failed), att(A::Skipped)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Failed);
    }

    #[test]
    fn verdict_without_attempt_or_reason_is_failed() {
        assert_eq!(verdict(&[], None, FlakyResult::Pass), Outcome::Failed);
    }
}
