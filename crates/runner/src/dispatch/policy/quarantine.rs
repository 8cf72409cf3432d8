//! DESIGN section 5 step 7, "quarantine": when a card is taken out of the run, and what happens to
//! work no healthy card is left for.
//!
//! Two kinds of quarantine: the card's fault (lanes that keep dying on it, a fresh lane that cannot
//! recover it, inits that time out, a failed preflight), which is remembered beside the card's
//! lock so the next run preflights it ([`Blamed::Card`]); and the host's (a lost lease, a lane
//! that cannot be started, lanes killed from outside again and again), which is not
//! ([`Blamed::Host`]). Infrastructure kills never count as lane deaths: they have their own bound,
//! [`MAX_INFRA_KILLS`] in a row, so a host that keeps killing a card's lanes outside any case
//! cannot make the run loop forever (a kill during a case costs that case an attempt, bounded by
//! `--retries`).
//!
//! This file owns the quarantine rules and their reasons and the multi-card phase's choice of
//! cards, as pure functions (what a strike's count means is `strikes`'). It never
//! records the `quarantined` event and never moves a case (the state machine applies what these
//! return).

use platform_common::{Code, DeviceId};

use super::blame::describe_signal;
use crate::report::model::LaneStatus;

/// Lane deaths in a row (no case finished in between) after which a card is quarantined.
pub const MAX_LANE_DEATHS: u32 = 4;

/// Lanes of a card killed in a row by signals the dispatcher did not send (no case finished on the
/// card in between) after which the card is taken out of the run: the host, not the card, is the
/// problem ([`Blamed::Host`]), but the run must end.
pub const MAX_INFRA_KILLS: u32 = 8;

/// Whose fault a quarantine is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blamed {
    /// The card's: remembered in its health record, so the next run that leases it runs a
    /// preflight before giving it work.
    Card,
    /// The host's (a lost lease, lanes that cannot start or keep being killed from outside): the
    /// card's record is left as it is.
    Host,
    /// The card's hardware (a code of class `hardware`): remembered as `needs_service`, so no run
    /// gives it work (nor preflights it) until an operator clears the record.
    Service,
}

/// Card `device` (physical id `physical`, which `cargo xtask cards` lists) reported hardware
/// fault `code` in case `case`. Returns the reason.
pub fn hardware_fault(device: DeviceId, physical: u32, code: Code, case: &str) -> String {
    let meaning = code.info().map_or("a hardware fault", |i| i.meaning);
    format!(
        "needs service: card {}reported {code} ({meaning}) in {case}; a force reset does not fix \
         it; clear it with `cargo cardguard cards --clear {physical}` once serviced",
        named(device, physical)
    )
}

/// Card `device`'s (physical `physical`) health record says it needs service (`remembered`): it
/// gets no work. Returns the reason.
pub fn still_needs_service(device: DeviceId, physical: u32, remembered: &str) -> String {
    format!(
        "needs service: card {}has a health record that says {remembered}; clear it with \
         `cargo cardguard cards --clear {physical}` once serviced",
        named(device, physical)
    )
}

/// `N ` or `N (physical P) `.
fn named(device: DeviceId, physical: u32) -> String {
    if device == physical {
        format!("{device} ")
    } else {
        format!("{device} (physical {physical}) ")
    }
}

/// After a lane on `device` was killed from outside by `signal`: with `kills` such kills in a row
/// now (this one included), the card leaves the run at [`MAX_INFRA_KILLS`] (blamed on the host).
/// Returns the reason.
pub fn after_infra_kill(kills: u32, device: DeviceId, signal: i32) -> Option<String> {
    (kills >= MAX_INFRA_KILLS).then(|| {
        format!(
            "{MAX_INFRA_KILLS} lane processes in a row on card {device} were killed by signals the \
             dispatcher did not send (the last by {}): the host keeps killing them; the card itself \
             is not suspected",
            describe_signal(signal)
        )
    })
}

/// A card whose health record said quarantined failed its preflight (`what`): it is quarantined at
/// the start of the run, before any work. Returns the reason.
pub fn preflight_failed(device: DeviceId, what: &str, remembered: &str) -> String {
    format!("preflight of card {device} failed ({what}); its health record said: {remembered}")
}

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
    /// Multi-card lanes killed from outside in a row.
    pub infra_kills: u32,
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
    if f.infra_kills >= MAX_INFRA_KILLS {
        return MultiPhase::Abandon(format!(
            "{MAX_INFRA_KILLS} multi-card lane processes in a row were killed by signals the \
             dispatcher did not send"
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
    fn a_hardware_reason_names_both_ids_and_the_clear_command_by_the_physical_one() {
        let ecc = platform_common::error::codes::RT_HBM_MULTI_BIT_ECC_ERROR;
        let r = hardware_fault(1, 5, ecc, "A::x");
        assert!(
            r.starts_with("needs service: card 1 (physical 5) reported 507054"),
            "{r}"
        );
        assert!(
            r.contains("in A::x;") && r.ends_with("`cargo cardguard cards --clear 5` once serviced"),
            "{r}"
        );
        let r = hardware_fault(2, 2, ecc, "A::x");
        assert!(r.starts_with("needs service: card 2 reported 507054"), "{r}");
        let r = still_needs_service(0, 3, "needs_service at T");
        assert!(
            r.starts_with("needs service: card 0 (physical 3) has a health record"),
            "{r}"
        );
        assert!(r.contains("--clear 3"), "{r}");
    }

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
    fn infra_kills_table() {
        for (kills, out) in [
            (1, false),
            (MAX_LANE_DEATHS, false),
            (MAX_INFRA_KILLS - 1, false),
            (MAX_INFRA_KILLS, true),
        ] {
            assert_eq!(after_infra_kill(kills, 3, 9).is_some(), out, "{kills} kills");
        }
        let reason = after_infra_kill(MAX_INFRA_KILLS, 3, 9).unwrap();
        assert!(
            reason.starts_with("8 lane processes in a row on card 3 were killed by signals the dispatcher did not send (the last by signal 9 (SIGKILL))"),
            "{reason}"
        );
        const {
            assert!(
                MAX_INFRA_KILLS > MAX_LANE_DEATHS,
                "several kills never look like a faulty card"
            )
        };
        assert_eq!(
            preflight_failed(2, "init failed with 507033", "quarantined at T by run R: dead"),
            "preflight of card 2 failed (init failed with 507033); its health record said: quarantined at T by run R: dead"
        );
    }

    #[test]
    fn multi_card_phase_table() {
        type Row = (
            &'static str,
            &'static [usize],
            usize,
            u32,
            u32,
            Option<(usize, &'static [usize])>,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                healthy,     need, deaths, infra kills, started on
            ("enough healthy cards",                &[0, 1, 2],  2,    0,      0, Some((0, &[1]))),
            ("a quarantined first card is skipped", &[1, 2, 3],  3,    0,      0, Some((1, &[2, 3]))),
            ("too few healthy cards",               &[2],        2,    0,      0, None),
            ("its lanes keep dying",                &[0, 1],     2,    MAX_LANE_DEATHS, 0, None),
            ("deaths below the bound",              &[0, 1],     2,    MAX_LANE_DEATHS - 1, 0, Some((0, &[1]))),
            ("infra kills are no deaths",           &[0, 1],     2,    0, MAX_LANE_DEATHS + 1, Some((0, &[1]))),
            ("but they are bounded",                &[0, 1],     2,    0, MAX_INFRA_KILLS, None),
        ];
        for &(what, healthy, need, deaths, infra_kills, want) in rows {
            let got = multi_card_phase(&MultiFacts {
                healthy,
                quarantined: &[7],
                need,
                deaths,
                infra_kills,
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
            infra_kills: 0,
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
