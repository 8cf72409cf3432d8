//! Liveness bounds of an expected device fault: the hang must surface, and the card must be
//! recovered, within bounds computed from the configured timeouts.
//!
//! - [`run_bound`]: an op-timeout surfaces within the stream-sync timeout plus slack (the
//!   built-in `AicoreOpTimeout::hang` body checks it);
//! - [`close_bound`]: closing the worker of a standalone case whose expected device fault happened
//!   (finalize: up to three force-reset attempts, each a bounded drain, a probe stream sync and a
//!   probe kernel) returns within three attempts' worth of those timeouts plus slack; the lane
//!   checks it with [`judge_close`], since the close is part of a standalone attempt.
//!
//! Generous on purpose: they catch a hang, never a slow machine. This file owns the bounds as
//! pure functions.

use std::time::Duration;

use platform_common::timeouts::Timeouts;
use platform_common::FailureClass;

use super::attempt::CaseRun;
use crate::report::model::{AttemptOutcome, ErrorReport};

/// Slack on top of the configured timeouts in the liveness bounds.
pub const LIVENESS_SLACK: Duration = Duration::from_secs(5);

/// The bound on closing a worker after an expected device fault.
pub fn close_bound(t: &Timeouts) -> Duration {
    (t.stream_sync * 2 + t.op_execute) * 3 + LIVENESS_SLACK
}

/// The bound on an op-timeout surfacing: the stream-sync timeout plus slack.
pub fn run_bound(t: &Timeouts) -> Duration {
    t.stream_sync + LIVENESS_SLACK
}

/// A standalone attempt after its worker's close: a passing attempt whose expected device fault
/// happened fails (class `result`) when the close took `closed_in`, at or over [`close_bound`].
pub fn judge_close(reported: CaseRun, expected_fault: bool, closed_in: Duration, t: &Timeouts) -> CaseRun {
    let bound = close_bound(t);
    if reported.outcome == AttemptOutcome::Passed && expected_fault && closed_in >= bound {
        return CaseRun::failed(ErrorReport::new(
            FailureClass::Result,
            format!(
                "close took {} ms, over the liveness bound of {} ms (3 reset attempts' worth of \
                 configured timeouts + 5 s)",
                closed_in.as_millis(),
                bound.as_millis()
            ),
        ));
    }
    reported
}

#[cfg(test)]
mod tests {
    use platform_common::timeouts::TimeoutProfile;

    use super::*;

    fn t() -> Timeouts {
        Timeouts::defaults(TimeoutProfile::Sim)
    }

    #[test]
    fn bounds_follow_the_configured_timeouts() {
        let t = t();
        assert_eq!(run_bound(&t), Duration::from_millis(6500));
        assert_eq!(
            close_bound(&t),
            Duration::from_millis((1500 * 2 + 500) * 3 + 5000)
        );
    }

    #[test]
    fn a_slow_close_fails_only_an_expected_fault_that_passed() {
        let t = t();
        let slow = close_bound(&t);
        let quick = Duration::from_millis(10);
        let judged = judge_close(CaseRun::passed(), true, slow, &t);
        let e = judged.error.expect("over the bound");
        assert_eq!(e.class, FailureClass::Result);
        assert!(e.message.contains("liveness bound"), "{}", e.message);
        assert_eq!(judge_close(CaseRun::passed(), true, quick, &t), CaseRun::passed());
        assert_eq!(judge_close(CaseRun::passed(), false, slow, &t), CaseRun::passed());
        let failed = CaseRun::failed(ErrorReport::new(FailureClass::Usage, "x"));
        assert_eq!(judge_close(failed.clone(), true, slow, &t), failed);
    }
}
