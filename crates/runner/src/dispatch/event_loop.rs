//! The dispatcher's event loop: it owns the state the user sees, the lane processes and the
//! clock; one reader thread per lane feeds it through a channel.
//!
//! This file owns the loop itself (wait for the next lane event or deadline, dispatch it), the
//! recording of events and the application of the clock rules. Every decision is a pure function
//! of [`super::policy`]; the loop gathers the facts, asks, and applies the answer:
//!
//! - lane management (start, hand-out, close, the multi-card phase): `lanes`;
//! - messages from lanes (attempts, health, init failures, worker steps): `on_lane`;
//! - lane exits (blame, sink, fresh lanes, quarantine, abandon): `on_exit`;
//! - cards that remember their health (preflights, quarantines recorded host-wide):
//!   `card_memory`;
//! - SIGINT / SIGTERM (no more work, every lane ended, every open case skipped): `on_signal`.
//! - lane output (captured per attempt, logged outside a case) and protocol violations:
//!   `on_output`.
//!
//! Health events carry the time they happened in the lane (the lane's `CLOCK_MONOTONIC` reading,
//! made relative to the run's monotonic start: one clock with the attempts', see
//! [`crate::clock`]), not the time they were read. It never runs a case and never writes a file
//! itself (the [`Reporter`] does).

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use platform_common::DeviceLease;

use super::diagnose::Diagnoser;
use super::kill::{KillReason, Termination};
use super::lane_proc::LaneEvent;
use super::live::LiveLanes;
use super::policy::{self, Limits};
use super::spawn::Spawner;
use super::state::{Card, DispatchStats, Lane, LoopSettings};
use super::work::Work;
use crate::report::model::{Event, HealthRecord, Interruption, RunnerEventKind};
use crate::report::{ReportError, Reporter};
use platform_common::lease::LeaseError;

/// The parent of a run's lanes.
pub struct Dispatcher {
    /// The live lanes' process groups, shared with the signal thread.
    pub(super) live: LiveLanes,
    pub(super) settings: LoopSettings,
    pub(super) work: Work,
    pub(super) cards: Vec<Card>,
    pub(super) lanes: Vec<Lane>,
    pub(super) spawner: Spawner,
    pub(super) reporter: Reporter,
    pub(super) tx: Sender<LaneEvent>,
    rx: Receiver<LaneEvent>,
    pub(super) batch_seq: u64,
    pub(super) finishing: Option<Instant>,
    pub(super) first_assign: Option<Instant>,
    pub(super) last_verdict: Option<Instant>,
    /// The largest peak RSS (KiB) of a lane read at its close.
    pub(super) lane_peak_rss_kib: Option<u64>,
    pub(super) multi_deaths: u32,
    /// Multi-card lanes killed from outside in a row.
    pub(super) multi_infra_kills: u32,
    /// The signal that interrupted the run, once one did.
    pub(super) interrupted: Option<Interruption>,
    /// Leases whose lock file was deleted or replaced during the run (their cards got no more
    /// work; the run ends with exit 2 naming the lock dir).
    pub(super) leases_lost: Vec<LeaseError>,
    /// The run's stack tool for hung cases' diagnoses.
    pub(super) diagnoser: Diagnoser,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("cards", &self.cards.iter().map(|c| c.device).collect::<Vec<_>>())
            .field("lanes", &self.lanes.len())
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A dispatcher over `leases` (one card each) for `work`, recording into `reporter`.
    pub fn new(settings: LoopSettings, work: Work, leases: Vec<DeviceLease>, mut reporter: Reporter) -> Self {
        let (tx, rx) = mpsc::channel();
        reporter.batch_journal();
        let diagnoser = Diagnoser::new(settings.stack_tool.clone());
        Self {
            diagnoser,
            spawner: Spawner::new(settings.command.clone()),
            live: LiveLanes::default(),
            settings,
            work,
            cards: leases.into_iter().map(Card::new).collect(),
            lanes: Vec::new(),
            reporter,
            tx,
            rx,
            batch_seq: 0,
            finishing: None,
            first_assign: None,
            last_verdict: None,
            lane_peak_rss_kib: None,
            multi_deaths: 0,
            multi_infra_kills: 0,
            interrupted: None,
            leases_lost: Vec::new(),
        }
    }

    /// A sender into the loop's channel (for `dispatch::signals`).
    pub fn sender(&self) -> Sender<LaneEvent> {
        self.tx.clone()
    }

    /// The live lanes' process groups (the signal thread ends them on a second signal).
    pub fn live_lanes(&self) -> LiveLanes {
        self.live.clone()
    }

    /// Runs until every case has a verdict and every lane has exited; returns the reporter (to
    /// finish the report), the benchmark's figures and the leases lost on the way. The leases are
    /// released on return.
    pub fn run(mut self) -> (Reporter, DispatchStats, Vec<LeaseError>) {
        self.start_preflights();
        self.refill_all();
        loop {
            if let Some(signal) = self.interrupted {
                if self.lanes.iter().all(|l| !l.alive) {
                    self.skip_unfinished(signal);
                    break;
                }
            } else {
                if self.work.all_done() && self.finishing.is_none() {
                    self.finishing = Some(Instant::now());
                    for id in 0..self.lanes.len() {
                        self.close_lane(id);
                    }
                }
                if !self.work.all_done() && self.cards.iter().all(|c| c.quarantined) {
                    self.abandon_all();
                    continue;
                }
                if self.finishing.is_some() && self.lanes.iter().all(|l| !l.alive) {
                    break;
                }
                if self.maybe_start_multi() {
                    // It abandoned the multi-card cases: the loop's end checks see it at once.
                    continue;
                }
            }
            let event = match self.rx.try_recv() {
                Ok(ev) => Some(ev),
                Err(TryRecvError::Empty) => {
                    // Nothing more to handle now: the burst's journal lines go to disk before the
                    // loop waits.
                    self.flush_journal();
                    let wait = self.next_deadline().map_or(Duration::from_secs(3600), |d| {
                        d.saturating_duration_since(Instant::now())
                    });
                    match self.rx.recv_timeout(wait) {
                        Ok(ev) => Some(ev),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                Err(TryRecvError::Disconnected) => break,
            };
            match event {
                Some(LaneEvent::Msg(id, msg)) => self.on_msg(id, msg),
                Some(LaneEvent::Output(id, stream, bytes)) => self.on_output(id, stream, &bytes),
                Some(LaneEvent::LineTooLong(id)) => self.on_line_too_long(id),
                Some(LaneEvent::Stacks(id, got)) => self.on_stacks(id, got),
                Some(LaneEvent::Exited(id, status)) => self.on_exit(id, status),
                Some(LaneEvent::Interrupted(signal)) => self.on_interrupt(signal),
                None => {}
            }
            self.check_deadlines();
        }
        let stats = DispatchStats {
            cases: self.work.cases().len(),
            window: match (self.first_assign, self.last_verdict) {
                (Some(a), Some(b)) => b.saturating_duration_since(a),
                _ => Duration::ZERO,
            },
            lane_peak_rss_kib: self.lane_peak_rss_kib,
            reports: Default::default(),
        };
        (self.reporter, stats, self.leases_lost)
    }

    /// Writes the journal lines batched so far.
    pub(super) fn flush_journal(&mut self) {
        if let Err(e) = self.reporter.flush_journal() {
            tracing::warn!("cannot append to the journal: {e}");
        }
    }

    pub(super) fn record(&mut self, event: Event) {
        if let Err(e) = self.reporter.event(&event) {
            match e {
                ReportError::Io { .. } => tracing::warn!("cannot append to the journal: {e}"),
                other => tracing::error!("report rejected an event: {other}"),
            }
        }
    }

    pub(super) fn now_ms(&self) -> u64 {
        self.reporter.elapsed_ms()
    }

    /// A lane's event time (its `CLOCK_MONOTONIC` reading) as ms since the run started.
    pub(super) fn event_ms(&self, mono_ns: u64) -> u64 {
        self.reporter.run_ms_of_mono(mono_ns)
    }

    /// Records a health event of card `card` (and keeps it for the card's health record).
    pub(super) fn health(&mut self, card: usize, record: HealthRecord) {
        let device = self.cards[card].device;
        let at_ms = record.at_ms;
        let recent = &mut self.cards[card].recent;
        if recent.len() == platform_common::lease::MAX_HEALTH_EVENTS {
            recent.pop_front();
        }
        recent.push_back(record.clone());
        self.record(Event::Health {
            at_ms,
            device,
            record,
        });
    }

    // ----- time -----

    fn limits(&self) -> Limits {
        Limits {
            case_timeout: self.settings.case_timeout,
            init_timeout: self.settings.init_timeout,
            close_timeout: self.settings.close_timeout,
        }
    }

    /// `l`'s times with its running case's own timeout.
    fn lane_times(&self, l: &Lane) -> policy::LaneTimes {
        let mut t = l.times();
        t.case_timeout = l.running.and_then(|(i, _)| self.work.case(i).timeout);
        t
    }

    /// When `l` must have done something: its SIGKILL after a grace period, else the clock rules'
    /// deadline.
    fn lane_deadline(&self, l: &Lane) -> Option<Instant> {
        match (&l.kill, &l.diag) {
            (Some(k), _) => k.deadline(),
            (None, Some(d)) => Some(d.deadline()),
            (None, None) => policy::watchdog::deadline(&self.lane_times(l), &self.limits()),
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.lanes
            .iter()
            .filter(|l| l.alive)
            .filter_map(|l| self.lane_deadline(l))
            .min()
    }

    fn check_deadlines(&mut self) {
        let now = Instant::now();
        for id in 0..self.lanes.len() {
            if !self.lanes[id].alive {
                continue;
            }
            let due = self.lane_deadline(&self.lanes[id]).is_some_and(|d| now >= d);
            let l = &mut self.lanes[id];
            if let Some(k) = &mut l.kill {
                if k.poll(now) {
                    tracing::warn!(
                        pid = l.proc_.pid,
                        "lane still alive after the grace period: SIGKILL"
                    );
                }
                continue;
            }
            if !due {
                continue;
            }
            if l.diag.is_some() {
                self.end_diagnosed(id, now);
                continue;
            }
            let pid = l.proc_.pid;
            let (reason, grace) = policy::watchdog::on_deadline(&l.times());
            if reason == KillReason::CaseTimeout {
                // Before the kill: where is it stuck?
                self.begin_diagnosis(id, reason, grace, now);
                continue;
            }
            tracing::warn!(pid, ?reason, "lane past its deadline: ending it");
            l.kill = Some(Termination::begin(pid, reason, now, grace));
            if reason == KillReason::InitTimeout {
                self.init_timed_out(id);
            }
        }
    }

    /// Lane `id` is being ended for an init past `--init-timeout`: a health event
    /// `init_timed_out` of each card it was initialising (never an attempt of any case).
    fn init_timed_out(&mut self, id: usize) {
        let initing = std::mem::take(&mut self.lanes[id].initing);
        let pid = self.lanes[id].proc_.pid;
        let secs = self.settings.init_timeout.as_secs_f64();
        for (card, runtime, _) in initing {
            self.lanes[id].init_timed_out.push(card);
            let device = self.cards[card].device;
            let detail = format!(
                "init of runtime {runtime} on card {device} did not finish within --init-timeout of \
                 {secs} s; lane pid {pid} was ended"
            );
            let at_ms = self.now_ms();
            self.health(
                card,
                HealthRecord::runner(at_ms, RunnerEventKind::InitTimedOut, detail).with_pid(pid),
            );
        }
    }
}
