//! What the state machine knows about each lane: its cards and kind, whether its process is
//! starting, alive or gone, the work it holds, its running case, its inits, how it is being
//! ended, and its output since the last case boundary.
//!
//! This file owns that data and the facts the policy reads of it ([`LaneState`], [`LaneTimes`]).
//! It never decides anything and never holds a process (the process layer keeps the lane's
//! process, channel and sink under the same [`LaneId`]).

use std::collections::VecDeque;
use std::time::Duration;

use super::capture::Capture;
use super::diagnosis::Diagnosis;
use super::ending::Ending;
use crate::dispatch::policy::{Isolation, LaneKind, LaneState, LaneTimes};

/// Where a lane's process is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Asked for ([`super::Action::Spawn`]), not started yet.
    Starting,
    /// Its process runs.
    Alive,
    /// It exited (or never started).
    Gone,
}

/// One lane.
#[derive(Debug)]
pub struct Lane {
    /// Its own card (an index of the run's cards).
    pub card: usize,
    /// Every card it holds: its own first, more for a multi-card lane.
    pub cards: Vec<usize>,
    /// What it is.
    pub kind: LaneKind,
    /// Where its process is.
    pub phase: Phase,
    /// Its pid, once started (0 before).
    pub pid: u32,
    /// The cases it is given as it starts (a fresh lane's pass, the multi-card cases).
    pub first: Vec<usize>,
    /// Cases it holds, in the order it runs them.
    pub outstanding: VecDeque<usize>,
    /// The sizes of the units it holds.
    pub batches: VecDeque<usize>,
    /// Units it was given since it started.
    pub units: usize,
    /// Its running case and since when.
    pub running: Option<(usize, Duration)>,
    /// How it is being ended.
    pub kill: Option<Ending>,
    /// The diagnosis of its hung case, before it is ended for the case's timeout.
    pub diag: Option<Diagnosis>,
    /// When it last sent a message, or (idle until then) was given work: the watchdog's base.
    pub heard: Duration,
    /// A multi-card lane asked to release its further cards, not yet answered.
    pub releasing: bool,
    /// When its channel was closed: it should exit by the close timeout.
    pub closed_at: Option<Duration>,
    /// Cards (indices) whose worker failed to init in it.
    pub init_failed: Vec<usize>,
    /// Inits in progress: the card (index), the runtime, and since when.
    pub initing: Vec<(usize, String, Duration)>,
    /// Inits done whose `built` worker event has not come yet: the card (index) and how long the
    /// init took.
    pub inits_done: Vec<(usize, Duration)>,
    /// Cards (indices) whose init it was ended for (`--init-timeout`).
    pub init_timed_out: Vec<usize>,
    /// The runtime (a [`super::Work`] index) of the worker it holds on its own card, as its
    /// worker events and device errors tell (`None`: none, or one about to be retired).
    pub worker: Option<u32>,
    /// Its output since the last case boundary.
    pub capture: Capture,
}

impl Lane {
    /// A lane asked for at `now` on `cards` (its own first), given `first` as it starts.
    pub fn starting(cards: Vec<usize>, kind: LaneKind, first: Vec<usize>, now: Duration) -> Self {
        Self {
            card: cards[0],
            // A preflight lane is an init from its start: bounded by --init-timeout throughout.
            initing: match kind {
                LaneKind::Preflight => vec![(cards[0], "preflight".to_owned(), now)],
                _ => Vec::new(),
            },
            cards,
            kind,
            phase: Phase::Starting,
            pid: 0,
            first,
            outstanding: VecDeque::new(),
            batches: VecDeque::new(),
            units: 0,
            running: None,
            kill: None,
            diag: None,
            heard: now,
            releasing: false,
            closed_at: None,
            init_failed: Vec::new(),
            inits_done: Vec::new(),
            init_timed_out: Vec::new(),
            worker: None,
            capture: Capture::default(),
        }
    }

    /// Whether its process runs.
    pub fn alive(&self) -> bool {
        self.phase == Phase::Alive
    }

    /// The facts the hand-out rule reads.
    pub fn state(&self, card_quarantined: bool, isolation: Isolation) -> LaneState {
        LaneState {
            alive: self.alive(),
            // A preflight lane is fed nothing, as a fresh lane is: it only checks its card.
            fresh: matches!(self.kind, LaneKind::Fresh | LaneKind::Preflight),
            multi: self.kind == LaneKind::Multi,
            releasing: self.releasing,
            closing: self.closed_at.is_some(),
            killing: self.kill.is_some() || self.diag.is_some(),
            batches: self.batches.len(),
            units_taken: self.units,
            outstanding: self.outstanding.len(),
            card_quarantined,
            isolation,
        }
    }

    /// The times the clock rules read, with `case_timeout` the running case's own timeout.
    pub fn times(&self, case_timeout: Option<Duration>) -> LaneTimes {
        LaneTimes {
            running_since: self.running.map(|(_, since)| since),
            case_timeout,
            init_since: self.initing.iter().map(|(_, _, since)| *since).min(),
            outstanding: !self.outstanding.is_empty(),
            heard: self.heard,
            closed_at: self.closed_at,
        }
    }

    /// Removes case `i` from what the lane holds (it finished, or its attempt was blamed).
    pub fn take_outstanding(&mut self, i: usize) {
        if let Some(pos) = self.outstanding.iter().position(|c| *c == i) {
            self.outstanding.remove(pos);
            if let Some(front) = self.batches.front_mut() {
                *front = front.saturating_sub(1);
            }
            while self.batches.front() == Some(&0) {
                self.batches.pop_front();
            }
        }
    }

    /// Takes back a unit it was never sent (its `cases`): they leave what it holds, and so does
    /// one unit of their number.
    pub fn withdraw(&mut self, cases: &[usize]) {
        self.outstanding.retain(|c| !cases.contains(c));
        if let Some(pos) = self.batches.iter().rposition(|&n| n == cases.len()) {
            self.batches.remove(pos);
        }
    }

    /// Cases it had not finished: its running one and those it holds.
    pub fn unfinished(&self) -> usize {
        let running = self.running.map(|(i, _)| i);
        usize::from(running.is_some()) + self.outstanding.len()
            - running.map_or(0, |i| usize::from(self.outstanding.contains(&i)))
    }
}
