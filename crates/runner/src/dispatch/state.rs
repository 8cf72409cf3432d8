//! What the event loop knows about each card and each lane process, and the run's settings.
//!
//! This file owns the dispatcher's per-card and per-lane state (plain data, read by the policy
//! functions through their facts). It never decides anything and never talks to a process.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use platform_common::{DeviceId, DeviceLease};

use super::capture::Capture;
use super::diagnose::Diagnosis;
use super::kill::Termination;
use super::lane_proc::{LaneCommand, LaneProc};
use super::policy::{LaneKind, LaneState, LaneTimes};
use super::stacks::StackTool;
use crate::sink::Sink;

/// The dispatcher's settings for one run.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    /// Extra attempts of a case after a device-class failure.
    pub retries: u32,
    /// Per-case timeout.
    pub case_timeout: Duration,
    /// Bound on one init (building a worker), `--init-timeout`.
    pub init_timeout: Duration,
    /// How lanes are started.
    pub command: LaneCommand,
    /// Where sinks are created (the run's private [`crate::sink::SinkDir`]); none when it could
    /// not be made: lanes then run without a sink.
    pub sink_dir: Option<PathBuf>,
    /// How long closing lanes may take at the end before they are killed.
    pub close_timeout: Duration,
    /// The stack tool a hung case's diagnosis runs (none found: the breadcrumb alone).
    pub stack_tool: Option<StackTool>,
}

/// What the benchmark reads: the window from the first assignment to the last verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Cases with a verdict.
    pub cases: usize,
    /// From the first assignment to the last verdict.
    pub window: Duration,
}

/// One card of the run.
#[derive(Debug)]
pub(super) struct Card {
    pub(super) device: DeviceId,
    pub(super) lease: DeviceLease,
    pub(super) lane: Option<usize>,
    pub(super) quarantined: bool,
    /// Lane deaths in a row (reset when a case finishes on the card).
    pub(super) deaths: u32,
    /// Why the next lane started on this card is a fresh process (an unclean exit, a poison-sink
    /// re-run): recorded as `fresh_process` when that lane starts, then cleared.
    pub(super) replacement: Option<String>,
    /// Multi-card lanes that could not init this card (the second one quarantines it).
    pub(super) multi_init_failures: u32,
    /// Lanes ended in a row for an init past `--init-timeout` on this card (reset when an init
    /// on it completes; the second quarantines it).
    pub(super) init_timeouts: u32,
}

impl Card {
    pub(super) fn new(lease: DeviceLease) -> Self {
        Self {
            device: lease.card(),
            lease,
            lane: None,
            quarantined: false,
            deaths: 0,
            replacement: None,
            multi_init_failures: 0,
            init_timeouts: 0,
        }
    }
}

/// One lane process.
#[derive(Debug)]
pub(super) struct Lane {
    pub(super) card: usize,
    pub(super) proc_: LaneProc,
    pub(super) kind: LaneKind,
    pub(super) sink: Option<Sink>,
    pub(super) outstanding: VecDeque<usize>,
    pub(super) batches: VecDeque<usize>,
    pub(super) running: Option<(usize, Instant)>,
    pub(super) kill: Option<Termination>,
    /// The diagnosis of its hung case, before it is ended for the case's timeout.
    pub(super) diag: Option<Diagnosis>,
    /// When the lane last sent a message, or (idle until then) was given work: the watchdog's
    /// base.
    pub(super) heard: Instant,
    /// When its stdin was closed: it should exit by `close_timeout`.
    pub(super) closed_at: Option<Instant>,
    /// Cards (indices) whose worker failed to init in this lane.
    pub(super) init_failed: Vec<usize>,
    /// Inits in progress: the card (index), the runtime, and since when.
    pub(super) initing: Vec<(usize, String, Instant)>,
    /// Cards (indices) whose init the dispatcher ended the lane for (`--init-timeout`).
    pub(super) init_timed_out: Vec<usize>,
    /// Its output since the last case boundary.
    pub(super) capture: Capture,
    pub(super) alive: bool,
}

impl Lane {
    /// The facts the hand-out rule reads.
    pub(super) fn state(&self, card_quarantined: bool) -> LaneState {
        LaneState {
            alive: self.alive,
            fresh: self.kind == LaneKind::Fresh,
            multi: self.kind == LaneKind::Multi,
            closing: self.closed_at.is_some(),
            killing: self.kill.is_some() || self.diag.is_some(),
            batches: self.batches.len(),
            card_quarantined,
        }
    }

    /// The times the clock rules read; `case_timeout` is the running case's own timeout (the
    /// event loop knows the cases), `None` here.
    pub(super) fn times(&self) -> LaneTimes {
        LaneTimes {
            running_since: self.running.map(|(_, since)| since),
            case_timeout: None,
            init_since: self.initing.iter().map(|(_, _, since)| *since).min(),
            outstanding: !self.outstanding.is_empty(),
            heard: self.heard,
            closed_at: self.closed_at,
        }
    }

    /// Removes case `i` from what the lane holds (it finished, or its attempt was blamed).
    pub(super) fn take_outstanding(&mut self, i: usize) {
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
}

/// What kind of lane to start.
#[derive(Debug)]
pub(super) enum Start {
    /// A regular lane with a sink, fed from the queue.
    Regular,
    /// A fresh lane without a sink for these cases (one bounded pass).
    Fresh(Vec<usize>),
    /// A lane holding these extra cards (indices) for these multi-card cases.
    Multi(Vec<usize>, Vec<usize>),
}

impl Start {
    pub(super) fn kind(&self) -> LaneKind {
        match self {
            Start::Regular => LaneKind::Regular,
            Start::Fresh(_) => LaneKind::Fresh,
            Start::Multi(..) => LaneKind::Multi,
        }
    }
}
