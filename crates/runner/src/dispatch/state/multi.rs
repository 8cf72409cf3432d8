//! The multi-card phase: once every single-card case has its verdict, the regular lanes are
//! closed (one process per card at a time) and one lane holding enough healthy cards runs the
//! multi-card cases (all of them in `pool`, a class's in `class`, one in `case`, a lane each).
//!
//! This file owns when the phase starts and applies [`crate::dispatch::policy::multi_card_phase`]
//! (which cards, or why the cases cannot run). A planner that reserves cards for N-card cases
//! (issue 23) replaces this phase. It never counts a multi-card lane's death (`exits` does,
//! through `health`).

use super::handout::Start;
use super::lane::Phase;
use super::machine::DispatchState;
use crate::dispatch::policy::{self, Isolation, LaneKind, MultiFacts, MultiPhase, StrikeKind};

impl DispatchState {
    /// Starts the multi-card phase when it is due. Returns whether it abandoned the cases (no
    /// lane is left to run them: the end-of-event checks see it at once).
    pub(super) fn maybe_start_multi(&mut self) -> bool {
        if self.finishing.is_some() || !self.work.has_multi() || self.work.has_queued() {
            return false;
        }
        if self
            .lanes
            .iter()
            .any(|l| l.phase != Phase::Gone && (l.kind == LaneKind::Multi || !l.outstanding.is_empty()))
        {
            return false;
        }
        // One process per card at a time: every other lane goes first (a starting one too).
        let mut waiting = false;
        for id in 0..self.lanes.len() {
            if self.lanes[id].phase != Phase::Gone {
                self.close_lane(id);
                waiting = true;
            }
        }
        if waiting {
            return false;
        }
        let healthy: Vec<usize> = (0..self.cards.len())
            .filter(|&c| !self.cards[c].quarantined)
            .collect();
        let quarantined: Vec<_> = self
            .cards
            .iter()
            .filter(|c| c.quarantined)
            .map(|c| c.device)
            .collect();
        let phase = policy::multi_card_phase(&MultiFacts {
            healthy: &healthy,
            quarantined: &quarantined,
            need: self.work.multi_cards() as usize,
            deaths: self.multi.get(StrikeKind::Death),
            infra_kills: self.multi.get(StrikeKind::InfraKill),
        });
        let cases = match self.settings.isolation {
            Isolation::Pool => self.work.take_multi(),
            Isolation::Class => self.work.take_multi_class(),
            Isolation::Case => self.work.take_multi_one(),
        };
        match phase {
            MultiPhase::Abandon(reason) => {
                self.abandon(cases, &reason);
                true
            }
            MultiPhase::Start { lead, extra } => {
                self.spawn(lead, Start::Multi(extra, cases));
                false
            }
        }
    }
}
