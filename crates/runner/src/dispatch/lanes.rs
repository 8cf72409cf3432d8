//! The event loop's lane management: starting lanes (regular, fresh, multi-card), handing out
//! work, closing lanes, and the multi-card phase.
//!
//! This file owns the process side of a lane's life up to its exit (spawning with its leases and
//! sink, assignments, closing its channel). It asks [`super::policy`] which lane takes work and which
//! cards the multi-card phase uses; it never judges an attempt or an exit (`on_lane`, `on_exit`).

use std::collections::VecDeque;
use std::time::Instant;

use super::capture::Capture;
use super::event_loop::Dispatcher;
use super::lane_proc::LaneSpec;
use super::policy::{self, Isolation, MultiFacts, MultiPhase, Take};
use super::state::{Lane, Start};
use super::work::Unit;
use crate::protocol::ToLane;
use crate::report::model::{Event, HealthRecord, RunnerEventKind};
use crate::sink::Sink;

impl Dispatcher {
    /// Starts a lane on `card` (and, for the multi-card phase, its extra cards). A card whose
    /// previous lane ended uncleanly (or that re-runs a poison sink) records `fresh_process` with
    /// the reason its `replacement` holds.
    pub(super) fn spawn(&mut self, card: usize, start: Start) {
        let device = self.cards[card].device;
        let mut cards = vec![card];
        if let Start::Multi(extra, _) = &start {
            cards.extend(extra.iter().copied());
        }
        if !cards.into_iter().all(|c| self.lease_holds(c)) {
            if let Start::Fresh(cases) | Start::Multi(_, cases) = start {
                self.work.requeue(&cases);
            }
            return;
        }
        let sink = match start {
            Start::Regular => match self.settings.sink_dir.as_deref().map(|d| Sink::create(d, device)) {
                None => None,
                Some(Ok(s)) => Some(s),
                Some(Err(e)) => {
                    tracing::warn!(
                        device,
                        "cannot create a poison sink ({e}); the lane runs without one"
                    );
                    None
                }
            },
            Start::Fresh(_) | Start::Multi(..) | Start::Preflight => None,
        };
        let id = self.lanes.len();
        let mut held = vec![card];
        if let Start::Multi(extra, _) = &start {
            held.extend(extra.iter().copied());
        }
        let leases: Vec<_> = held.iter().map(|&c| &self.cards[c].lease).collect();
        let spec = LaneSpec {
            id,
            device,
            leases: &leases,
            sink: sink.as_ref().map(Sink::path),
            preflight: matches!(start, Start::Preflight),
        };
        let spawned = self.spawner.spawn(&spec, &self.tx);
        let proc_ = match spawned {
            Ok(p) => p,
            Err(failed) => {
                if let Some(s) = sink {
                    s.take();
                }
                let reason = policy::quarantine::spawn_failed(&failed.error, failed.tries);
                self.quarantine_host(card, &reason);
                match start {
                    Start::Fresh(cases) | Start::Multi(_, cases) => self.work.requeue(&cases),
                    Start::Regular | Start::Preflight => {}
                }
                return;
            }
        };
        let pid = proc_.pid;
        self.live.add(pid);
        tracing::debug!(device, pid, "lane started");
        let at_ms = self.now_ms();
        self.record(Event::LaneStarted { at_ms, device, pid });
        for c in held {
            if let Some(why) = self.cards[c].replacement.take() {
                self.health(
                    c,
                    HealthRecord::runner(at_ms, RunnerEventKind::FreshProcess, why).with_pid(pid),
                );
            }
        }
        self.lanes.push(Lane {
            card,
            proc_,
            kind: start.kind(),
            sink,
            outstanding: VecDeque::new(),
            batches: VecDeque::new(),
            units: 0,
            running: None,
            kill: None,
            diag: None,
            heard: Instant::now(),
            closed_at: None,
            init_failed: Vec::new(),
            // A preflight lane is an init from its start: bounded by --init-timeout throughout.
            initing: match start {
                Start::Preflight => vec![(card, "preflight".to_owned(), Instant::now())],
                _ => Vec::new(),
            },
            inits_done: Vec::new(),
            init_timed_out: Vec::new(),
            capture: Capture::default(),
            alive: true,
        });
        self.cards[card].lane = Some(id);
        match start {
            Start::Fresh(cases) | Start::Multi(_, cases) => self.assign(id, Unit { cases }),
            Start::Regular | Start::Preflight => {}
        }
    }

    /// The multi-card phase: once every single-card case has its verdict, the regular lanes are
    /// closed (one process per card at a time) and one lane holding enough healthy cards runs the
    /// multi-card cases. Returns whether it abandoned them (no lane is left to report them).
    pub(super) fn maybe_start_multi(&mut self) -> bool {
        if self.finishing.is_some() || !self.work.has_multi() || self.work.has_queued() {
            return false;
        }
        let multi = policy::LaneKind::Multi;
        if self
            .lanes
            .iter()
            .any(|l| l.alive && (l.kind == multi || !l.outstanding.is_empty()))
        {
            return false;
        }
        let mut waiting = false;
        for id in 0..self.lanes.len() {
            if self.lanes[id].alive {
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
            deaths: self.multi_deaths,
            infra_kills: self.multi_infra_kills,
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

    /// Starts a regular lane on every healthy card that has none while work is queued. Lanes get
    /// their work after all of them are spawned: a lane that ran while another was being spawned
    /// could reach a point where a second signal kills the live lanes and exits, while the
    /// half-spawned child (not yet live) still holds the run's descriptors, its card leases among
    /// them.
    fn ensure_lanes(&mut self) {
        if self.finishing.is_some() {
            return;
        }
        for card in 0..self.cards.len() {
            if !self.work.has_queued() {
                break;
            }
            let c = &self.cards[card];
            if c.quarantined || c.lane.is_some() {
                continue;
            }
            self.spawn(card, Start::Regular);
        }
    }

    fn assign(&mut self, lane: usize, unit: Unit) {
        self.batch_seq += 1;
        let cases: Vec<String> = unit.cases.iter().map(|&i| self.work.case(i).id.clone()).collect();
        let l = &mut self.lanes[lane];
        if l.outstanding.is_empty() {
            // An idle lane's watchdog starts with its work.
            l.heard = Instant::now();
        }
        l.outstanding.extend(unit.cases.iter().copied());
        l.batches.push_back(unit.cases.len());
        l.units += 1;
        l.proc_.send(&ToLane::Run {
            batch: self.batch_seq,
            cases,
        });
        self.first_assign.get_or_insert_with(Instant::now);
    }

    /// Starts lanes on idle healthy cards while work is queued, then hands queued units to lanes
    /// round-robin, one unit per lane per round, so work spreads over the cards (how much each
    /// takes: [`policy::handout`]).
    pub(super) fn refill_all(&mut self) {
        if self.interrupted.is_some() {
            return;
        }
        self.ensure_lanes();
        loop {
            let mut gave = false;
            for id in 0..self.lanes.len() {
                if !self.work.has_queued() {
                    return;
                }
                gave |= self.give_one(id);
            }
            if !gave {
                return;
            }
        }
    }

    /// Gives lane `id` the queue's next unit (or its front, in `case`) when the hand-out rule
    /// says it takes one; returns whether it did.
    fn give_one(&mut self, id: usize) -> bool {
        let l = &self.lanes[id];
        let card = l.card;
        let isolation = self.settings.isolation;
        if !policy::wants_work(&l.state(self.cards[card].quarantined, isolation)) || !self.lease_holds(card) {
            return false;
        }
        let unit = match policy::take(isolation) {
            Take::Unit => self.work.pop(),
            Take::AtMost(n) => self.work.pop_at_most(n),
        };
        match unit {
            Some(unit) => {
                self.assign(id, unit);
                true
            }
            None => false,
        }
    }

    /// Whether `card`'s lease still excludes others (its lock file is the one it locked), checked
    /// before every hand-out to the card: one `stat` and one `fstat`. A lost lease takes the card
    /// out of the run (quarantined, its work goes to the other cards) and is kept for the run's
    /// closing error (exit 2, naming the lock dir).
    fn lease_holds(&mut self, card: usize) -> bool {
        if self.cards[card].quarantined {
            return false;
        }
        match self.cards[card].lease.verify() {
            Ok(()) => true,
            Err(e) => {
                let reason = format!("its lease no longer excludes others: {e}");
                self.quarantine_host(card, &reason);
                self.leases_lost.push(e);
                false
            }
        }
    }

    /// Closes lane `lane`'s channel if the hand-out rule says it is done by design (a fresh lane's
    /// pass, the multi-card lane's cases, a `class` or `case` lane's unit).
    pub(super) fn close_if_done(&mut self, lane: usize) {
        let l = &self.lanes[lane];
        let state = l.state(self.cards[l.card].quarantined, self.settings.isolation);
        if policy::closes_now(&state) {
            self.close_lane(lane);
        }
    }

    /// Closes a lane's channel for writing (it finishes, closes its workers and exits) and starts
    /// its close deadline. A preflight lane is left to end on its own (under `--init-timeout`),
    /// so its verdict on the card is always had.
    pub(super) fn close_lane(&mut self, lane: usize) {
        let l = &mut self.lanes[lane];
        if l.alive && l.closed_at.is_none() && l.kind != policy::LaneKind::Preflight {
            // Its work is done: its peak so far is its peak (closing its pool allocates nothing).
            let rss = super::peak_rss::peak_rss_kib(&l.proc_.pid.to_string());
            l.proc_.close();
            l.closed_at = Some(Instant::now());
            self.lane_peak_rss_kib = self.lane_peak_rss_kib.max(rss);
        }
    }
}
