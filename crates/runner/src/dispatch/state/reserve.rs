//! N-card cases without a phase (issue 23 item 3): EASY backfilling. The next unit of N-card
//! cases (a planned block, a class's, a retry) reserves the cards the plan has it on (a planned
//! block whose cards are all healthy), else the N healthy cards predicted to come free first (by
//! the estimates of what their lanes still hold); the lanes on the other cards
//! take work as ever, and a lane on a reserved card takes only work that ends, by the estimates,
//! before the last reserved card comes free (the reservation's start), so backfilling never
//! delays it. Once every reserved card holds nothing its regular lane is closed, and once every
//! one is gone the multi-card lane starts on them (its own card the reservation's first); the
//! next unit reserves at once. Done with its cases, the multi-card lane releases the other cards
//! and goes on as its own card's regular lane (`handout`).
//!
//! Without estimates (`--order suite`, no history) a reserved card takes nothing more. A
//! quarantine of a reserved card drops the reservation: the next check reserves again among the
//! healthy cards, or abandons the unit with the reason when too few are left (or its lanes keep
//! dying: [`crate::dispatch::policy::multi_card_phase`]). This file owns the reservation; it never
//! judges an exit (`exits`) nor counts a strike (`health`).

use super::handout::Start;
use super::lane::Phase;
use super::machine::DispatchState;
use crate::dispatch::policy::{self, Isolation, LaneKind, MultiFacts, MultiPhase, StrikeKind};

impl DispatchState {
    /// Whether a lane that is not gone holds card `c` (a multi-card lane's further cards too).
    pub(super) fn card_held(&self, c: usize) -> bool {
        self.lanes
            .iter()
            .any(|l| l.phase != Phase::Gone && l.cards.contains(&c))
    }

    /// Whether card `c` is reserved for the next N-card cases.
    pub(super) fn reserved(&self, c: usize) -> bool {
        self.reservation.as_ref().is_some_and(|r| r.contains(&c))
    }

    /// The estimated time until card `c` is free (ms): what its lanes still hold, the running
    /// case counted from its start.
    pub(super) fn busy_ms(&self, c: usize) -> u64 {
        let now = self.now;
        self.lanes
            .iter()
            .filter(|l| l.phase != Phase::Gone && l.cards.contains(&c))
            .map(|l| {
                let held = l.first.iter().chain(l.outstanding.iter()).copied();
                let mut ms = self.work.est_ms(held);
                if let Some((i, since)) = l.running {
                    let ran = u64::try_from(now.saturating_sub(since).as_millis()).unwrap_or(u64::MAX);
                    let own = self.work.est_ms([i]);
                    let counted = l.outstanding.contains(&i) || l.first.contains(&i);
                    ms = ms.saturating_sub(if counted { own.min(ran) } else { 0 });
                }
                ms
            })
            .sum()
    }

    /// How much work (ms) the lane on reserved card `c` may still take without delaying the
    /// reservation; `None` when `c` is not reserved (no bound).
    pub(super) fn backfill_room(&self, c: usize) -> Option<u64> {
        let r = self.reservation.as_ref().filter(|r| r.contains(&c))?;
        let start = r.iter().map(|&x| self.busy_ms(x)).max().unwrap_or(0);
        Some(start.saturating_sub(self.busy_ms(c)))
    }

    /// Reserves cards for the next unit of N-card cases when none is reserved (see the module
    /// docs). Returns whether it abandoned a unit (too few healthy cards, lanes that keep dying).
    pub(super) fn reserve_next(&mut self) -> bool {
        if self
            .reservation
            .as_ref()
            .is_some_and(|r| r.iter().any(|&c| self.cards[c].quarantined))
        {
            // A reserved card left the run: re-plan.
            self.reservation = None;
        }
        if self.reservation.is_some()
            || self.finishing.is_some()
            || self.interrupted.is_some()
            || !self.work.has_multi()
        {
            return false;
        }
        let need = self.work.next_multi_cards() as usize;
        let mut healthy: Vec<usize> = (0..self.cards.len())
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
            need,
            deaths: self.multi.get(StrikeKind::Death),
            infra_kills: self.multi.get(StrikeKind::InfraKill),
        });
        if let MultiPhase::Abandon(reason) = phase {
            let cases = self.work.take_multi();
            self.abandon(cases, &reason);
            return true;
        }
        // The cards the plan has the unit on while they are all healthy (the planner weighed
        // which cards a block takes: the inits its lane and the lanes after it pay); else the
        // cards free first, a card no lane holds before one a lane is starting on.
        let planned = self
            .work
            .next_multi_planned_cards()
            .filter(|p| p.len() == need && p.iter().all(|c| healthy.contains(c)))
            .map(<[usize]>::to_vec);
        // The first card is the lane's own, which goes on as that card's regular lane after the
        // unit (`ToLane::Release`): the plan's first, which it gave the block's runtime's work.
        let cards = planned.unwrap_or_else(|| {
            healthy.sort_by_key(|&c| (self.busy_ms(c), self.card_held(c), c));
            healthy.truncate(need);
            healthy.sort_unstable();
            healthy
        });
        self.reservation = Some(cards);
        false
    }

    /// The reservation's checks after an event: reserve, close the regular lanes of reserved
    /// cards once every one is free, start the multi-card lane once they are gone; then the next
    /// unit. Returns whether it abandoned a unit (the end-of-event checks see it at once).
    pub(super) fn schedule_multi(&mut self) -> bool {
        loop {
            if self.reserve_next() {
                return true;
            }
            let Some(cards) = self.reservation.clone() else {
                return false;
            };
            let busy = |s: &Self, c: usize| {
                s.lanes.iter().any(|l| {
                    l.phase != Phase::Gone
                        && l.cards.contains(&c)
                        && (l.kind != LaneKind::Regular || l.unfinished() > 0 || !l.first.is_empty())
                })
            };
            if cards.iter().any(|&c| busy(self, c)) {
                return false;
            }
            // Every reserved card is free: one process per card, so their lanes go first.
            let mut waiting = false;
            for id in 0..self.lanes.len() {
                let l = &self.lanes[id];
                if l.phase != Phase::Gone && l.cards.iter().any(|c| cards.contains(c)) {
                    waiting = true;
                    self.close_lane(id);
                }
            }
            if waiting {
                return false;
            }
            let cases = match self.settings.isolation {
                Isolation::Pool => self.work.take_multi(),
                Isolation::Class => self.work.take_multi_class(),
                Isolation::Case => self.work.take_multi_one(),
            };
            self.reservation = None;
            self.spawn(cards[0], Start::Multi(cards[1..].to_vec(), cases));
        }
    }
}
