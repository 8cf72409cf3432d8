//! The dispatcher's event loop: it owns the state the user sees, one reader thread per lane feeds
//! it through a channel, and every decision of DESIGN section 5 steps 5 to 8 is taken here.
//!
//! - Hand-out: each regular lane keeps up to [`BATCHES_IN_FLIGHT`] units assigned, so it never
//!   waits for the dispatcher between classes; retries go to the front of the queue.
//! - Verdicts: a device-runtime failure, a crash or a timeout is retried up to `--retries` times;
//!   a result mismatch, a usage or infrastructure error never is.
//! - Time: a running case may take `--case-timeout`; a lane with work outstanding but no case
//!   running (building, switching or retiring a worker) may stay silent as long (the watchdog,
//!   measured from its last message or from the assignment that gave an idle lane work); a lane
//!   told to close may take the close timeout. Past a deadline the lane's process group gets
//!   SIGTERM, then SIGKILL after a grace period (a late close: SIGKILL at once).
//! - After every lane exit: the running case (if any) gets a `crashed` / `timed_out` attempt (a
//!   watchdog kill: the next outstanding case gets the `timed_out` attempt), the sink is read and
//!   deleted, its selectors re-run in a fresh lane on the same card (no sink), everything else
//!   unfinished goes back to the queue. A lane that exits 0 with work unfinished died as much as
//!   one that crashed. A fresh lane that cannot recover either quarantines its card; so does a
//!   second multi-card lane that cannot init the same card (a card's init failure is filed under
//!   that card, whichever lane saw it); no healthy card left ends the remaining cases `failed`
//!   (infrastructure).
//! - `fresh_process` is recorded on a card when a lane starts there after an unclean exit or to
//!   re-run a poison sink, never for an ordinary lane after a clean one.
//! - Health events carry the time they happened in the lane (their Unix time, made relative to
//!   the run's start), not the time they were read.
//!
//! It never runs a case and never writes a file itself (the [`Reporter`] does).

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use platform_common::health::HealthEvent;
use platform_common::{DeviceId, DeviceLease, FailureClass};

use super::kill::{KillReason, Termination};
use super::lane_proc::{LaneCommand, LaneEvent, LaneId, LaneProc};
use super::work::{Unit, Work};
use crate::protocol::{FromLane, ToLane, EXIT_NEEDS_FRESH_PROCESS};
use crate::report::model::{
    AttemptOutcome, ErrorReport, Event, HealthRecord, LaneStatus, RunnerEventKind, WorkerAction,
};
use crate::report::{ReportError, Reporter};
use crate::select::Selector;
use crate::sink::Sink;

/// Units a regular lane holds at once (one running, one waiting in its pipe).
pub const BATCHES_IN_FLIGHT: usize = 2;
/// Time between SIGTERM and SIGKILL of a lane that exceeded the case timeout (or the watchdog).
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// Lane deaths in a row (no case finished in between) after which a card is quarantined.
pub const MAX_LANE_DEATHS: u32 = 4;

/// The dispatcher's settings for one run.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    /// Extra attempts of a case after a device-class failure.
    pub retries: u32,
    /// Per-case timeout.
    pub case_timeout: Duration,
    /// How lanes are started.
    pub command: LaneCommand,
    /// Where sinks are created.
    pub sink_dir: std::path::PathBuf,
    /// How long closing lanes may take at the end before they are killed.
    pub close_timeout: Duration,
}

/// What the benchmark reads: the window from the first assignment to the last verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Cases with a verdict.
    pub cases: usize,
    /// From the first assignment to the last verdict.
    pub window: Duration,
}

struct Card {
    device: DeviceId,
    lease: DeviceLease,
    lane: Option<LaneId>,
    quarantined: bool,
    deaths: u32,
    /// Why the next lane started on this card is a fresh process (an unclean exit, a poison-sink
    /// re-run): recorded as `fresh_process` when that lane starts, then cleared.
    replacement: Option<String>,
    /// Multi-card lanes that could not init this card (the second one quarantines it).
    multi_init_failures: u32,
}

struct Lane {
    card: usize,
    proc_: LaneProc,
    fresh: bool,
    sink: Option<Sink>,
    outstanding: VecDeque<usize>,
    batches: VecDeque<usize>,
    running: Option<(usize, Instant)>,
    kill: Option<Termination>,
    /// When the lane last sent a message, or (idle until then) was given work: the watchdog's
    /// base.
    heard: Instant,
    /// When its stdin was closed: it should exit by `close_timeout`.
    closed_at: Option<Instant>,
    /// Cards (indices) whose worker failed to init in this lane.
    init_failed: Vec<usize>,
    alive: bool,
    /// A lane holding several cards for the multi-card phase.
    multi: bool,
}

/// What kind of lane to start.
enum Start {
    /// A regular lane with a sink, fed from the queue.
    Regular,
    /// A fresh lane without a sink for these cases (one bounded pass).
    Fresh(Vec<usize>),
    /// A lane holding these extra cards (indices) for these multi-card cases.
    Multi(Vec<usize>, Vec<usize>),
}
pub struct Dispatcher {
    settings: LoopSettings,
    work: Work,
    cards: Vec<Card>,
    lanes: Vec<Lane>,
    reporter: Reporter,
    tx: Sender<LaneEvent>,
    rx: Receiver<LaneEvent>,
    batch_seq: u64,
    finishing: Option<Instant>,
    first_assign: Option<Instant>,
    last_verdict: Option<Instant>,
    multi_deaths: u32,
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
    pub fn new(settings: LoopSettings, work: Work, leases: Vec<DeviceLease>, reporter: Reporter) -> Self {
        let (tx, rx) = mpsc::channel();
        let cards = leases
            .into_iter()
            .map(|lease| Card {
                device: lease.card(),
                lease,
                lane: None,
                quarantined: false,
                deaths: 0,
                replacement: None,
                multi_init_failures: 0,
            })
            .collect();
        Self {
            settings,
            work,
            cards,
            lanes: Vec::new(),
            reporter,
            tx,
            rx,
            batch_seq: 0,
            finishing: None,
            first_assign: None,
            last_verdict: None,
            multi_deaths: 0,
        }
    }

    /// Runs until every case has a verdict and every lane has exited; returns the reporter (to
    /// finish the report) and the benchmark's figures. The leases are released on return.
    pub fn run(mut self) -> (Reporter, DispatchStats) {
        self.refill_all();
        loop {
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
            let event = match self.rx.try_recv() {
                Ok(ev) => Some(ev),
                Err(TryRecvError::Empty) => {
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
                Some(LaneEvent::Exited(id, status)) => self.on_exit(id, status),
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
        };
        (self.reporter, stats)
    }

    fn record(&mut self, event: Event) {
        if let Err(e) = self.reporter.event(&event) {
            match e {
                ReportError::Io { .. } => tracing::warn!("cannot append to the journal: {e}"),
                other => tracing::error!("report rejected an event: {other}"),
            }
        }
    }

    fn now_ms(&self) -> u64 {
        self.reporter.elapsed_ms()
    }

    /// A lane's event time (ms since the Unix epoch) as ms since the run started.
    fn event_ms(&self, unix_ms: u64) -> u64 {
        self.reporter.run_ms_of_unix(unix_ms)
    }

    fn health(&mut self, card: usize, record: HealthRecord) {
        let device = self.cards[card].device;
        let at_ms = record.at_ms;
        self.record(Event::Health {
            at_ms,
            device,
            record,
        });
    }

    // ----- lanes -----

    /// Starts a lane on `card` (and, for the multi-card phase, its extra cards). A card whose
    /// previous lane ended uncleanly (or that re-runs a poison sink) records `fresh_process` with
    /// the reason its [`Card::replacement`] holds.
    fn spawn(&mut self, card: usize, start: Start) {
        let device = self.cards[card].device;
        let sink = match start {
            Start::Regular => match Sink::create(&self.settings.sink_dir, device) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!(
                        device,
                        "cannot create a poison sink ({e}); the lane runs without one"
                    );
                    None
                }
            },
            Start::Fresh(_) | Start::Multi(..) => None,
        };
        let id = self.lanes.len();
        let mut leases = vec![&self.cards[card].lease];
        if let Start::Multi(extra, _) = &start {
            leases.extend(extra.iter().map(|&c| &self.cards[c].lease));
        }
        let spawned = LaneProc::spawn(
            &self.settings.command,
            id,
            device,
            &leases,
            sink.as_ref().map(Sink::path),
            self.tx.clone(),
        );
        let proc_ = match spawned {
            Ok(p) => p,
            Err(e) => {
                if let Some(s) = sink {
                    s.take();
                }
                self.quarantine(card, &format!("cannot start a lane process: {e}"));
                match start {
                    Start::Fresh(cases) | Start::Multi(_, cases) => self.work.requeue(&cases),
                    Start::Regular => {}
                }
                return;
            }
        };
        let pid = proc_.pid;
        tracing::debug!(device, pid, "lane started");
        let at_ms = self.now_ms();
        self.record(Event::LaneStarted { at_ms, device, pid });
        let mut held = vec![card];
        if let Start::Multi(extra, _) = &start {
            held.extend(extra.iter().copied());
        }
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
            fresh: matches!(start, Start::Fresh(_)),
            sink,
            outstanding: VecDeque::new(),
            batches: VecDeque::new(),
            running: None,
            kill: None,
            heard: Instant::now(),
            closed_at: None,
            init_failed: Vec::new(),
            alive: true,
            multi: matches!(start, Start::Multi(..)),
        });
        self.cards[card].lane = Some(id);
        match start {
            Start::Fresh(cases) | Start::Multi(_, cases) => self.assign(id, Unit { cases }),
            Start::Regular => {}
        }
    }

    /// The multi-card phase: once every single-card case has its verdict, the regular lanes are
    /// closed (one process per card at a time) and one lane holding enough healthy cards runs the
    /// multi-card cases. Returns whether it abandoned them (no lane is left to report them).
    fn maybe_start_multi(&mut self) -> bool {
        if self.finishing.is_some() || !self.work.has_multi() || self.work.has_queued() {
            return false;
        }
        if self
            .lanes
            .iter()
            .any(|l| l.alive && (l.multi || !l.outstanding.is_empty()))
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
        let need = self.work.multi_cards() as usize;
        let cases = self.work.take_multi();
        if healthy.len() < need || self.multi_deaths >= MAX_LANE_DEATHS {
            let reason = if healthy.len() < need {
                let out: Vec<String> = self
                    .cards
                    .iter()
                    .filter(|c| c.quarantined)
                    .map(|c| c.device.to_string())
                    .collect();
                format!(
                    "needs {need} healthy cards, only {} left: card(s) {} quarantined",
                    healthy.len(),
                    out.join(", ")
                )
            } else {
                format!("{MAX_LANE_DEATHS} multi-card lane processes in a row died")
            };
            self.abandon(cases, &reason);
            return true;
        }
        self.spawn(healthy[0], Start::Multi(healthy[1..need].to_vec(), cases));
        false
    }

    /// Starts a regular lane on every healthy card that has none while work is queued.
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

    fn assign(&mut self, lane: LaneId, unit: Unit) {
        self.batch_seq += 1;
        let cases: Vec<String> = unit.cases.iter().map(|&i| self.work.case(i).id.clone()).collect();
        let l = &mut self.lanes[lane];
        if l.outstanding.is_empty() {
            // An idle lane's watchdog starts with its work.
            l.heard = Instant::now();
        }
        l.outstanding.extend(unit.cases.iter().copied());
        l.batches.push_back(unit.cases.len());
        l.proc_.send(&ToLane::Run {
            batch: self.batch_seq,
            cases,
        });
        self.first_assign.get_or_insert_with(Instant::now);
    }

    /// Whether `lane` takes another unit now.
    fn wants_work(&self, lane: LaneId) -> bool {
        let l = &self.lanes[lane];
        l.alive
            && !l.fresh
            && !l.multi
            && l.closed_at.is_none()
            && l.kill.is_none()
            && l.batches.len() < BATCHES_IN_FLIGHT
            && !self.cards[l.card].quarantined
    }

    /// Hands queued units to lanes round-robin, one unit per lane per round, so work spreads over
    /// the cards; then starts lanes on idle healthy cards if work is still queued.
    fn refill_all(&mut self) {
        self.ensure_lanes();
        loop {
            let mut gave = false;
            for id in 0..self.lanes.len() {
                if !self.work.has_queued() {
                    return;
                }
                if self.wants_work(id) {
                    if let Some(unit) = self.work.pop() {
                        self.assign(id, unit);
                        gave = true;
                    }
                }
            }
            if !gave {
                return;
            }
        }
    }

    // ----- events from lanes -----

    /// Closes a lane's stdin (it finishes, closes its workers and exits) and starts its close
    /// deadline.
    fn close_lane(&mut self, lane: LaneId) {
        let l = &mut self.lanes[lane];
        if l.alive && l.closed_at.is_none() {
            l.proc_.close();
            l.closed_at = Some(Instant::now());
        }
    }

    /// The card index of `device`, else the lane's own card.
    fn card_of(&self, lane: LaneId, device: DeviceId) -> usize {
        self.cards
            .iter()
            .position(|c| c.device == device)
            .unwrap_or(self.lanes[lane].card)
    }

    fn on_msg(&mut self, lane: LaneId, msg: FromLane) {
        self.lanes[lane].heard = Instant::now();
        match msg {
            FromLane::Ready { pid } => tracing::trace!(lane, pid, "lane ready"),
            FromLane::Started { case } => self.on_started(lane, &case),
            FromLane::Finished {
                case,
                outcome,
                duration_us,
                error,
            } => self.on_finished(lane, &case, outcome, duration_us / 1000, error),
            FromLane::Health { event } => self.on_health(lane, &event),
            FromLane::InitFailed {
                device,
                runtime,
                error,
            } => {
                let card = self.card_of(lane, device);
                if !self.lanes[lane].init_failed.contains(&card) {
                    self.lanes[lane].init_failed.push(card);
                }
                let pid = self.lanes[lane].proc_.pid;
                let detail = format!(
                    "init of runtime {runtime} on card {device} failed: {}",
                    error.message
                );
                let r = HealthRecord::runner(self.now_ms(), RunnerEventKind::InitFailed, detail)
                    .with_error(error.call, error.code)
                    .with_pid(pid);
                self.health(card, r);
            }
            FromLane::Worker {
                device,
                runtime,
                action,
            } => self.on_worker(lane, device, runtime, action),
            FromLane::Escalating { reason, cases } => {
                let device = self.cards[self.lanes[lane].card].device;
                tracing::warn!(device, cases, "lane escalates to a fresh process: {reason}");
            }
        }
    }

    fn on_worker(&mut self, lane: LaneId, device: DeviceId, runtime: String, action: WorkerAction) {
        let pid = self.lanes[lane].proc_.pid;
        let at_ms = self.now_ms();
        self.record(Event::Worker {
            at_ms,
            device,
            pid,
            runtime,
            action,
        });
    }

    fn case_index(&self, lane: LaneId, id: &str) -> Option<usize> {
        let i = self.work.index_of(id);
        if i.is_none() {
            tracing::warn!(
                lane,
                case = id,
                "lane reported a case that is not part of the run"
            );
        }
        i
    }

    fn on_started(&mut self, lane: LaneId, id: &str) {
        let Some(i) = self.case_index(lane, id) else {
            return;
        };
        self.lanes[lane].running = Some((i, Instant::now()));
        let device = self.cards[self.lanes[lane].card].device;
        let attempt = self.work.case(i).attempts + 1;
        let at_ms = self.now_ms();
        self.record(Event::CaseStarted {
            at_ms,
            id: id.to_owned(),
            device,
            attempt,
        });
    }

    fn on_finished(
        &mut self,
        lane: LaneId,
        id: &str,
        outcome: AttemptOutcome,
        duration_ms: u64,
        error: Option<ErrorReport>,
    ) {
        let Some(i) = self.case_index(lane, id) else {
            return;
        };
        let l = &mut self.lanes[lane];
        l.running = None;
        take_outstanding(l, i);
        let card = l.card;
        let pid = l.proc_.pid;
        self.cards[card].deaths = 0;
        self.attempt_ended(i, card, pid, outcome, duration_ms, error);
        let l = &self.lanes[lane];
        if (l.fresh || l.multi) && l.outstanding.is_empty() {
            // The fresh lane's one bounded pass (or the multi-card phase) is done.
            self.close_lane(lane);
        }
        self.refill_all();
    }

    /// Records an attempt and decides: verdict final, or retry.
    fn attempt_ended(
        &mut self,
        i: usize,
        card: usize,
        pid: u32,
        outcome: AttemptOutcome,
        duration_ms: u64,
        error: Option<ErrorReport>,
    ) {
        let device = self.cards[card].device;
        let c = self.work.case_mut(i);
        c.attempts += 1;
        let attempt = c.attempts;
        let id = c.id.clone();
        let retryable = retryable(outcome, error.as_ref());
        let at_ms = self.now_ms();
        self.record(Event::CaseFinished {
            at_ms,
            id: id.clone(),
            device,
            pid,
            attempt,
            outcome,
            duration_ms,
            error,
        });
        if retryable && attempt <= self.settings.retries {
            self.record(Event::RetryScheduled {
                at_ms,
                id,
                reason: format!(
                    "attempt {attempt} failed with a device-class error; retry {attempt} of {} on \
                     the next healthy card free for it (the force-reset card or another one)",
                    self.settings.retries
                ),
            });
            self.work.push_retry(i);
        } else {
            self.work.finish(i);
            self.last_verdict = Some(Instant::now());
        }
    }

    fn on_health(&mut self, lane: LaneId, ev: &HealthEvent) {
        let card = self.card_of(lane, ev.device);
        let l = &self.lanes[lane];
        let pid = l.proc_.pid;
        let case = l.running.map(|(i, _)| self.work.case(i).id.clone());
        let at_ms = self.event_ms(ev.unix_ms);
        let r = HealthRecord::device(at_ms, ev.clone())
            .with_case(case)
            .with_pid(pid);
        self.health(card, r);
    }

    fn on_exit(&mut self, lane: LaneId, status: LaneStatus) {
        let l = &mut self.lanes[lane];
        l.alive = false;
        let card = l.card;
        let pid = l.proc_.pid;
        let fresh = l.fresh;
        let multi = l.multi;
        let kill = l.kill.take().map(|k| k.reason);
        let init_failed = std::mem::take(&mut l.init_failed);
        let running = l.running.take();
        let heard = l.heard;
        let sink = l.sink.take();
        // Exit 0 with work unfinished is no clean end: the lane died as much as a crashed one.
        let unfinished = running.is_some() || !l.outstanding.is_empty();
        let clean = status == LaneStatus::Exited(0) && !unfinished;
        if self.cards[card].lane == Some(lane) {
            self.cards[card].lane = None;
        }
        let device = self.cards[card].device;
        let at_ms = self.now_ms();
        self.record(Event::LaneExited {
            at_ms,
            device,
            pid,
            status,
        });
        let timeout_secs = self.settings.case_timeout.as_secs_f64();
        if let Some((i, since)) = running {
            take_outstanding(&mut self.lanes[lane], i);
            let duration_ms = u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX);
            let (outcome, message) = match kill {
                Some(KillReason::CaseTimeout | KillReason::Watchdog) => (
                    AttemptOutcome::TimedOut,
                    format!("exceeded --case-timeout of {timeout_secs} s; lane pid {pid} was killed"),
                ),
                _ => (
                    AttemptOutcome::Crashed,
                    format!("lane pid {pid} died ({status}) while running the case"),
                ),
            };
            let error = ErrorReport::new(FailureClass::DeviceRuntime, message);
            self.attempt_ended(i, card, pid, outcome, duration_ms, Some(error));
        } else if kill == Some(KillReason::Watchdog) {
            // Stuck outside a case (building, switching or retiring a worker) with this case next:
            // it pays the timed-out attempt, as a case that hung would.
            if let Some(&i) = self.lanes[lane].outstanding.front() {
                take_outstanding(&mut self.lanes[lane], i);
                let duration_ms = u64::try_from(heard.elapsed().as_millis()).unwrap_or(u64::MAX);
                let message = format!(
                    "lane pid {pid} sent nothing for --case-timeout ({timeout_secs} s) outside a case \
                     (building, switching or retiring a worker) with this case next; it was killed"
                );
                let error = ErrorReport::new(FailureClass::DeviceRuntime, message);
                self.attempt_ended(i, card, pid, AttemptOutcome::TimedOut, duration_ms, Some(error));
            }
        }
        // The sink is read after every exit, timeouts and crashes included.
        let had_sink = sink.is_some();
        let contents = sink.map(Sink::take).unwrap_or_default();
        let outstanding: Vec<usize> = self.lanes[lane].outstanding.drain(..).collect();
        self.lanes[lane].batches.clear();
        let mut from_sink: Vec<usize> = Vec::new();
        if had_sink {
            if !contents.malformed_lines.is_empty() {
                tracing::warn!(
                    device,
                    lines = ?contents.malformed_lines,
                    "skipped malformed poison-sink lines"
                );
            }
            let selectors: Vec<String> = contents.records.iter().map(|r| r.selector.clone()).collect();
            self.record(Event::SinkRead {
                at_ms,
                device,
                selectors: selectors.clone(),
                malformed_lines: contents.malformed_lines,
            });
            for s in &selectors {
                match s.parse::<Selector>() {
                    Ok(sel) => {
                        for i in self.work.expand(&sel, &outstanding) {
                            if !from_sink.contains(&i) {
                                from_sink.push(i);
                            }
                        }
                    }
                    Err(e) => tracing::warn!(device, "ignoring a poison-sink selector: {e}"),
                }
            }
        }
        let others: Vec<usize> = outstanding
            .iter()
            .copied()
            .filter(|i| !from_sink.contains(i))
            .collect();
        if self.finishing.is_some() && clean {
            return;
        }
        if multi {
            self.work.requeue(&outstanding);
            if !clean {
                self.multi_deaths += 1;
            }
            // A card's init failure is that card's: the next multi-card lane is its fresh
            // process, and a second failure quarantines it (the fresh-process rule of a
            // single-card lane).
            for c in init_failed {
                let d = self.cards[c].device;
                if self.cards[c].multi_init_failures > 0 {
                    self.quarantine(
                        c,
                        &format!("a fresh multi-card lane could not init card {d} either ({status})"),
                    );
                } else {
                    self.cards[c].multi_init_failures += 1;
                    self.cards[c].replacement = Some(format!(
                        "fresh multi-card lane: the previous one (pid {pid}) could not init card {d} \
                         ({status})"
                    ));
                }
            }
        } else if fresh && (status == LaneStatus::Exited(EXIT_NEEDS_FRESH_PROCESS) || !init_failed.is_empty())
        {
            self.work.requeue(&outstanding);
            self.quarantine(
                card,
                &format!("a fresh lane process could not recover card {device} either ({status})"),
            );
        } else if !from_sink.is_empty() {
            self.work.requeue(&others);
            self.cards[card].replacement = Some(format!(
                "fresh process re-runs {} case(s) from the poison sink of lane pid {pid} ({status})",
                from_sink.len()
            ));
            self.spawn(card, Start::Fresh(from_sink));
        } else {
            self.work.requeue(&outstanding);
            if !clean {
                let unfinished = if status == LaneStatus::Exited(0) {
                    format!(" with {} case(s) unfinished", outstanding.len())
                } else {
                    String::new()
                };
                self.cards[card].replacement = Some(format!(
                    "replacement lane: lane pid {pid} ended ({status}){unfinished}"
                ));
                self.cards[card].deaths += 1;
                if self.cards[card].deaths >= MAX_LANE_DEATHS {
                    self.quarantine(
                        card,
                        &format!("{MAX_LANE_DEATHS} lane processes in a row died on card {device}"),
                    );
                }
            }
        }
        self.refill_all();
    }

    fn quarantine(&mut self, card: usize, reason: &str) {
        if self.cards[card].quarantined {
            return;
        }
        self.cards[card].quarantined = true;
        let device = self.cards[card].device;
        tracing::warn!(device, "card quarantined: {reason}");
        let at_ms = self.now_ms();
        self.health(
            card,
            HealthRecord::runner(at_ms, RunnerEventKind::Quarantined, reason),
        );
    }

    fn abandon_all(&mut self) {
        let devices: Vec<String> = self.cards.iter().map(|c| c.device.to_string()).collect();
        let reason = format!(
            "no healthy card left: every card of the run ({}) is quarantined",
            devices.join(", ")
        );
        self.work.clear_queue();
        let open = self.work.open_cases();
        self.abandon(open, &reason);
    }

    /// Ends `cases` without running them: each gets its verdict (failed, class infrastructure)
    /// with `reason`, so nothing is lost.
    fn abandon(&mut self, cases: impl IntoIterator<Item = usize>, reason: &str) {
        for i in cases {
            let id = self.work.case(i).id.clone();
            let at_ms = self.now_ms();
            self.record(Event::CaseAbandoned {
                at_ms,
                id,
                reason: reason.to_owned(),
            });
            self.work.finish(i);
        }
        self.last_verdict = Some(Instant::now());
    }

    // ----- time -----

    /// When `l` must have done something: its SIGKILL after a grace period, its running case's
    /// timeout, its watchdog (work outstanding, no case running), or its close deadline.
    fn lane_deadline(&self, l: &Lane) -> Option<Instant> {
        if let Some(k) = &l.kill {
            return k.deadline();
        }
        if let Some((_, since)) = l.running {
            return Some(since + self.settings.case_timeout);
        }
        if !l.outstanding.is_empty() {
            return Some(l.heard + self.settings.case_timeout);
        }
        l.closed_at.map(|c| c + self.settings.close_timeout)
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
            let pid = l.proc_.pid;
            let (reason, grace) = if l.running.is_some() {
                tracing::warn!(pid, "case timeout: terminating the lane");
                (KillReason::CaseTimeout, KILL_GRACE)
            } else if !l.outstanding.is_empty() {
                tracing::warn!(
                    pid,
                    "lane silent for --case-timeout outside a case with work outstanding: terminating it"
                );
                (KillReason::Watchdog, KILL_GRACE)
            } else {
                tracing::warn!(pid, "lane did not close in time: killing it");
                (KillReason::CloseLate, Duration::ZERO)
            };
            l.kill = Some(Termination::begin(pid, reason, now, grace));
        }
    }
}

/// Whether a failed attempt is retried: only a device-class failure (a device-runtime error; a
/// crash or a timeout of the lane is filed as one). A result mismatch, a usage or an
/// infrastructure error never is, nor is a pass or a skip.
pub(crate) fn retryable(outcome: AttemptOutcome, error: Option<&ErrorReport>) -> bool {
    outcome.is_failure() && error.is_some_and(|e| e.class == FailureClass::DeviceRuntime)
}

fn take_outstanding(l: &mut Lane, i: usize) {
    if let Some(pos) = l.outstanding.iter().position(|c| *c == i) {
        l.outstanding.remove(pos);
        if let Some(front) = l.batches.front_mut() {
            *front = front.saturating_sub(1);
        }
        while l.batches.front() == Some(&0) {
            l.batches.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(class: FailureClass) -> ErrorReport {
        ErrorReport::new(class, "x")
    }

    #[test]
    fn only_device_class_failures_are_retried() {
        use AttemptOutcome as A;
        for outcome in [A::Failed, A::TimedOut, A::Crashed] {
            assert!(
                retryable(outcome, Some(&err(FailureClass::DeviceRuntime))),
                "{outcome}"
            );
            for class in [
                FailureClass::Result,
                FailureClass::Usage,
                FailureClass::Infrastructure,
            ] {
                assert!(!retryable(outcome, Some(&err(class))), "{outcome} {class}");
            }
            assert!(!retryable(outcome, None), "{outcome} without an error");
        }
        for outcome in [A::Passed, A::Skipped] {
            assert!(
                !retryable(outcome, Some(&err(FailureClass::DeviceRuntime))),
                "{outcome}"
            );
        }
    }
}
