//! Lanes and their work: asking for a lane (regular, fresh, multi-card, preflight) and what follows
//! its start or its failure to start, handing out work by the plan, an assignment that could not
//! be sent, and closing lanes.
//!
//! Work goes out once every lane asked for has started (or failed to): a lane that ran while
//! another was being started could reach a point where a second signal kills the live lanes and
//! exits while the half-started child still holds the run's descriptors, its card leases among
//! them. The plan ([`crate::dispatch::policy::plan`]) is the one call that says which cards get a
//! lane and which lanes take the next units; this file follows it. It never judges an attempt
//! or an exit (`messages`, `exits`) and never starts a process (the process layer does).

use platform_common::lease::LeaseError;

use super::event::{Action, LaneId, NotSpawned};
use super::lane::{Lane, Phase};
use super::machine::DispatchState;
use super::unit::Unit;
use crate::dispatch::policy::{self, LaneKind, Plan, PlanFacts, Take};
use crate::protocol::ToLane;
use crate::report::model::{Event as Journal, HealthRecord, RunnerEventKind};

/// What kind of lane to ask for.
#[derive(Debug)]
pub enum Start {
    /// A regular lane with a sink, fed from the queue.
    Regular,
    /// A fresh lane without a sink for these cases (one bounded pass).
    Fresh(Vec<usize>),
    /// A lane holding these extra cards (indices) for these multi-card cases.
    Multi(Vec<usize>, Vec<usize>),
    /// A preflight lane: it builds a worker, probes the card and exits (no work, no sink).
    Preflight,
}

impl DispatchState {
    /// The run begins: a preflight lane on each card whose record says quarantined, the
    /// multi-card lanes of the N-card cases whose cards are free, then the first hand-out.
    pub(super) fn on_begin(&mut self) {
        self.start_preflights();
        // N-card cases first: their cards, all free now, get their lanes before the rest.
        self.schedule_multi();
        self.refill();
    }

    /// Asks for a lane on `card` (and, for the multi-card phase, its extra cards). A card out of
    /// the run gets none: the lane's cases go back to the queue.
    pub(super) fn spawn(&mut self, card: usize, start: Start) {
        let (kind, cards, first) = match start {
            Start::Regular => (LaneKind::Regular, vec![card], Vec::new()),
            Start::Fresh(cases) => (LaneKind::Fresh, vec![card], cases),
            Start::Multi(extra, cases) => {
                let cards = std::iter::once(card).chain(extra).collect();
                (LaneKind::Multi, cards, cases)
            }
            Start::Preflight => (LaneKind::Preflight, vec![card], Vec::new()),
        };
        if cards.iter().any(|&c| self.cards[c].quarantined) {
            self.work.requeue(&first);
            return;
        }
        let id = self.lanes.len();
        self.lanes
            .push(Lane::starting(cards.clone(), kind, first, self.now));
        self.cards[card].lane = Some(id);
        self.act(Action::Spawn {
            lane: id,
            cards,
            kind,
        });
    }

    /// Lane `lane` runs as `pid`: `lane_started`, `fresh_process` on each of its cards its start
    /// replaces a lane on, its first cases; once no lane is starting any more, the hand-out.
    pub(super) fn on_spawned(&mut self, lane: LaneId, pid: u32) {
        let now = self.now;
        let l = &mut self.lanes[lane];
        l.phase = Phase::Alive;
        l.pid = pid;
        l.heard = now;
        let first = std::mem::take(&mut l.first);
        let held = l.cards.clone();
        let device = self.cards[l.card].device;
        let at_ms = self.now_ms();
        self.record(Journal::LaneStarted { at_ms, device, pid });
        for c in held {
            if let Some(why) = self.cards[c].replacement.take() {
                self.health(
                    c,
                    HealthRecord::runner(at_ms, RunnerEventKind::FreshProcess, why).with_pid(pid),
                );
            }
        }
        if !first.is_empty() {
            self.assign(lane, Unit { cases: first });
        }
        if self.finishing.is_some() {
            self.close_lane(lane);
        }
        self.refill();
    }

    /// Lane `lane` could not be started: its card leaves the run (the host's fault: a lost lease,
    /// a spawn that failed every try) and its cases go back to the queue.
    pub(super) fn on_not_spawned(&mut self, lane: LaneId, why: NotSpawned) {
        let l = &mut self.lanes[lane];
        l.phase = Phase::Gone;
        let card = l.card;
        let first = std::mem::take(&mut l.first);
        if self.cards[card].lane == Some(lane) {
            self.cards[card].lane = None;
        }
        match why {
            NotSpawned::LeaseLost { card, lost } => self.lease_lost(card, lost),
            NotSpawned::Failed { error, tries } => {
                let reason = policy::quarantine::spawn_failed(&error, tries);
                self.quarantine_host(card, &reason);
            }
        }
        self.work.requeue(&first);
        self.refill();
    }

    /// An assignment to lane `lane` was not sent (its card's lease no longer holds): the card
    /// leaves the run and the assignment's cases go back to the queue for the other cards.
    pub(super) fn on_not_sent(&mut self, lane: LaneId, msg: &ToLane, lost: LeaseError) {
        let card = self.lanes[lane].card;
        self.lease_lost(card, lost);
        if let ToLane::Run { cases, .. } = msg {
            let back: Vec<usize> = cases.iter().filter_map(|id| self.work.index_of(id)).collect();
            self.lanes[lane].withdraw(&back);
            self.work.requeue(&back);
        }
        self.close_if_done(lane);
        self.refill();
    }

    /// Hands out work by the plan: lanes first on healthy cards that have none while work is
    /// queued, then units to the live lanes, round-robin. Nothing goes out after a signal, nor
    /// while a lane is starting (its start hands out again).
    pub(super) fn refill(&mut self) {
        if self.interrupted.is_some() || self.lanes.iter().any(|l| l.phase == Phase::Starting) {
            return;
        }
        // The next N-card cases reserve their cards before the hand-out (an abandon is seen by
        // the end-of-event checks).
        self.reserve_next();
        let isolation = self.settings.isolation;
        let facts = PlanFacts {
            idle_cards: (0..self.cards.len())
                .filter(|&c| {
                    !self.cards[c].quarantined
                        && self.cards[c].lane.is_none()
                        && !self.card_held(c)
                        && !self.reserved(c)
                })
                .collect(),
            queued: self.work.has_queued(),
            finishing: self.finishing.is_some(),
            lanes: self
                .lanes
                .iter()
                .enumerate()
                .filter(|(_, l)| l.alive())
                .map(|(id, l)| (id, l.state(self.cards[l.card].quarantined, isolation)))
                .collect(),
            isolation,
        };
        match policy::plan(facts) {
            Plan::Start(cards) => {
                for card in cards {
                    self.spawn(card, Start::Regular);
                }
            }
            Plan::Give(rounds) => {
                for give in rounds {
                    let at_most = match give.take {
                        Take::Unit => None,
                        Take::AtMost(n) => Some(n),
                    };
                    let l = &self.lanes[give.lane];
                    let (card, holds_nothing) = (l.card, l.outstanding.is_empty());
                    // Retries waiting for a better card stay queued; this lane takes what follows.
                    let held = self.retries_held_from(card);
                    // A reserved card backfills: only work that ends before the reservation starts.
                    // (`--isolation case` hands out single cases: it does not backfill.)
                    let unit = match self.backfill_room(card) {
                        Some(_) if at_most.is_some() => continue,
                        Some(room) => match self.work.pop_fitting(card, room, &held) {
                            Some(unit) => Some(unit),
                            None => continue,
                        },
                        // A planned run: the lane's card's own plan, stealing once it holds nothing.
                        None => self.work.pop_for(card, holds_nothing, at_most, &held),
                    };
                    match unit {
                        Some(unit) => self.assign(give.lane, unit),
                        None if self.work.is_planned() && self.work.has_queued() => continue,
                        // Only held retries are left: another lane may take them.
                        None if !held.is_empty() => continue,
                        None => break,
                    }
                }
            }
        }
    }

    fn assign(&mut self, lane: LaneId, unit: Unit) {
        self.batch_seq += 1;
        if !self.retry_waits.is_empty() {
            // A retry handed out waits no more.
            self.retry_waits.retain(|w| !unit.cases.contains(&w.case));
        }
        let cases: Vec<String> = unit.cases.iter().map(|&i| self.work.case(i).id.clone()).collect();
        let now = self.now;
        let l = &mut self.lanes[lane];
        if l.outstanding.is_empty() {
            // An idle lane's watchdog starts with its work.
            l.heard = now;
        }
        l.outstanding.extend(unit.cases.iter().copied());
        l.batches.push_back(unit.cases.len());
        l.units += 1;
        let msg = ToLane::Run {
            batch: self.batch_seq,
            cases,
        };
        self.act(Action::Send { lane, msg });
        self.first_assign.get_or_insert(now);
    }

    /// Closes lane `lane`'s channel if the hand-out rule says it is done by design (a fresh lane's
    /// pass, a `class` or `case` lane's unit, a multi-card lane's cases when it is not released);
    /// asks a multi-card lane done with its cases to release its further cards and go on as its
    /// own card's regular lane ([`policy::releases_now`]).
    pub(super) fn close_if_done(&mut self, lane: LaneId) {
        let l = &self.lanes[lane];
        let state = l.state(self.cards[l.card].quarantined, self.settings.isolation);
        let goes_on = self.finishing.is_none()
            && self.interrupted.is_none()
            && !self.work.all_done()
            && !self.reserved(l.card);
        if policy::releases_now(&state, goes_on) {
            self.lanes[lane].releasing = true;
            self.act(Action::Send {
                lane,
                msg: ToLane::Release,
            });
        } else if policy::closes_now(&state) {
            self.close_lane(lane);
        }
    }

    /// Lane `lane` released its further cards: it is its own card's regular lane now, and they
    /// are free for lanes of their own (the hand-out starts them).
    pub(super) fn on_released(&mut self, lane: LaneId) {
        let l = &mut self.lanes[lane];
        if !l.releasing {
            tracing::warn!(lane, "ignoring a release nobody asked for");
            return;
        }
        l.releasing = false;
        l.kind = LaneKind::Regular;
        let freed: Vec<usize> = l.cards.drain(1..).collect();
        let devices: Vec<_> = freed.iter().map(|&c| self.cards[c].device).collect();
        tracing::debug!(lane, ?devices, "the multi-card lane released its further cards");
        self.refill();
    }

    /// Closes a lane's channel for writing (it finishes, closes its workers and exits) and starts
    /// its close deadline. A preflight lane is left to end on its own (under `--init-timeout`),
    /// so its verdict on the card is always had.
    pub(super) fn close_lane(&mut self, lane: LaneId) {
        let now = self.now;
        let l = &mut self.lanes[lane];
        if l.alive() && l.closed_at.is_none() && l.kind != LaneKind::Preflight {
            l.closed_at = Some(now);
            self.act(Action::Close { lane, done: true });
        }
    }
}
