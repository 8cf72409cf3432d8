//! DESIGN section 5 step 6, "a crash or a timeout of a lane counts as a device-class failure of its
//! case": which case pays for a lane's death, with which attempt.
//!
//! This file owns the blame rule as a pure function of the facts of one lane exit. It never
//! records the attempt (the event loop does, then asks the retry rule) and never kills a lane
//! (the watchdog decides that, `kill` does it).

use std::time::Duration;

use platform_common::FailureClass;

use super::super::kill::KillReason;
use crate::protocol::{LineTooLong, MAX_LINE};
use crate::report::model::{AttemptOutcome, ErrorReport, LaneStatus};

/// What the blame rule needs to know about a lane that ended. A field per fact, so that later
/// rules (an init timeout, a kill the dispatcher did not send) add a field, not a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeathFacts {
    /// How the process ended.
    pub status: LaneStatus,
    /// Its pid, for the message.
    pub pid: u32,
    /// Why the dispatcher was ending it, if it was.
    pub kill: Option<KillReason>,
    /// The case it was running (its index) and for how long.
    pub running: Option<(usize, Duration)>,
    /// The next case it had been given (its index) and how long the lane had been silent.
    pub next: Option<(usize, Duration)>,
    /// The running case's timeout: its own when `own_timeout`, else `--case-timeout` (also the
    /// watchdog's bound on silence outside a case).
    pub case_timeout: Duration,
    /// Whether the running case has a timeout of its own (what its message names).
    pub own_timeout: bool,
}

/// The attempt a case gets for a lane's death.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blame {
    /// The case (its index).
    pub case: usize,
    /// `timed_out` or `crashed`.
    pub outcome: AttemptOutcome,
    /// How long the attempt took.
    pub duration: Duration,
    /// Why (always device-class: it is retried as a device fault would be).
    pub error: ErrorReport,
}

/// Which case pays for the lane's death, if any:
///
/// - a running case killed for its timeout (or by the watchdog) is `timed_out`;
/// - a running case whose lane was killed for a protocol line over its bound is `crashed`, naming
///   the reason;
/// - a running case whose lane died otherwise is `crashed`;
/// - a lane the watchdog killed outside a case (building, switching or retiring a worker) with a
///   case next: that case is `timed_out`, as a case that hung would be;
/// - otherwise nobody (an init past `--init-timeout` included: that is the card's health
///   event): the lane's unstarted cases go back to the queue without an attempt.
pub fn blame(f: &DeathFacts) -> Option<Blame> {
    let timeout_secs = f.case_timeout.as_secs_f64();
    let pid = f.pid;
    if let Some((case, duration)) = f.running {
        let (outcome, message) = match f.kill {
            Some(KillReason::CaseTimeout | KillReason::Watchdog) => (
                AttemptOutcome::TimedOut,
                if f.own_timeout {
                    format!("exceeded its own timeout of {timeout_secs} s; lane pid {pid} was killed")
                } else {
                    format!("exceeded --case-timeout of {timeout_secs} s; lane pid {pid} was killed")
                },
            ),
            Some(KillReason::ProtocolLine) => (
                AttemptOutcome::Crashed,
                format!("{}; lane pid {pid} was killed", LineTooLong { limit: MAX_LINE }),
            ),
            _ => (
                AttemptOutcome::Crashed,
                format!("lane pid {pid} died ({}) while running the case", f.status),
            ),
        };
        let error = ErrorReport::new(FailureClass::DeviceRuntime, message);
        return Some(Blame {
            case,
            outcome,
            duration,
            error,
        });
    }
    match (f.kill, f.next) {
        (Some(KillReason::Watchdog), Some((case, silent))) => {
            let message = format!(
                "lane pid {pid} sent nothing for --case-timeout ({timeout_secs} s) outside a case \
                 (building, switching or retiring a worker) with this case next; it was killed"
            );
            Some(Blame {
                case,
                outcome: AttemptOutcome::TimedOut,
                duration: silent,
                error: ErrorReport::new(FailureClass::DeviceRuntime, message),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AttemptOutcome as A;
    use KillReason as K;

    const MS: Duration = Duration::from_millis(1);

    /// A case index and a duration.
    type Slot = Option<(usize, Duration)>;

    /// Every row: who pays for a lane's death, and how.
    #[test]
    fn blame_table() {
        let crash = LaneStatus::Signaled(11);
        let term = LaneStatus::Signaled(15);
        let kill = LaneStatus::Signaled(9);
        let exit0 = LaneStatus::Exited(0);
        type Row = (
            &'static str,
            LaneStatus,
            Option<KillReason>,
            Slot,
            Slot,
            Option<(usize, AttemptOutcome, Duration)>,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                         status, kill,                running,       next,           blamed
            ("running case past its timeout",                term,   Some(K::CaseTimeout), Some((3, 9 * MS)), Some((4, MS)), Some((3, A::TimedOut, 9 * MS))),
            ("running case, watchdog kill",                  term,   Some(K::Watchdog),   Some((3, 9 * MS)), None,          Some((3, A::TimedOut, 9 * MS))),
            ("running case, the lane crashed",               crash,  None,                Some((3, 5 * MS)), Some((4, MS)), Some((3, A::Crashed, 5 * MS))),
            ("running case, exit 0 mid-case",                exit0,  None,                Some((3, 5 * MS)), None,          Some((3, A::Crashed, 5 * MS))),
            ("running case, killed late at close",           term,   Some(K::CloseLate),  Some((3, 5 * MS)), None,          Some((3, A::Crashed, 5 * MS))),
            ("running case, an overlong protocol line",      kill,   Some(K::ProtocolLine), Some((3, 5 * MS)), Some((4, MS)), Some((3, A::Crashed, 5 * MS))),
            ("an overlong protocol line between cases",      kill,   Some(K::ProtocolLine), None,          Some((4, MS)), None),
            ("watchdog outside a case: the next case pays",  term,   Some(K::Watchdog),   None,          Some((4, 7 * MS)), Some((4, A::TimedOut, 7 * MS))),
            ("watchdog with nothing next",                   term,   Some(K::Watchdog),   None,          None,          None),
            ("a crash between cases blames nobody",          crash,  None,                None,          Some((4, MS)), None),
            ("a late close between cases blames nobody",     term,   Some(K::CloseLate),  None,          Some((4, MS)), None),
            ("an init timeout blames nobody: the card pays", term,   Some(K::InitTimeout), None,         Some((4, 9 * MS)), None),
            ("a clean exit blames nobody",                   exit0,  None,                None,          None,          None),
        ];
        for &(what, status, kill, running, next, want) in rows {
            let got = blame(&DeathFacts {
                status,
                pid: 42,
                kill,
                running,
                next,
                case_timeout: Duration::from_secs(2),
                own_timeout: false,
            });
            let got_short = got.as_ref().map(|b| (b.case, b.outcome, b.duration));
            assert_eq!(got_short, want, "{what}: {got:?}");
            if let Some(b) = got {
                assert_eq!(
                    b.error.class,
                    FailureClass::DeviceRuntime,
                    "{what}: retried as a device fault"
                );
                assert!(
                    b.error.message.contains("lane pid 42"),
                    "{what}: {}",
                    b.error.message
                );
            }
        }
    }

    #[test]
    fn the_messages_say_what_happened() {
        let f = DeathFacts {
            status: LaneStatus::Signaled(11),
            pid: 7,
            kill: None,
            running: Some((0, MS)),
            next: None,
            case_timeout: Duration::from_secs(2),
            own_timeout: false,
        };
        assert_eq!(
            blame(&f).unwrap().error.message,
            "lane pid 7 died (signal 11) while running the case"
        );
        let f = DeathFacts {
            kill: Some(KillReason::CaseTimeout),
            ..f
        };
        assert_eq!(
            blame(&f).unwrap().error.message,
            "exceeded --case-timeout of 2 s; lane pid 7 was killed"
        );
        let own = DeathFacts {
            case_timeout: Duration::from_millis(500),
            own_timeout: true,
            ..f
        };
        assert_eq!(
            blame(&own).unwrap().error.message,
            "exceeded its own timeout of 0.5 s; lane pid 7 was killed"
        );
        let f = DeathFacts {
            kill: Some(KillReason::ProtocolLine),
            status: LaneStatus::Signaled(9),
            ..f
        };
        let b = blame(&f).unwrap();
        assert_eq!(b.outcome, AttemptOutcome::Crashed);
        assert_eq!(
            b.error.message,
            "lane protocol line over 1 MiB; lane pid 7 was killed"
        );
    }
}
