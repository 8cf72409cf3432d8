//! The dispatcher's event loop: it owns the state the user sees, one reader thread per lane feeds
//! it through a channel, and every decision of DESIGN section 5 steps 5 to 8 is taken here.
//!
//! - Hand-out: each regular lane keeps up to [`BATCHES_IN_FLIGHT`] units assigned, so it never
//!   waits for the dispatcher between classes; retries go to the front of the queue.
//! - Verdicts: a device-runtime failure, a crash or a timeout is retried up to `--retries` times;
//!   a result mismatch, a usage or infrastructure error never is.
//! - Per-case timeout: SIGTERM to the lane's process group, then SIGKILL after a grace period.
//! - After every lane exit: the running case (if any) gets a `crashed` / `timed_out` attempt, the
//!   sink is read and deleted, its selectors re-run in a fresh lane on the same card (no sink),
//!   everything else unfinished goes back to the queue. A fresh lane that cannot recover either
//!   quarantines its card; no healthy card left ends the remaining cases `failed`
//!   (infrastructure).
//!
//! It never runs a case and never writes a file itself (the [`Reporter`] does).

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use platform_common::health::{HealthEvent, HealthEventKind};
use platform_common::{DeviceId, DeviceLease, FailureClass};
use rustix::process::Signal;

use super::lane_proc::{LaneCommand, LaneEvent, LaneId, LaneProc};
use super::work::{Unit, Work};
use crate::protocol::{FromLane, ToLane, EXIT_NEEDS_FRESH_PROCESS};
use crate::report::model::{AttemptOutcome, ErrorReport, Event, HealthKind, HealthRecord, LaneStatus};
use crate::report::{ReportError, Reporter};
use crate::select::Selector;
use crate::sink::Sink;

/// Units a regular lane holds at once (one running, one waiting in its pipe).
pub const BATCHES_IN_FLIGHT: usize = 2;
/// Time between SIGTERM and SIGKILL of a lane that exceeded the case timeout.
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
}

struct Kill {
    sigkill_at: Instant,
    sent_kill: bool,
}

struct Lane {
    card: usize,
    proc_: LaneProc,
    fresh: bool,
    sink: Option<Sink>,
    outstanding: VecDeque<usize>,
    batches: VecDeque<usize>,
    running: Option<(usize, Instant)>,
    kill: Option<Kill>,
    init_failed: bool,
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
                for l in &mut self.lanes {
                    l.proc_.close();
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

    fn spawn(&mut self, card: usize, start: Start, why: Option<String>) {
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
        if let Some(why) = why {
            self.health(
                card,
                HealthRecord::new(HealthKind::FreshProcess, at_ms)
                    .with_pid(pid)
                    .with_detail(why),
            );
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
            init_failed: false,
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
        for l in self.lanes.iter_mut().filter(|l| l.alive) {
            l.proc_.close();
            waiting = true;
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
                format!(
                    "needs {need} healthy cards, only {} left after quarantine",
                    healthy.len()
                )
            } else {
                format!("{MAX_LANE_DEATHS} multi-card lane processes in a row died")
            };
            for i in cases {
                let id = self.work.case(i).id.clone();
                let at_ms = self.now_ms();
                self.record(Event::CaseAbandoned {
                    at_ms,
                    id,
                    reason: reason.clone(),
                });
                self.work.finish(i);
            }
            self.last_verdict = Some(Instant::now());
            return true;
        }
        self.spawn(healthy[0], Start::Multi(healthy[1..need].to_vec(), cases), None);
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
            let why = (c.deaths > 0 || self.lanes.iter().any(|l| l.card == card))
                .then(|| "replacement lane: the previous lane process on this card is gone".to_owned());
            self.spawn(card, Start::Regular, why);
        }
    }

    fn assign(&mut self, lane: LaneId, unit: Unit) {
        self.batch_seq += 1;
        let cases: Vec<String> = unit.cases.iter().map(|&i| self.work.case(i).id.clone()).collect();
        let l = &mut self.lanes[lane];
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
            && !l.proc_.is_closed()
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

    fn on_msg(&mut self, lane: LaneId, msg: FromLane) {
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
            FromLane::InitFailed { runtime, error } => {
                self.lanes[lane].init_failed = true;
                let card = self.lanes[lane].card;
                let pid = self.lanes[lane].proc_.pid;
                let mut r = HealthRecord::new(HealthKind::InitFailed, self.now_ms())
                    .with_pid(pid)
                    .with_detail(format!("init of runtime {runtime} failed: {}", error.message));
                if let Some(code) = error.code {
                    r = r.with_code(code);
                }
                if let Some(call) = error.call {
                    r = r.with_call(call);
                }
                self.health(card, r);
            }
            FromLane::Escalating { reason, cases } => {
                let device = self.cards[self.lanes[lane].card].device;
                tracing::warn!(device, cases, "lane escalates to a fresh process: {reason}");
            }
        }
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
        let l = &mut self.lanes[lane];
        if (l.fresh || l.multi) && l.outstanding.is_empty() {
            // The fresh lane's one bounded pass (or the multi-card phase) is done.
            l.proc_.close();
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
        let retryable = outcome.is_failure()
            && error
                .as_ref()
                .is_some_and(|e| e.class == FailureClass::DeviceRuntime);
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
                    "attempt {attempt} failed with a device-class error; retry {attempt} of {} on a \
                     freshly reset card",
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
        let l = &self.lanes[lane];
        let card = self
            .cards
            .iter()
            .position(|c| c.device == ev.device)
            .unwrap_or(l.card);
        let pid = l.proc_.pid;
        let case = l.running.map(|(i, _)| self.work.case(i).id.clone());
        let at_ms = self.now_ms();
        let mut r = match ev.kind {
            HealthEventKind::Poisoned => {
                HealthRecord::poisoned(at_ms, ev.code.map_or(0, |c| c.raw), case.as_deref())
            }
            HealthEventKind::MarkedUnusable { .. } => HealthRecord::new(HealthKind::MarkedUnusable, at_ms),
            HealthEventKind::ForceReset {
                attempt,
                rc,
                duration_ms,
            } => HealthRecord::force_reset(at_ms, attempt, rc, duration_ms),
            HealthEventKind::Probe { attempt, ok } => {
                let mut r = HealthRecord::probe(at_ms, ok);
                r.attempt = Some(attempt);
                r
            }
            HealthEventKind::Recovered { attempts } => {
                let mut r = HealthRecord::new(HealthKind::Recovered, at_ms);
                r.attempt = Some(attempts);
                r
            }
            HealthEventKind::ResetFailed { attempts } => {
                let mut r = HealthRecord::new(HealthKind::ResetFailed, at_ms);
                r.attempt = Some(attempts);
                r
            }
            HealthEventKind::FreshProcess => HealthRecord::new(HealthKind::FreshProcess, at_ms),
            HealthEventKind::Quarantined => HealthRecord::new(HealthKind::Quarantined, at_ms),
        };
        if r.code.is_none() {
            if let Some(code) = ev.code {
                r.code = Some(code.raw);
            }
        }
        if let Some(call) = ev.call {
            r = r.with_call(call.name());
        }
        r = r.with_pid(pid).with_detail(ev.detail.clone());
        self.health(card, r);
    }

    fn on_exit(&mut self, lane: LaneId, status: LaneStatus) {
        let l = &mut self.lanes[lane];
        l.alive = false;
        let card = l.card;
        let pid = l.proc_.pid;
        let fresh = l.fresh;
        let multi = l.multi;
        let timed_out = l.kill.is_some();
        let init_failed = l.init_failed;
        let running = l.running.take();
        let sink = l.sink.take();
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
        let clean = status == LaneStatus::Exited(0);
        if let Some((i, since)) = running {
            take_outstanding(&mut self.lanes[lane], i);
            let duration_ms = u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX);
            let (outcome, message) = if timed_out {
                (
                    AttemptOutcome::TimedOut,
                    format!(
                        "exceeded --case-timeout of {} s; lane pid {pid} was killed",
                        self.settings.case_timeout.as_secs_f64()
                    ),
                )
            } else {
                (
                    AttemptOutcome::Crashed,
                    format!("lane pid {pid} died ({status}) while running the case"),
                )
            };
            let error = ErrorReport::new(FailureClass::DeviceRuntime, message);
            self.attempt_ended(i, card, pid, outcome, duration_ms, Some(error));
        }
        // The sink is read after every exit, timeouts and crashes included.
        let had_sink = sink.is_some();
        let records = sink.map(Sink::take).unwrap_or_default();
        let outstanding: Vec<usize> = self.lanes[lane].outstanding.drain(..).collect();
        self.lanes[lane].batches.clear();
        let mut from_sink: Vec<usize> = Vec::new();
        if had_sink {
            let selectors: Vec<String> = records.iter().map(|r| r.selector.clone()).collect();
            self.record(Event::SinkRead {
                at_ms,
                device,
                selectors: selectors.clone(),
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
        } else if fresh && (status == LaneStatus::Exited(EXIT_NEEDS_FRESH_PROCESS) || init_failed) {
            self.work.requeue(&outstanding);
            self.quarantine(
                card,
                &format!("a fresh lane process could not recover card {device} either ({status})"),
            );
        } else if !from_sink.is_empty() {
            self.work.requeue(&others);
            let why = format!(
                "fresh process re-runs {} case(s) from the poison sink ({status})",
                from_sink.len()
            );
            self.spawn(card, Start::Fresh(from_sink), Some(why));
        } else {
            self.work.requeue(&outstanding);
            if !clean {
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
            HealthRecord::new(HealthKind::Quarantined, at_ms).with_detail(reason),
        );
    }

    fn abandon_all(&mut self) {
        let devices: Vec<String> = self.cards.iter().map(|c| c.device.to_string()).collect();
        let reason = format!(
            "no healthy card left: every card of the run ({}) is quarantined",
            devices.join(", ")
        );
        self.work.clear_queue();
        for i in self.work.open_cases() {
            let id = self.work.case(i).id.clone();
            let at_ms = self.now_ms();
            self.record(Event::CaseAbandoned {
                at_ms,
                id,
                reason: reason.clone(),
            });
            self.work.finish(i);
        }
        self.last_verdict = Some(Instant::now());
    }

    // ----- time -----

    fn next_deadline(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        for l in self.lanes.iter().filter(|l| l.alive) {
            match &l.kill {
                Some(k) if !k.sent_kill => consider(k.sigkill_at),
                Some(_) => {}
                None => {
                    if let Some((_, since)) = l.running {
                        consider(since + self.settings.case_timeout);
                    }
                }
            }
        }
        if let Some(f) = self.finishing {
            consider(f + self.settings.close_timeout);
        }
        next
    }

    fn check_deadlines(&mut self) {
        let now = Instant::now();
        let timeout = self.settings.case_timeout;
        let closing_late = self
            .finishing
            .is_some_and(|f| now >= f + self.settings.close_timeout);
        for l in self.lanes.iter_mut().filter(|l| l.alive) {
            match &mut l.kill {
                None => {
                    let late = l.running.is_some_and(|(_, since)| now >= since + timeout);
                    if late {
                        tracing::warn!(pid = l.proc_.pid, "case timeout: terminating the lane");
                        l.proc_.signal(Signal::Term);
                        l.kill = Some(Kill {
                            sigkill_at: now + KILL_GRACE,
                            sent_kill: false,
                        });
                    } else if closing_late {
                        tracing::warn!(pid = l.proc_.pid, "lane did not close in time: killing it");
                        l.proc_.signal(Signal::Kill);
                        l.kill = Some(Kill {
                            sigkill_at: now,
                            sent_kill: true,
                        });
                    }
                }
                Some(k) if !k.sent_kill && now >= k.sigkill_at => {
                    l.proc_.signal(Signal::Kill);
                    k.sent_kill = true;
                }
                Some(_) => {}
            }
        }
    }
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
