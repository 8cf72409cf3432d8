//! What the state machine knows about each card of the run: its lane, whether it is out of the
//! run, why its next lane is a fresh process, the retries queued since its lane started, its
//! health events, and its strikes.
//!
//! [`Strikes`] is the one counter of strikes against a card (lane deaths, infrastructure kills,
//! init timeouts, multi-card init failures), and of the multi-card lanes' own: a strike is added
//! here once, and what its count means is [`crate::dispatch::policy::after_strike`]'s.
//!
//! This file owns that data. It never decides anything and never touches a lease or a file (the
//! process layer holds the leases and writes the health records).

use std::collections::VecDeque;

use platform_common::lease::{CardHealth, MAX_HEALTH_EVENTS};
use platform_common::DeviceId;

use super::event::LaneId;
use crate::dispatch::policy::StrikeKind;
use crate::report::model::HealthRecord;

/// Strikes in a row, per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Strikes {
    deaths: u32,
    infra_kills: u32,
    init_timeouts: u32,
    multi_init_failures: u32,
}

impl Strikes {
    /// Adds one strike of `kind`; returns how many of that kind are now in a row (this one
    /// included).
    pub fn add(&mut self, kind: StrikeKind) -> u32 {
        let n = self.slot(kind);
        *n += 1;
        *n
    }

    /// How many of `kind` are in a row.
    pub fn get(&self, kind: StrikeKind) -> u32 {
        match kind {
            StrikeKind::Death => self.deaths,
            StrikeKind::InfraKill => self.infra_kills,
            StrikeKind::InitTimeout => self.init_timeouts,
            StrikeKind::MultiInitFailure => self.multi_init_failures,
        }
    }

    /// A case finished on the card: its lanes' deaths and kills are no longer in a row.
    pub fn case_finished(&mut self) {
        self.deaths = 0;
        self.infra_kills = 0;
    }

    /// An init completed on the card: its init timeouts are no longer in a row.
    pub fn init_done(&mut self) {
        self.init_timeouts = 0;
    }

    fn slot(&mut self, kind: StrikeKind) -> &mut u32 {
        match kind {
            StrikeKind::Death => &mut self.deaths,
            StrikeKind::InfraKill => &mut self.infra_kills,
            StrikeKind::InitTimeout => &mut self.init_timeouts,
            StrikeKind::MultiInitFailure => &mut self.multi_init_failures,
        }
    }
}

/// What a card brings to the run.
#[derive(Debug, Clone)]
pub struct CardSeed {
    /// Its number.
    pub device: DeviceId,
    /// Its physical id (the key of its lock and health record; `cargo xtask cards` lists it).
    pub physical: u32,
    /// Its health record beside its lock, if it has one (read when the run took the card).
    pub health: Option<CardHealth>,
}

/// One card of the run.
#[derive(Debug)]
pub struct Card {
    /// Its number.
    pub device: DeviceId,
    /// Its lane (starting or alive), if it has one.
    pub lane: Option<LaneId>,
    /// Its physical id.
    pub physical: u32,
    /// Whether it is out of the run.
    pub quarantined: bool,
    /// Why the next lane started on it is a fresh process (an unclean exit, a poison-sink
    /// re-run): recorded as `fresh_process` when that lane starts, then cleared.
    pub replacement: Option<String>,
    /// Cases whose failed attempt on this card was queued for a retry since its lane started (a
    /// fresh lane's pass takes the ones still queued: [`crate::dispatch::policy::fresh_pass`]).
    pub retries: Vec<usize>,
    /// Strikes against it, in a row.
    pub strikes: Strikes,
    /// Its health record, when it said quarantined, until its preflight passed or failed.
    pub preflight: Option<CardHealth>,
    /// Its health record, when it said the card needs service, until the run's start took the
    /// card out.
    pub serviced: Option<CardHealth>,
    /// Its health events of this run (the last ones), for its health record.
    pub recent: VecDeque<HealthRecord>,
}

impl Card {
    /// The card `seed` brings: a record that says quarantined asks for a preflight.
    pub fn new(seed: CardSeed) -> Self {
        Self {
            device: seed.device,
            physical: seed.physical,
            lane: None,
            quarantined: false,
            replacement: None,
            retries: Vec::new(),
            strikes: Strikes::default(),
            preflight: seed.health.clone().filter(CardHealth::is_quarantined),
            serviced: seed.health.filter(CardHealth::needs_service),
            recent: VecDeque::new(),
        }
    }

    /// Keeps a health event for the card's record (the last [`MAX_HEALTH_EVENTS`]).
    pub fn keep(&mut self, record: HealthRecord) {
        if self.recent.len() == MAX_HEALTH_EVENTS {
            self.recent.pop_front();
        }
        self.recent.push_back(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strikes_count_in_a_row_and_reset_as_their_kind_says() {
        let mut s = Strikes::default();
        assert_eq!(s.add(StrikeKind::Death), 1);
        assert_eq!(s.add(StrikeKind::Death), 2);
        assert_eq!(s.add(StrikeKind::InfraKill), 1, "kinds count apart");
        assert_eq!(s.add(StrikeKind::InitTimeout), 1);
        assert_eq!(s.add(StrikeKind::MultiInitFailure), 1);
        s.init_done();
        assert_eq!(
            s.get(StrikeKind::InitTimeout),
            0,
            "an init done clears init timeouts"
        );
        assert_eq!(s.get(StrikeKind::Death), 2, "and nothing else");
        s.case_finished();
        assert_eq!(
            (s.get(StrikeKind::Death), s.get(StrikeKind::InfraKill)),
            (0, 0),
            "a finished case clears deaths and kills"
        );
        assert_eq!(
            s.get(StrikeKind::MultiInitFailure),
            1,
            "multi-card init failures stay for the run"
        );
    }
}
