//! The dispatcher's state machine: all of a run's state in one value, [`DispatchState`], that owns
//! no process, pipe, clock or file. [`DispatchState::handle`] takes an [`Event`] and the time, and
//! returns the [`Action`]s that follow, in order (nextest's dispatcher shape).
//!
//! Time is the run's clock: time since the run started, on `CLOCK_MONOTONIC` (see
//! [`crate::clock`]); a lane's own stamps (its health events) are placed on it with the run's
//! clock start, a number the state is given. After every event the state checks its lanes'
//! deadlines and the run's end: the lanes closed once every verdict is in, the cases abandoned
//! once no healthy card is left, the multi-card phase, [`Action::Finish`].
//!
//! The handling is split by subject: messages (`messages`), attempts (`attempts`), exits
//! (`exits`), the hand-out and lane starts (`handout`), the N-card cases' reservation (`reserve`), the clock
//! (`timers`, `hung`), health and quarantine (`health`), signals (`interrupt`), output (`output`).
//! This file owns the state's fields, the routing of events, the end-of-event checks and the
//! queries the process layer makes (the next deadline, the figures, the lost leases).

use std::time::Duration;

use platform_common::lease::LeaseError;
use rustc_hash::FxHashMap;

use super::card::{Card, CardSeed, Strikes};
use super::event::{Action, Event};
use super::lane::{Lane, Phase};
use super::retry_wait::RetryWait;
use super::work::Work;
use crate::dispatch::policy::{self, Isolation, Limits};
use crate::report::model::{Event as Journal, Interruption};

/// The state machine's settings for one run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Extra attempts of a case after a device-class failure.
    pub retries: u32,
    /// Per-case timeout.
    pub case_timeout: Duration,
    /// Bound on one init (building a worker), `--init-timeout`.
    pub init_timeout: Duration,
    /// How long closing lanes may take at the end before they are killed.
    pub close_timeout: Duration,
    /// How much a lane process runs before a fresh one replaces it (`--isolation`).
    pub isolation: Isolation,
    /// The run's id (for the cards' health records).
    pub run_id: String,
    /// The name of the stack tool the process layer runs on a hung lane, if it found one.
    pub stack_tool: Option<&'static str>,
    /// The run's clock start (`CLOCK_MONOTONIC`, ns): the lanes' stamps are placed against it.
    pub clock_start_ns: u64,
}

/// A run's state (see the module docs).
#[derive(Debug)]
pub struct DispatchState {
    pub(super) settings: Settings,
    pub(super) work: Work,
    pub(super) cards: Vec<Card>,
    pub(super) lanes: Vec<Lane>,
    /// The multi-card lanes' own strikes (deaths and kills from outside, for the whole run).
    pub(super) multi: Strikes,
    /// The cards reserved for the next N-card cases (`reserve`).
    pub(super) reservation: Option<Vec<usize>>,
    /// The queued retries waiting for a good card (`placement`).
    pub(super) retry_waits: Vec<RetryWait>,
    /// Each runtime's last init (ms) this run, by its [`Work`] index.
    pub(super) inits_seen: FxHashMap<u32, u64>,
    pub(super) batch_seq: u64,
    /// When every verdict was in (the lanes are being closed).
    pub(super) finishing: Option<Duration>,
    pub(super) first_assign: Option<Duration>,
    pub(super) last_verdict: Option<Duration>,
    /// The signal that interrupted the run, once one did.
    pub(super) interrupted: Option<Interruption>,
    /// Leases whose lock file was deleted or replaced during the run (their cards got no more
    /// work; the run ends with exit 2 naming the lock dir).
    pub(super) leases_lost: Vec<LeaseError>,
    /// Whether the absence of a stack tool was told already.
    pub(super) told_no_stack_tool: bool,
    /// Whether [`Action::Finish`] was given.
    finished: bool,
    /// The time of the event being handled.
    pub(super) now: Duration,
    /// The actions of the event being handled.
    out: Vec<Action>,
}

impl DispatchState {
    /// The state of a run of `work` on `cards` (in the run's order: the indices actions name).
    pub fn new(settings: Settings, work: Work, cards: Vec<CardSeed>) -> Self {
        Self {
            settings,
            work,
            cards: cards.into_iter().map(Card::new).collect(),
            lanes: Vec::new(),
            multi: Strikes::default(),
            reservation: None,
            retry_waits: Vec::new(),
            inits_seen: FxHashMap::default(),
            batch_seq: 0,
            finishing: None,
            first_assign: None,
            last_verdict: None,
            interrupted: None,
            leases_lost: Vec::new(),
            told_no_stack_tool: false,
            finished: false,
            now: Duration::ZERO,
            out: Vec::new(),
        }
    }

    /// Handles `event` at `now` (the run's clock): the actions that follow, in order. Nothing
    /// follows once the run is finished.
    pub fn handle(&mut self, event: Event, now: Duration) -> Vec<Action> {
        if self.finished {
            return Vec::new();
        }
        self.now = self.now.max(now);
        match event {
            Event::Begin => self.on_begin(),
            Event::Spawned { lane, pid } => self.on_spawned(lane, pid),
            Event::NotSpawned { lane, why } => self.on_not_spawned(lane, why),
            Event::NotSent { lane, msg, lost } => self.on_not_sent(lane, &msg, lost),
            Event::Message(lane, msg) => self.on_msg(lane, msg),
            Event::Output(lane, stream, bytes) => self.on_output(lane, stream, &bytes),
            Event::LineTooLong(lane) => self.on_line_too_long(lane),
            Event::Stacks(lane, got) => self.on_stacks(lane, got),
            Event::Exited { lane, status, sink } => self.on_exit(lane, status, sink),
            Event::Interrupted(signal) => self.on_interrupt(signal),
            Event::Tick => {}
        }
        self.check_deadlines();
        self.end_retry_waits();
        self.settle();
        std::mem::take(&mut self.out)
    }

    /// When the state wants to be told the time again ([`Event::Tick`]) at the latest: the
    /// earliest deadline of a live lane, or the end of a queued retry's wait for a good card.
    pub fn next_deadline(&self) -> Option<Duration> {
        self.lanes
            .iter()
            .filter(|l| l.alive())
            .filter_map(|l| self.lane_deadline(l))
            .chain(self.retry_deadline())
            .min()
    }

    /// Whether the run is over ([`Action::Finish`] was given).
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The run's cases and verdicts.
    pub fn work(&self) -> &Work {
        &self.work
    }

    /// Cases with a verdict, and the window from the first assignment to the last verdict.
    pub fn figures(&self) -> (usize, Duration) {
        let window = match (self.first_assign, self.last_verdict) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => Duration::ZERO,
        };
        (self.work.cases().len(), window)
    }

    /// The leases lost during the run (taken out: the run's closing error names them).
    pub fn take_leases_lost(&mut self) -> Vec<LeaseError> {
        std::mem::take(&mut self.leases_lost)
    }

    /// Queues an action.
    pub(super) fn act(&mut self, action: Action) {
        self.out.push(action);
    }

    /// Queues a journal event.
    pub(super) fn record(&mut self, event: Journal) {
        self.out.push(Action::Record(event));
    }

    /// Now, as a journal event's `at_ms`.
    pub(super) fn now_ms(&self) -> u64 {
        u64::try_from(self.now.as_millis()).unwrap_or(u64::MAX)
    }

    /// A lane's stamp (its `CLOCK_MONOTONIC` reading) as ms since the run started.
    pub(super) fn event_ms(&self, mono_ns: u64) -> u64 {
        crate::clock::run_ms(self.settings.clock_start_ns, mono_ns)
    }

    /// The clock rules' limits.
    pub(super) fn limits(&self) -> Limits {
        Limits {
            case_timeout: self.settings.case_timeout,
            init_timeout: self.settings.init_timeout,
            close_timeout: self.settings.close_timeout,
        }
    }

    /// When lane `l` must have done something: its SIGKILL after a grace period, the end of its
    /// hung case's diagnosis, else the clock rules' deadline.
    pub(super) fn lane_deadline(&self, l: &Lane) -> Option<Duration> {
        match (&l.kill, &l.diag) {
            (Some(k), _) => k.deadline(),
            (None, Some(d)) => Some(d.deadline()),
            (None, None) => {
                let own = l.running.and_then(|(i, _)| self.work.case(i).timeout);
                policy::watchdog::deadline(&l.times(own), &self.limits())
            }
        }
    }

    /// Whether every lane is gone (a lane asked for and not started yet is not).
    fn all_lanes_gone(&self) -> bool {
        self.lanes.iter().all(|l| l.phase == Phase::Gone)
    }

    /// The checks after every event: the run's end (once every lane is gone after a signal, or
    /// after the last verdict), the lanes closed once every verdict is in, the open cases
    /// abandoned once every card is quarantined, the N-card cases' reservation.
    fn settle(&mut self) {
        loop {
            if let Some(signal) = self.interrupted {
                if self.all_lanes_gone() {
                    self.skip_unfinished(signal);
                    self.finish();
                }
                return;
            }
            if self.work.all_done() && self.finishing.is_none() {
                self.finishing = Some(self.now);
                for id in 0..self.lanes.len() {
                    self.close_lane(id);
                }
            }
            if !self.work.all_done() && self.cards.iter().all(|c| c.quarantined) {
                self.abandon_all();
                continue;
            }
            if self.finishing.is_some() && self.all_lanes_gone() {
                self.finish();
                return;
            }
            if self.schedule_multi() {
                // It abandoned N-card cases: the checks above see it at once.
                continue;
            }
            return;
        }
    }

    fn finish(&mut self) {
        self.finished = true;
        self.act(Action::Finish);
    }
}
