//! Strikes against a card (DESIGN section 5 step 7): a lane death, an infrastructure kill, an init
//! past `--init-timeout`, a multi-card lane that could not init the card. Each is one more of
//! something that, in a row, takes the card out of the run; each kind has its own bound:
//!
//! - lane deaths: [`super::MAX_LANE_DEATHS`] in a row (no case finished on the card in between)
//!   quarantine the card;
//! - infrastructure kills (a signal the dispatcher did not send): [`super::MAX_INFRA_KILLS`] in a row
//!   take it out, blamed on the host, never a death;
//! - init timeouts: the first gives the card a fresh process, the second in a row (or a fresh
//!   lane's first) quarantines it;
//! - multi-card init failures: the first gives the card a fresh process in the next multi-card
//!   lane, the second quarantines it.
//!
//! This file owns what a count means, as a pure function of the strike and its count
//! ([`after_strike`]). The state machine counts each strike in one place and asks this file what
//! the new count means; it never counts anything itself and never quarantines a card.

use platform_common::DeviceId;

use super::quarantine::{after_infra_kill, after_lane_death, Blamed};
use crate::report::model::LaneStatus;

/// One strike against a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strike {
    /// A lane on the card died: it crashed, was ended for a timeout, or exited with work
    /// unfinished.
    Death,
    /// A lane on the card was killed by `signal`, which the dispatcher did not send.
    InfraKill {
        /// The signal.
        signal: i32,
    },
    /// Lane `pid` (a fresh lane when `fresh`) was ended for an init past `--init-timeout` on the
    /// card.
    InitTimeout {
        /// The lane's pid.
        pid: u32,
        /// Whether it was a fresh lane (one bounded pass over a poison sink's cases).
        fresh: bool,
    },
    /// Multi-card lane `pid` (ended with `status`) could not init the card.
    MultiInitFailure {
        /// The lane's pid.
        pid: u32,
        /// How it ended.
        status: LaneStatus,
    },
}

/// The kinds of strikes, each counted on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrikeKind {
    /// [`Strike::Death`].
    Death,
    /// [`Strike::InfraKill`].
    InfraKill,
    /// [`Strike::InitTimeout`].
    InitTimeout,
    /// [`Strike::MultiInitFailure`].
    MultiInitFailure,
}

impl Strike {
    /// Its kind (what it is counted as).
    pub fn kind(&self) -> StrikeKind {
        match self {
            Strike::Death => StrikeKind::Death,
            Strike::InfraKill { .. } => StrikeKind::InfraKill,
            Strike::InitTimeout { .. } => StrikeKind::InitTimeout,
            Strike::MultiInitFailure { .. } => StrikeKind::MultiInitFailure,
        }
    }
}

/// What a strike's count means for its card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrikeStep {
    /// The card stays in the run.
    Stay,
    /// The card stays, and its next lane is a fresh process: the reason is that lane's
    /// `fresh_process` detail.
    FreshNext(String),
    /// The card leaves the run, for this reason, blamed on the card (remembered in its health
    /// record) or on the host.
    Quarantine(String, Blamed),
}

/// `strike` is the `in_a_row`-th of its kind in a row on card `device` (this one included).
pub fn after_strike(strike: &Strike, in_a_row: u32, device: DeviceId) -> StrikeStep {
    match *strike {
        Strike::Death => match after_lane_death(in_a_row, device) {
            Some(reason) => StrikeStep::Quarantine(reason, Blamed::Card),
            None => StrikeStep::Stay,
        },
        Strike::InfraKill { signal } => match after_infra_kill(in_a_row, device, signal) {
            Some(reason) => StrikeStep::Quarantine(reason, Blamed::Host),
            None => StrikeStep::Stay,
        },
        Strike::InitTimeout { pid, fresh } => {
            if fresh || in_a_row > 1 {
                StrikeStep::Quarantine(
                    format!("a fresh lane process timed out in init on card {device} too (lane pid {pid})"),
                    Blamed::Card,
                )
            } else {
                StrikeStep::FreshNext(format!(
                    "fresh process: lane pid {pid} timed out in init on card {device}"
                ))
            }
        }
        Strike::MultiInitFailure { pid, status } => {
            if in_a_row > 1 {
                StrikeStep::Quarantine(
                    format!("a fresh multi-card lane could not init card {device} either ({status})"),
                    Blamed::Card,
                )
            } else {
                StrikeStep::FreshNext(format!(
                    "fresh multi-card lane: the previous one (pid {pid}) could not init card {device} \
                     ({status})"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::policy::{MAX_INFRA_KILLS, MAX_LANE_DEATHS};

    /// The short name of a step, for the table.
    fn short(s: &StrikeStep) -> &'static str {
        match s {
            StrikeStep::Stay => "stay",
            StrikeStep::FreshNext(_) => "fresh next",
            StrikeStep::Quarantine(_, Blamed::Card) => "quarantine",
            StrikeStep::Quarantine(_, Blamed::Host) => "host quarantine",
            StrikeStep::Quarantine(_, Blamed::Service) => "needs service",
        }
    }

    #[test]
    fn strike_table() {
        const DEATH: Strike = Strike::Death;
        const KILL: Strike = Strike::InfraKill { signal: 9 };
        const INIT: Strike = Strike::InitTimeout { pid: 9, fresh: false };
        const FRESH_INIT: Strike = Strike::InitTimeout { pid: 9, fresh: true };
        const MULTI: Strike = Strike::MultiInitFailure {
            pid: 9,
            status: LaneStatus::Exited(75),
        };
        #[rustfmt::skip]
        let rows: &[(&str, Strike, u32, &str)] = &[
            // what,                                            strike,     in a row,            then
            ("a first death",                                   DEATH,      1,                   "stay"),
            ("deaths below the bound",                          DEATH,      MAX_LANE_DEATHS - 1, "stay"),
            ("the fourth death in a row quarantines",           DEATH,      MAX_LANE_DEATHS,     "quarantine"),
            ("and any after it",                                DEATH,      MAX_LANE_DEATHS + 1, "quarantine"),
            ("a kill from outside",                             KILL,       1,                   "stay"),
            ("as many kills as deaths quarantine: no death",    KILL,       MAX_LANE_DEATHS,     "stay"),
            ("kills from outside are bounded, on the host",     KILL,       MAX_INFRA_KILLS,     "host quarantine"),
            ("the first init timeout: a fresh process next",    INIT,       1,                   "fresh next"),
            ("the fresh process timed out too",                 INIT,       2,                   "quarantine"),
            ("a sink's fresh lane timed out",                   FRESH_INIT, 1,                   "quarantine"),
            ("a multi-card lane could not init the card",       MULTI,      1,                   "fresh next"),
            ("the next one could not either",                   MULTI,      2,                   "quarantine"),
            ("nor the one after",                               MULTI,      3,                   "quarantine"),
        ];
        for &(what, strike, n, want) in rows {
            assert_eq!(short(&after_strike(&strike, n, 1)), want, "{what}");
        }
    }

    #[test]
    fn the_reasons_say_what_happened() {
        let init = Strike::InitTimeout { pid: 9, fresh: false };
        assert_eq!(
            after_strike(&init, 1, 1),
            StrikeStep::FreshNext("fresh process: lane pid 9 timed out in init on card 1".into())
        );
        let multi = Strike::MultiInitFailure {
            pid: 9,
            status: LaneStatus::Exited(75),
        };
        assert!(matches!(after_strike(&multi, 1, 1), StrikeStep::FreshNext(r) if r.contains("pid 9")));
        assert!(
            matches!(after_strike(&multi, 2, 1), StrikeStep::Quarantine(r, Blamed::Card) if r.contains("card 1 either"))
        );
        assert_eq!(
            after_strike(&Strike::Death, MAX_LANE_DEATHS, 2),
            StrikeStep::Quarantine("4 lane processes in a row died on card 2".into(), Blamed::Card)
        );
        assert_eq!(Strike::InfraKill { signal: 15 }.kind(), StrikeKind::InfraKill);
    }
}
