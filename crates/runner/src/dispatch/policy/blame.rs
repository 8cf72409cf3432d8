//! DESIGN section 5 step 6, "a crash or a timeout of a lane counts as a device-class failure of its
//! case": which case pays for a lane's death, with which attempt; and issue 9's exception, "an
//! infrastructure kill is not a test failure": a lane killed by a signal the dispatcher did not
//! send (the OOM killer's SIGKILL, an operator's `kill`, a job agent's SIGTERM) is an
//! `infrastructure` failure of its running case, naming the signal ([`infrastructure_kill`],
//! [`external_signal`]), retried and never counted against the card. A lane that dies of a
//! signal of its own doing (SIGSEGV, SIGABRT, SIGBUS, ...) stays a crash of its case.
//!
//! This file owns the blame rule as a pure function of the facts of one lane exit. It never
//! records the attempt (the event loop does, then asks the retry rule) and never kills a lane
//! (the watchdog decides that, `kill` does it).

use std::time::Duration;

use platform_common::FailureClass;

use super::kill_reason::KillReason;
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
    /// Why: device-class (retried as a device fault would be), or `infrastructure` for an
    /// infrastructure kill.
    pub error: ErrorReport,
    /// The signal, when the lane was killed from outside ([`infrastructure_kill`]): the retry
    /// rule retries such an attempt although its class is `infrastructure`.
    pub infrastructure_kill: Option<i32>,
}

/// Whether signal `sig` is one that ends a process from outside (the OOM killer, an operator, a
/// job agent, a CPU-time limit): `SIGKILL`, `SIGTERM`, `SIGINT`, `SIGHUP`, `SIGQUIT`, `SIGXCPU`.
/// Every other signal (`SIGSEGV`, `SIGABRT`, `SIGBUS`, `SIGILL`, `SIGFPE`, `SIGTRAP`, `SIGSYS`,
/// `SIGPIPE`, ...) comes from what the process itself did, and is a crash of its case.
pub fn external_signal(sig: i32) -> bool {
    matches!(sig, 1 | 2 | 3 | 9 | 15 | 24)
}

/// The signal of an infrastructure kill: the lane died of an [`external_signal`] while the
/// dispatcher was not ending it (a lane the dispatcher was ending, for a timeout, a protocol
/// violation or a late close, is that ending's, whatever signal got it).
pub fn infrastructure_kill(status: LaneStatus, kill: Option<KillReason>) -> Option<i32> {
    match (status, kill) {
        (LaneStatus::Signaled(sig), None) if external_signal(sig) => Some(sig),
        _ => None,
    }
}

/// A signal's name (`SIGKILL`), for messages; `None` for a number without one here.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        31 => "SIGSYS",
        _ => return None,
    })
}

/// `signal 9 (SIGKILL)`.
pub fn describe_signal(sig: i32) -> String {
    match signal_name(sig) {
        Some(name) => format!("signal {sig} ({name})"),
        None => format!("signal {sig}"),
    }
}

/// Which case pays for the lane's death, if any:
///
/// - a running case killed for its timeout (or by the watchdog) is `timed_out`;
/// - a running case whose lane was killed for a protocol line over its bound is `crashed`, naming
///   the reason;
/// - a running case whose lane was killed by a signal the dispatcher did not send
///   ([`infrastructure_kill`]) is `crashed`, class `infrastructure`, naming the signal;
/// - a running case whose lane died otherwise is `crashed`;
/// - a lane the watchdog killed outside a case (building, switching or retiring a worker) with a
///   case next: that case is `timed_out`, as a case that hung would be;
/// - otherwise nobody (an init past `--init-timeout` included: that is the card's health
///   event): the lane's unstarted cases go back to the queue without an attempt.
pub fn blame(f: &DeathFacts) -> Option<Blame> {
    let timeout_secs = f.case_timeout.as_secs_f64();
    let pid = f.pid;
    if let Some((case, duration)) = f.running {
        if let Some(sig) = infrastructure_kill(f.status, f.kill) {
            let message = format!(
                "lane pid {pid} was killed by {}, which the dispatcher did not send (the OOM \
                 killer, an operator, a job agent): an infrastructure failure, not the case's",
                describe_signal(sig)
            );
            return Some(Blame {
                case,
                outcome: AttemptOutcome::Crashed,
                duration,
                error: ErrorReport::new(FailureClass::Infrastructure, message),
                infrastructure_kill: Some(sig),
            });
        }
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
            infrastructure_kill: None,
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
                infrastructure_kill: None,
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
        let abort = LaneStatus::Signaled(6);
        let bus = LaneStatus::Signaled(7);
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
            ("running case, the lane aborted",               abort,  None,                Some((3, 5 * MS)), None,          Some((3, A::Crashed, 5 * MS))),
            ("running case, a bus error",                    bus,    None,                Some((3, 5 * MS)), None,          Some((3, A::Crashed, 5 * MS))),
            ("running case, SIGKILL from outside",           kill,   None,                Some((3, 5 * MS)), Some((4, MS)), Some((3, A::Crashed, 5 * MS))),
            ("running case, SIGTERM from outside",           term,   None,                Some((3, 5 * MS)), None,          Some((3, A::Crashed, 5 * MS))),
            ("SIGKILL from outside between cases",           kill,   None,                None,          Some((4, MS)), None),
            ("the dispatcher's own SIGKILL at a timeout",    kill,   Some(K::CaseTimeout), Some((3, 9 * MS)), None,         Some((3, A::TimedOut, 9 * MS))),
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
                // Only a signal from outside, with the dispatcher not ending the lane, is the
                // infrastructure's; everything else is retried as a device fault.
                let outside = kill.is_none() && matches!(status, LaneStatus::Signaled(9 | 15));
                let class = if outside {
                    FailureClass::Infrastructure
                } else {
                    FailureClass::DeviceRuntime
                };
                assert_eq!(b.error.class, class, "{what}");
                assert_eq!(b.infrastructure_kill.is_some(), outside, "{what}");
                assert!(
                    b.error.message.contains("lane pid 42"),
                    "{what}: {}",
                    b.error.message
                );
            }
        }
    }

    /// Which signals end a lane from outside (infrastructure) and which are its own (a crash).
    #[test]
    fn signal_table() {
        #[rustfmt::skip]
        let rows: &[(i32, &str, bool)] = &[
            (1, "SIGHUP", true), (2, "SIGINT", true), (3, "SIGQUIT", true), (9, "SIGKILL", true),
            (15, "SIGTERM", true), (24, "SIGXCPU", true),
            (4, "SIGILL", false), (5, "SIGTRAP", false), (6, "SIGABRT", false), (7, "SIGBUS", false),
            (8, "SIGFPE", false), (11, "SIGSEGV", false), (13, "SIGPIPE", false), (31, "SIGSYS", false),
        ];
        for &(sig, name, outside) in rows {
            assert_eq!(signal_name(sig), Some(name));
            assert_eq!(external_signal(sig), outside, "{name}");
            assert_eq!(
                infrastructure_kill(LaneStatus::Signaled(sig), None),
                outside.then_some(sig),
                "{name}"
            );
            for reason in [
                KillReason::CaseTimeout,
                KillReason::CloseLate,
                KillReason::ProtocolLine,
            ] {
                assert_eq!(infrastructure_kill(LaneStatus::Signaled(sig), Some(reason)), None);
            }
        }
        assert_eq!(infrastructure_kill(LaneStatus::Exited(137), None), None);
        assert_eq!(describe_signal(9), "signal 9 (SIGKILL)");
        assert_eq!(describe_signal(40), "signal 40");
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
        let f = DeathFacts { kill: None, ..f };
        let b = blame(&f).unwrap();
        assert_eq!(b.error.class, FailureClass::Infrastructure);
        assert_eq!(b.infrastructure_kill, Some(9));
        assert!(
            b.error.message.starts_with(
                "lane pid 7 was killed by signal 9 (SIGKILL), which the dispatcher did not send"
            ),
            "{}",
            b.error.message
        );
    }
}
