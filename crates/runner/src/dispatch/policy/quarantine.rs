//! DESIGN section 5 step 7, "quarantine": when a card is taken out of the run, and what happens to
//! work no healthy card is left for.
//!
//! This file owns the quarantine rules and the multi-card phase's choice of cards, as pure
//! functions. It never records the `quarantined` event and never moves a case (the event loop
//! applies what these return).

use platform_common::DeviceId;

use crate::report::model::LaneStatus;

/// Lane deaths in a row (no case finished in between) after which a card is quarantined.
pub const MAX_LANE_DEATHS: u32 = 4;

/// After a lane on `device` died uncleanly: with `deaths` deaths in a row now (this one
/// included), the card is quarantined at [`MAX_LANE_DEATHS`]. Returns the reason.
pub fn after_lane_death(deaths: u32, device: DeviceId) -> Option<String> {
    (deaths >= MAX_LANE_DEATHS)
        .then(|| format!("{MAX_LANE_DEATHS} lane processes in a row died on card {device}"))
}

/// A fresh lane (no sink, one bounded pass) could not recover its card either: the card is
/// quarantined. Returns the reason.
pub fn fresh_lane_failed(device: DeviceId, status: LaneStatus) -> String {
    format!("a fresh lane process could not recover card {device} either ({status})")
}

/// A lane process could not be started on a card in `tries` tries (see [`super::spawn`]): the card
/// is quarantined (its cases move to the other cards). Returns the reason.
pub fn spawn_failed(error: &std::io::Error, tries: u32) -> String {
    format!("cannot start a lane process ({tries} tries): {error}")
}

/// What a card gets whose lane was ended because an init exceeded `--init-timeout`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitTimeoutStep {
    /// The first in a row: the lane's cases go back to the queue and the card's next lane is a
    /// fresh process (the reason is its `fresh_process` detail).
    FreshNext(String),
    /// The card's fresh lane timed out in init too (or a fresh lane of a poison sink did): the
    /// card is quarantined, as for a failed init.
    Quarantine(String),
}

/// Lane pid `pid` on `device` (a fresh lane when `fresh`) was ended for an init past
/// `--init-timeout`; `before` init timeouts in a row happened on the card earlier.
pub fn after_init_timeout(device: DeviceId, pid: u32, fresh: bool, before: u32) -> InitTimeoutStep {
    if fresh || before > 0 {
        InitTimeoutStep::Quarantine(format!(
            "a fresh lane process timed out in init on card {device} too (lane pid {pid})"
        ))
    } else {
        InitTimeoutStep::FreshNext(format!(
            "fresh process: lane pid {pid} timed out in init on card {device}"
        ))
    }
}

/// What a card whose worker failed to init in a multi-card lane gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiInitStep {
    /// The first failure: the next multi-card lane is this card's fresh process (the reason is
    /// its `fresh_process` detail).
    FreshNext(String),
    /// The second: the card is quarantined, as a single card's fresh lane that cannot init is.
    Quarantine(String),
}

/// A multi-card lane (pid `pid`, ended with `status`) could not init card `device`, which had
/// failed `failed_before` times before in such lanes.
pub fn after_multi_init_failure(
    device: DeviceId,
    failed_before: u32,
    pid: u32,
    status: LaneStatus,
) -> MultiInitStep {
    if failed_before > 0 {
        MultiInitStep::Quarantine(format!(
            "a fresh multi-card lane could not init card {device} either ({status})"
        ))
    } else {
        MultiInitStep::FreshNext(format!(
            "fresh multi-card lane: the previous one (pid {pid}) could not init card {device} ({status})"
        ))
    }
}

/// Every card is quarantined: every open case ends `failed`, class infrastructure, with this
/// reason (nothing is dropped).
pub fn no_healthy_card(devices: &[DeviceId]) -> String {
    let list: Vec<String> = devices.iter().map(ToString::to_string).collect();
    format!(
        "no healthy card left: every card of the run ({}) is quarantined",
        list.join(", ")
    )
}

/// The multi-card phase's facts: which cards are healthy, what the cases need.
#[derive(Debug, Clone, Copy)]
pub struct MultiFacts<'a> {
    /// Healthy cards (indices), in run order.
    pub healthy: &'a [usize],
    /// Quarantined cards, for the reason.
    pub quarantined: &'a [DeviceId],
    /// The most cards any multi-card case needs.
    pub need: usize,
    /// Multi-card lanes that died in a row.
    pub deaths: u32,
}

/// How the multi-card phase goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiPhase {
    /// One lane on `lead` holding `extra` too runs every multi-card case.
    Start {
        /// The card whose lane it is.
        lead: usize,
        /// Its further cards.
        extra: Vec<usize>,
    },
    /// The cases cannot run: each ends `failed` (infrastructure) with this reason.
    Abandon(String),
}

/// The multi-card phase: the first `need` healthy cards, unless too few are left or its lanes keep
/// dying.
pub fn multi_card_phase(f: &MultiFacts<'_>) -> MultiPhase {
    if f.healthy.len() < f.need {
        let out: Vec<String> = f.quarantined.iter().map(ToString::to_string).collect();
        return MultiPhase::Abandon(format!(
            "needs {} healthy cards, only {} left: card(s) {} quarantined",
            f.need,
            f.healthy.len(),
            out.join(", ")
        ));
    }
    if f.deaths >= MAX_LANE_DEATHS {
        return MultiPhase::Abandon(format!(
            "{MAX_LANE_DEATHS} multi-card lane processes in a row died"
        ));
    }
    MultiPhase::Start {
        lead: f.healthy[0],
        extra: f.healthy[1..f.need].to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_deaths_table() {
        for (deaths, quarantined) in [(1, false), (3, false), (4, true), (5, true)] {
            assert_eq!(
                after_lane_death(deaths, 2).is_some(),
                quarantined,
                "{deaths} deaths"
            );
        }
        assert_eq!(
            after_lane_death(4, 2).unwrap(),
            "4 lane processes in a row died on card 2"
        );
    }

    #[test]
    fn init_timeouts_table() {
        #[rustfmt::skip]
        let rows: &[(&str, bool, u32, bool)] = &[
            // what,                                           fresh lane, before, quarantined
            ("the first init timeout: a fresh process next",   false,      0,      false),
            ("the fresh process timed out too",                false,      1,      true),
            ("a sink's fresh lane timed out",                  true,       0,      true),
        ];
        for &(what, fresh, before, quarantined) in rows {
            let step = after_init_timeout(1, 9, fresh, before);
            assert_eq!(
                matches!(step, InitTimeoutStep::Quarantine(_)),
                quarantined,
                "{what}: {step:?}"
            );
        }
        assert_eq!(
            after_init_timeout(1, 9, false, 0),
            InitTimeoutStep::FreshNext("fresh process: lane pid 9 timed out in init on card 1".into())
        );
    }

    #[test]
    fn multi_init_failures_table() {
        let st = LaneStatus::Exited(75);
        assert!(
            matches!(after_multi_init_failure(1, 0, 9, st), MultiInitStep::FreshNext(r) if r.contains("pid 9"))
        );
        assert!(
            matches!(after_multi_init_failure(1, 1, 9, st), MultiInitStep::Quarantine(r) if r.contains("card 1 either"))
        );
        assert!(matches!(
            after_multi_init_failure(1, 2, 9, st),
            MultiInitStep::Quarantine(_)
        ));
    }

    #[test]
    fn multi_card_phase_table() {
        type Row = (
            &'static str,
            &'static [usize],
            usize,
            u32,
            Option<(usize, &'static [usize])>,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                healthy,     need, deaths, started on
            ("enough healthy cards",                &[0, 1, 2],  2,    0,      Some((0, &[1]))),
            ("a quarantined first card is skipped", &[1, 2, 3],  3,    0,      Some((1, &[2, 3]))),
            ("too few healthy cards",               &[2],        2,    0,      None),
            ("its lanes keep dying",                &[0, 1],     2,    MAX_LANE_DEATHS, None),
            ("deaths below the bound",              &[0, 1],     2,    MAX_LANE_DEATHS - 1, Some((0, &[1]))),
        ];
        for &(what, healthy, need, deaths, want) in rows {
            let got = multi_card_phase(&MultiFacts {
                healthy,
                quarantined: &[7],
                need,
                deaths,
            });
            match (got, want) {
                (MultiPhase::Start { lead, extra }, Some((l, e))) => {
                    assert_eq!((lead, extra.as_slice()), (l, e), "{what}");
                }
                (MultiPhase::Abandon(reason), None) => assert!(!reason.is_empty(), "{what}"),
                (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
            }
        }
        let MultiPhase::Abandon(reason) = multi_card_phase(&MultiFacts {
            healthy: &[0],
            quarantined: &[1, 3],
            need: 2,
            deaths: 0,
        }) else {
            panic!("abandoned");
        };
        assert_eq!(
            reason,
            "needs 2 healthy cards, only 1 left: card(s) 1, 3 quarantined"
        );
    }

    #[test]
    fn no_healthy_card_names_every_card() {
        assert_eq!(
            no_healthy_card(&[0, 1]),
            "no healthy card left: every card of the run (0, 1) is quarantined"
        );
        assert_eq!(
            fresh_lane_failed(3, LaneStatus::Exited(75)),
            "a fresh lane process could not recover card 3 either (exit 75)"
        );
    }
}
