//! Ending a lane, as the state machine keeps it: SIGTERM now, SIGKILL once a grace period is over
//! (or SIGKILL at once), on the run's clock.
//!
//! This file owns one termination's logic: which signal goes when, and the deadline the state
//! machine wakes up for. It never sends a signal (the process layer carries out the
//! [`LaneSignal`]s it returns) and never decides *why* a lane is ended (the clock rules do, and
//! the termination keeps their [`KillReason`]).

use std::time::Duration;

use super::event::LaneSignal;
use crate::dispatch::policy::KillReason;

/// One termination of a lane's process group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    sigkill_at: Duration,
    sent_kill: bool,
    /// Why.
    pub reason: KillReason,
}

impl Ending {
    /// A termination begun at `now`: the signal to send now (SIGTERM, or SIGKILL when `grace`
    /// is zero) and, after SIGTERM, SIGKILL at `now + grace` ([`Ending::poll`]).
    pub fn begin(reason: KillReason, now: Duration, grace: Duration) -> (Self, LaneSignal) {
        let kill_now = grace.is_zero();
        let ending = Self {
            sigkill_at: now + grace,
            sent_kill: kill_now,
            reason,
        };
        let signal = if kill_now {
            LaneSignal::Kill
        } else {
            LaneSignal::Term
        };
        (ending, signal)
    }

    /// When SIGKILL is due, while it has not been sent.
    pub fn deadline(&self) -> Option<Duration> {
        (!self.sent_kill).then_some(self.sigkill_at)
    }

    /// Whether SIGKILL is to be sent now: the grace period is over at `now` and it was not sent
    /// yet (it is then taken as sent).
    pub fn poll(&mut self, now: Duration) -> bool {
        if self.sent_kill || now < self.sigkill_at {
            return false;
        }
        self.sent_kill = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigterm_then_sigkill_after_the_grace_once() {
        let start = Duration::from_secs(10);
        let grace = Duration::from_secs(2);
        let (mut e, first) = Ending::begin(KillReason::CaseTimeout, start, grace);
        assert_eq!(first, LaneSignal::Term);
        assert_eq!(e.deadline(), Some(start + grace));
        assert!(!e.poll(start + grace / 2), "no SIGKILL within the grace period");
        assert!(e.poll(start + grace), "SIGKILL once the grace period is over");
        assert_eq!(e.deadline(), None);
        assert!(!e.poll(start + grace * 2), "SIGKILL is sent once");
        assert_eq!(e.reason, KillReason::CaseTimeout);
    }

    #[test]
    fn a_zero_grace_kills_at_once() {
        let (mut e, first) = Ending::begin(KillReason::CloseLate, Duration::ZERO, Duration::ZERO);
        assert_eq!(first, LaneSignal::Kill);
        assert_eq!(e.deadline(), None);
        assert!(!e.poll(Duration::from_secs(1)));
    }
}
