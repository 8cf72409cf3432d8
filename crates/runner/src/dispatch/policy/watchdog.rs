//! The dispatcher's clock rules (DESIGN section 5 step 6's "a timeout of a lane"): when each lane
//! must have done something, and how it is ended when it has not.
//!
//! Times are the run's clock: time since the run started (see [`crate::clock`]), as the state
//! machine is given them.
//!
//! This file owns the deadlines as pure functions of a lane's times. It never reads a clock and
//! never signals a process: the state machine passes its times in and the process layer sends
//! the signals.

use std::time::Duration;

use super::kill_reason::KillReason;

/// Time between SIGTERM and SIGKILL of a lane that exceeded the case timeout (or the watchdog).
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// What the clock rules need to know about a live lane that is not being ended yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneTimes {
    /// When its running case started, if one is running.
    pub running_since: Option<Duration>,
    /// The running case's own timeout (its case's or class's setting), if it has one: it
    /// overrides `--case-timeout` for that case.
    pub case_timeout: Option<Duration>,
    /// When the init it is in (building a worker) started, if it is in one.
    pub init_since: Option<Duration>,
    /// Whether it has work outstanding.
    pub outstanding: bool,
    /// When it last sent a message, or (idle until then) was given work.
    pub heard: Duration,
    /// When its stdin was closed.
    pub closed_at: Option<Duration>,
}

/// The timeouts that apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `--case-timeout`, also the watchdog's bound on silence outside a case and an init.
    pub case_timeout: Duration,
    /// `--init-timeout`: the bound on one init (building a worker).
    pub init_timeout: Duration,
    /// How long a lane told to close may take.
    pub close_timeout: Duration,
}

/// The timeout of a running case: its own, else `--case-timeout`.
pub fn case_limit(own: Option<Duration>, flag: Duration) -> Duration {
    own.unwrap_or(flag)
}

/// When the lane must have done something: its running case's timeout (its own, else
/// `--case-timeout`); else, in an init, the
/// init timeout (a slow init is never a case's watchdog kill); else, with work outstanding, the
/// watchdog (silence outside a case); else, once told to close, its close deadline; else never.
pub fn deadline(t: &LaneTimes, limits: &Limits) -> Option<Duration> {
    if let Some(since) = t.running_since {
        return Some(since + case_limit(t.case_timeout, limits.case_timeout));
    }
    if let Some(since) = t.init_since {
        return Some(since + limits.init_timeout);
    }
    if t.outstanding {
        return Some(t.heard + limits.case_timeout);
    }
    t.closed_at.map(|c| c + limits.close_timeout)
}

/// How a lane past its deadline is ended: a case timeout, an init timeout or a watchdog kill with
/// a grace period between SIGTERM and SIGKILL; a late close with SIGKILL at once.
pub fn on_deadline(t: &LaneTimes) -> (KillReason, Duration) {
    if t.running_since.is_some() {
        (KillReason::CaseTimeout, KILL_GRACE)
    } else if t.init_since.is_some() {
        (KillReason::InitTimeout, KILL_GRACE)
    } else if t.outstanding {
        (KillReason::Watchdog, KILL_GRACE)
    } else {
        (KillReason::CloseLate, Duration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_table() {
        let t0 = Duration::ZERO;
        let s = |n: u64| t0 + Duration::from_secs(n);
        let limits = Limits {
            case_timeout: Duration::from_secs(10),
            init_timeout: Duration::from_secs(30),
            close_timeout: Duration::from_secs(100),
        };
        type Row = (
            &'static str,
            Option<Duration>,
            Option<Duration>,
            bool,
            Duration,
            Option<Duration>,
            Option<Duration>,
            Option<(KillReason, Duration)>,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                    running since, init since, outstanding, heard, closed at, deadline, kill
            ("a running case: its timeout",             Some(s(5)), None,       true,  s(7), None,       Some(s(15)),  Some((KillReason::CaseTimeout, KILL_GRACE))),
            ("a running case while closing",            Some(s(5)), None,       true,  s(7), Some(s(6)), Some(s(15)),  Some((KillReason::CaseTimeout, KILL_GRACE))),
            ("in an init: the init timeout, not the watchdog", None, Some(s(7)), true, s(7), None,       Some(s(37)),  Some((KillReason::InitTimeout, KILL_GRACE))),
            ("a case running after its init: its timeout", Some(s(9)), Some(s(7)), true, s(9), None,     Some(s(19)),  Some((KillReason::CaseTimeout, KILL_GRACE))),
            ("work outstanding, no case: the watchdog", None,       None,       true,  s(7), None,       Some(s(17)),  Some((KillReason::Watchdog, KILL_GRACE))),
            ("told to close: the close deadline",       None,       None,       false, s(7), Some(s(8)), Some(s(108)), Some((KillReason::CloseLate, Duration::ZERO))),
            ("idle: no deadline",                       None,       None,       false, s(7), None,       None,         None),
        ];
        for &(what, running_since, init_since, outstanding, heard, closed_at, want, kill) in rows {
            let t = LaneTimes {
                running_since,
                case_timeout: None,
                init_since,
                outstanding,
                heard,
                closed_at,
            };
            assert_eq!(deadline(&t, &limits), want, "{what}");
            if let Some(k) = kill {
                assert_eq!(on_deadline(&t), k, "{what}");
            }
        }
    }

    /// A running case's own timeout replaces `--case-timeout`, shorter or longer; nothing else
    /// the lane does is bounded by it.
    #[test]
    fn a_case_timeout_of_its_own_overrides_the_flag() {
        let t0 = Duration::ZERO;
        let s = |n: u64| t0 + Duration::from_secs(n);
        let limits = Limits {
            case_timeout: Duration::from_secs(300),
            init_timeout: Duration::from_secs(30),
            close_timeout: Duration::from_secs(100),
        };
        type Row = (&'static str, Option<Duration>, Option<u64>, Option<Duration>);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                  running since, own timeout (s), deadline
            ("no own timeout: --case-timeout",        Some(s(5)),    None,           Some(s(305))),
            ("a shorter own timeout",                 Some(s(5)),    Some(1),        Some(s(6))),
            ("a longer own timeout",                  Some(s(5)),    Some(900),      Some(s(905))),
            ("no case running: the watchdog's flag",  None,          Some(1),        Some(s(307))),
        ];
        for &(what, running_since, own, want) in rows {
            let t = LaneTimes {
                running_since,
                case_timeout: own.map(Duration::from_secs),
                init_since: None,
                outstanding: true,
                heard: s(7),
                closed_at: None,
            };
            assert_eq!(deadline(&t, &limits), want, "{what}");
        }
        assert_eq!(
            case_limit(Some(Duration::from_secs(2)), Duration::from_secs(300)),
            Duration::from_secs(2)
        );
        assert_eq!(
            case_limit(None, Duration::from_secs(300)),
            Duration::from_secs(300)
        );
    }
}
