//! What the event loop knows about each card and each lane process, and the run's settings.
//!
//! This file owns the dispatcher's per-card and per-lane state (plain data, read by the policy
//! functions through their facts). It never decides anything and never talks to a process.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use platform_common::lease::CardHealth;
use platform_common::{DeviceId, DeviceLease};

use super::capture::Capture;
use super::diagnose::Diagnosis;
use super::kill::Termination;
use super::lane_proc::{LaneCommand, LaneProc};
use super::policy::{Isolation, LaneKind, LaneState, LaneTimes};
use super::stacks::StackTool;
use crate::report::model::HealthRecord;
use crate::report::WriteTimes;
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
    /// How much a lane process runs before a fresh one replaces it (`--isolation`).
    pub isolation: Isolation,
    /// The run's id (for the cards' health records).
    pub run_id: String,
    /// The stack tool a hung case's diagnosis runs (none found: the breadcrumb alone).
    pub stack_tool: Option<StackTool>,
}

/// What the benchmarks read (`--stats-out`): the window from the first assignment to the last
/// verdict, the largest lane's peak RSS and the time the report files took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Cases with a verdict.
    pub cases: usize,
    /// From the first assignment to the last verdict.
    pub window: Duration,
    /// The largest peak RSS (KiB) of the lanes the dispatcher closed, read as each was closed
    /// (all its cases done); `None` when no lane was read.
    pub lane_peak_rss_kib: Option<u64>,
    /// How long writing each report file took.
    pub reports: WriteTimes,
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
    /// Cases whose failed attempt on this card was queued for a retry since its lane started (a
    /// fresh lane's pass takes the ones still queued: [`super::policy::fresh_pass`]).
    pub(super) retries: Vec<usize>,
    /// Lanes on this card killed in a row by signals the dispatcher did not send (reset when a
    /// case finishes on the card): no deaths, but bounded ([`super::policy::MAX_INFRA_KILLS`]).
    pub(super) infra_kills: u32,
    /// The card's health record, while the preflight it asks for has not passed or failed.
    pub(super) preflight: Option<CardHealth>,
    /// The card's health events of this run (the last ones), for its health record.
    pub(super) recent: VecDeque<HealthRecord>,
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
            retries: Vec::new(),
            infra_kills: 0,
            preflight: None,
            recent: VecDeque::new(),
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
    /// Units it was given since it started.
    pub(super) units: usize,
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
    /// Inits done whose `built` worker event has not come yet: the card (index) and how long the
    /// init took.
    pub(super) inits_done: Vec<(usize, Duration)>,
    /// Cards (indices) whose init the dispatcher ended the lane for (`--init-timeout`).
    pub(super) init_timed_out: Vec<usize>,
    /// Its output since the last case boundary.
    pub(super) capture: Capture,
    pub(super) alive: bool,
}

impl Lane {
    /// The facts the hand-out rule reads.
    pub(super) fn state(&self, card_quarantined: bool, isolation: Isolation) -> LaneState {
        LaneState {
            alive: self.alive,
            // A preflight lane is fed nothing, as a fresh lane is: it only checks its card.
            fresh: matches!(self.kind, LaneKind::Fresh | LaneKind::Preflight),
            multi: self.kind == LaneKind::Multi,
            closing: self.closed_at.is_some(),
            killing: self.kill.is_some() || self.diag.is_some(),
            batches: self.batches.len(),
            units_taken: self.units,
            outstanding: self.outstanding.len(),
            card_quarantined,
            isolation,
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
    /// A preflight lane: it builds a worker, probes the card and exits (no work, no sink).
    Preflight,
}

impl Start {
    pub(super) fn kind(&self) -> LaneKind {
        match self {
            Start::Regular => LaneKind::Regular,
            Start::Fresh(_) => LaneKind::Fresh,
            Start::Multi(..) => LaneKind::Multi,
            Start::Preflight => LaneKind::Preflight,
        }
    }
}
