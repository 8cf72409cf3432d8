//! One lane process's life: hold the card's inherited lease, run assigned cases with the pool,
//! heal it, and escalate to a fresh process when the card cannot be recovered in-process
//! (DESIGN section 5, steps 3 and 4).
//!
//! This file owns the lane's state, its main loop and its messages to the dispatcher, and sends
//! each case to the code of its kind: `run_case` (a pooled case on the pooled worker, built on
//! first use, retired after a device fault so the next case rebuilds it; a standalone case on a
//! worker of its own after the pooled one is closed) and `multi` (a multi-card case on a worker
//! per card, each card's on its own thread: the lane's own card on this thread, the others on
//! their [`super::card_thread::CardThread`]s, since a driver keeps one current device per thread;
//! a pooled class's set kept for the next multi-card case of its runtime and width, closed before
//! any other case). Once its block is done a multi-card lane is told to release its further cards
//! and goes on as its own card's regular lane, its worker there kept (`multi`).
//! When a reset is not confirmed, or a (re)build fails with a device error, every remaining
//! assigned case goes to the poison sink and the lane exits with [`EXIT_NEEDS_FRESH_PROCESS`]. It
//! never retries a case (the dispatcher does) and never skips one for a legitimate reason (the
//! dispatcher never assigns those).

use std::collections::{HashSet, VecDeque};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

use platform_common::runner_base::InitError;
use platform_common::{Code, DeviceId, DeviceLease, FailureClass};

use super::card_thread::{CardThread, Closed};
use super::case_index::IndexedSuite;
use super::escalate::{self, Remaining};
use super::heal::{self, Escalation, HealthCheck, Step};
use super::hooks::{Hooks, Point};
use super::input::{Answers, Input, Pending, EXIT_ORPHANED};
use super::kept::KeptMulti;
use super::output::Marks;
use super::stamp;
use crate::case::{Body, Kind, Runtime, Suite};
use crate::crumb::{Breadcrumb, StampedDriver, NO_CASE};
use crate::exec::{self, CaseRun, FixtureNote, HostFixtures};
use crate::pool::Pool;
use crate::protocol::{FromLane, LaneOut, EXIT_NEEDS_FRESH_PROCESS};
use crate::report::model::{ErrorReport, Platform, WorkerAction};
use crate::sink::SinkWriter;
use crate::worker::WorkerEnv;

/// A running lane.
pub struct Lane {
    pub(super) suite: Arc<IndexedSuite>,
    pub(super) env: WorkerEnv,
    pub(super) pool: Pool,
    pub(super) lease: DeviceLease,
    /// Leases of further cards, for multi-card cases (a multi-card lane's, until it releases
    /// them).
    pub(super) extra: Vec<Arc<DeviceLease>>,
    /// The threads driving those cards (one per card, started by the first case that needs it):
    /// a thread drives one card, and this one drives the lane's own.
    pub(super) cards: Vec<CardThread>,
    /// The last multi-card case's workers, kept for the next one of its runtime and width.
    pub(super) kept_multi: Option<KeptMulti>,
    pub(super) platform: Platform,
    sink: Option<SinkWriter>,
    out: LaneOut,
    marks: Marks,
    health: stamp::Stamped,
    hooks: Hooks,
    input: Receiver<Input>,
    pending: Pending,
    started_classes: HashSet<String>,
    /// The class fixtures' host data built in this lane (once per class).
    pub(super) fixtures: HostFixtures,
    /// `--health-check`: when a worker's card is checked after a case.
    pub(super) health_check: HealthCheck,
    /// `--keep-sdma-workers`: a pooled worker created with SDMA stays pooled after a pass.
    pub(super) keep_sdma_workers: bool,
    /// What the lane's card thread (this one) is doing, for the dispatcher's question.
    crumb: Arc<Breadcrumb>,
}

impl std::fmt::Debug for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane")
            .field("device", &self.env.device)
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

impl Lane {
    /// A lane on `env.device` with its lease, its sink (none for a fresh lane), its suite and its
    /// channel to the dispatcher.
    pub fn new(
        mut env: WorkerEnv,
        lease: DeviceLease,
        sink: Option<SinkWriter>,
        suite: Suite,
        chan: UnixStream,
    ) -> Self {
        let (events, health) = stamp::subscriber();
        env.events = Some(events);
        // Every driver call of the lane's own card is stamped on its breadcrumb.
        let crumb = Arc::new(Breadcrumb::default());
        env.driver = Arc::new(StampedDriver::new(Arc::clone(&env.driver), Arc::clone(&crumb)));
        env.breadcrumb = Some(Arc::clone(&crumb));
        let suite = Arc::new(IndexedSuite::new(suite));
        let out = LaneOut::new(chan);
        let answers = Answers {
            crumb: Arc::clone(&crumb),
            suite: Arc::clone(&suite),
            out: out.shared(),
        };
        let pending = Pending::default();
        let input = super::input::spawn_reader(pending.clone(), &out, answers);
        Self {
            suite,
            env,
            pool: Pool::new(),
            lease,
            extra: Vec::new(),
            cards: Vec::new(),
            kept_multi: None,
            platform: Platform::Sim,
            sink,
            out,
            crumb,
            marks: Marks::from_env(),
            health,
            hooks: Hooks::none(),
            input,
            pending,
            started_classes: HashSet::new(),
            fixtures: HostFixtures::default(),
            health_check: HealthCheck::default(),
            keep_sdma_workers: false,
        }
    }

    /// The same lane keeping (`keep`) or retiring after every case (the default) its pooled
    /// workers created with SDMA (`--keep-sdma-workers`).
    pub fn with_keep_sdma_workers(mut self, keep: bool) -> Self {
        self.keep_sdma_workers = keep;
        self
    }

    /// The same lane checking its workers' cards after cases as `mode` says.
    pub fn with_health_check(mut self, mode: HealthCheck) -> Self {
        self.health_check = mode;
        self
    }

    /// The same lane holding the leases of further cards (for multi-card cases).
    pub fn with_extra_cards(mut self, platform: Platform, extra: Vec<DeviceLease>) -> Self {
        self.platform = platform;
        self.extra = extra.into_iter().map(Arc::new).collect();
        self
    }

    /// The same lane with test-only hooks (only with the hidden `--test-hooks` flag).
    pub fn with_hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// Runs assignments until stdin closes; returns the process's exit code.
    pub fn run(mut self) -> i32 {
        self.send(&FromLane::Ready {
            pid: std::process::id(),
        });
        loop {
            let cases = match self.input.recv() {
                Ok(Input::Run(cases)) => cases,
                Ok(Input::Release) => {
                    self.release();
                    continue;
                }
                Ok(Input::Closed) | Err(_) => break,
            };
            let mut queue: VecDeque<String> = cases.into();
            let mut last = String::new();
            while let Some(id) = queue.pop_front() {
                self.hooks.reach(Point::BeforeCase, &id);
                match self.run_one(&id) {
                    Step::Next => last = id,
                    Step::Escalate(Escalation {
                        reason,
                        code,
                        include_current,
                    }) => {
                        let mut rest = Vec::new();
                        if include_current {
                            rest.push(id);
                        }
                        rest.extend(queue.drain(..));
                        while let Ok(msg) = self.input.try_recv() {
                            if let Input::Run(more) = msg {
                                rest.extend(more);
                            }
                        }
                        return self.escalate(&reason, code, &rest);
                    }
                }
            }
            self.hooks.reach(Point::AfterResult, &last);
        }
        if let Some(Step::Escalate(e)) = self.close_kept_multi(heal::CloseAt::AfterCase) {
            tracing::warn!(
                device = self.env.device,
                "closing the multi-card workers at the end: {}",
                e.reason
            );
        }
        let runtime = self.pool.runtime().cloned();
        let closed = self.pool.close(&self.lease);
        self.pooled_closed(runtime.as_ref(), closed.is_some());
        if let Some(Err(e)) = closed {
            tracing::warn!(
                device = self.env.device,
                "closing the pooled worker at the end: {e}"
            );
        }
        for thread in self.cards.drain(..) {
            thread.shutdown();
        }
        self.flush_health();
        0
    }

    pub(super) fn send(&mut self, msg: &FromLane) {
        if let Err(e) = self.out.send(msg) {
            tracing::warn!("cannot write to the dispatcher ({e}): it is gone; exiting");
            std::process::exit(EXIT_ORPHANED);
        }
    }

    pub(super) fn flush_health(&mut self) {
        while let Ok((mono_ns, mut event)) = self.health.try_recv() {
            event.unix_ms = self.hooks.wall_clock(event.unix_ms);
            self.send(&FromLane::Health { event, mono_ns });
        }
    }

    /// Sends `started`, after the output mark that opens the case's output.
    fn send_started(&mut self, id: &str) {
        let mark = self.marks.mark();
        self.send(&FromLane::Started {
            case: id.to_owned(),
            mark,
        });
    }

    pub(super) fn started(&mut self, class: &str, id: &str) {
        let index = self.suite.position(id).unwrap_or(NO_CASE);
        self.crumb.start_case(index);
        if !self.started_classes.contains(class) {
            self.started_classes.insert(class.to_owned());
        }
        self.send_started(id);
        self.hooks.reach(Point::DuringCase, id);
    }

    pub(super) fn finish(&mut self, id: &str, run: CaseRun, since: Instant) {
        self.crumb.end_case();
        self.flush_health();
        self.pending.done(1);
        let duration_us = u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX);
        // The mark that closes the case's output: everything it printed is before it.
        let mark = self.marks.mark();
        self.send(&FromLane::Finished {
            case: id.to_owned(),
            outcome: run.outcome,
            duration_us,
            error: run.error,
            mark,
        });
    }

    /// Tells the dispatcher that building a worker of `runtime` on `device` starts (it times the
    /// init).
    pub(super) fn init_started(&mut self, device: DeviceId, runtime: &Runtime) {
        self.send(&FromLane::InitStarted {
            device,
            runtime: runtime.name.clone(),
        });
    }

    /// Reports a worker's lifecycle step on `device` to the dispatcher (for the journal).
    pub(super) fn worker_event(&mut self, device: DeviceId, runtime: &Runtime, action: WorkerAction) {
        self.send(&FromLane::Worker {
            device,
            runtime: runtime.name.clone(),
            action,
        });
    }

    /// Reports that the pooled worker of `runtime` was closed, if one was.
    pub(super) fn pooled_closed(&mut self, runtime: Option<&Runtime>, closed: bool) {
        if let (Some(rt), true) = (runtime, closed) {
            self.worker_event(self.env.device, rt, WorkerAction::Closed);
        }
    }

    /// Reports every card whose worker failed to build (each a health event of that card, not
    /// an attempt of any case) and escalates: the current case and the rest go to the sink.
    pub(super) fn init_failed(&mut self, runtime: &str, failures: Vec<(DeviceId, InitError)>) -> Step {
        self.flush_health();
        let mut summary = Vec::new();
        for (device, e) in failures {
            let error = match e.driver_error() {
                Some(d) => ErrorReport::from_driver(&d, e.to_string()),
                None => ErrorReport::new(e.class(), e.to_string()),
            }
            .with_capability(e.capability());
            summary.push((device, e.to_string(), error.code));
            self.send(&FromLane::InitFailed {
                device,
                runtime: runtime.to_owned(),
                error,
            });
        }
        heal::after_init_failure(&summary)
    }

    /// Sends the journal notes of the fixture setups that ran for a case on `device`.
    pub(super) fn fixture_notes(&mut self, device: DeviceId, notes: Vec<FixtureNote>) {
        for n in notes {
            self.send(&FromLane::Fixture {
                device,
                class: n.class,
                part: n.part,
                case: n.case,
                error: n.error,
            });
        }
    }

    fn run_one(&mut self, id: &str) -> Step {
        // A handle of its own, so the case and class are borrowed from it, not from `self`.
        let suite = Arc::clone(&self.suite);
        let Some((class, case)) = suite.find_case(id) else {
            let since = Instant::now();
            self.send_started(id);
            let e = ErrorReport::new(
                FailureClass::Usage,
                format!("no case {id:?} in this lane's suite"),
            );
            self.finish(id, CaseRun::failed(e), since);
            return Step::Next;
        };
        match (&case.body, class.kind) {
            (Body::Trivial, _) => {
                let since = Instant::now();
                self.started(&class.name, id);
                let expect = class.settings_of(case).expect;
                let judged = exec::judge(CaseRun::passed(), expect.as_ref(), self.env.arch);
                self.finish(id, judged.reported, since);
                Step::Next
            }
            _ if case.device_count > 1 => self.run_multi(id, class, case),
            // One context per card in this process: kept multi-card workers go first.
            (_, kind) => match self.close_kept_multi(heal::CloseAt::BeforeCase) {
                Some(step) => step,
                None if kind == Kind::Pooled => self.run_pooled(id, class, case),
                None => self.run_standalone(id, class, case),
            },
        }
    }

    /// Writes the remaining cases to the sink (if this lane has one) and returns the "needs fresh
    /// process" exit code.
    fn escalate(mut self, reason: &str, code: Option<Code>, rest: &[String]) -> i32 {
        self.flush_health();
        // The dispatcher logs the escalation it receives; this line is for a lane run by hand.
        tracing::info!(
            device = self.env.device,
            remaining = rest.len(),
            "card not recoverable in-process ({reason}); a fresh process is needed"
        );
        self.send(&FromLane::Escalating {
            reason: reason.to_owned(),
            cases: rest.len(),
        });
        let remaining: Vec<Remaining<'_>> = rest
            .iter()
            .map(|id| Remaining {
                id,
                class_runtime: self
                    .suite
                    .find_case(id)
                    .map(|(c, _)| (c.name.as_str(), c.runtime.name.as_str())),
            })
            .collect();
        let records =
            escalate::sink_records(&remaining, &self.started_classes, self.env.device, reason, code);
        if let Some(sink) = &mut self.sink {
            for (i, r) in records.iter().enumerate() {
                sink.append(r);
                if i == 0 && records.len() > 1 {
                    self.hooks.reach(Point::SinkWrite, &r.case);
                }
            }
        }
        EXIT_NEEDS_FRESH_PROCESS
    }
}

/// Logs a close that did not leave its card usable (a build failed elsewhere: the lane escalates
/// for that failure anyway).
pub(super) fn log_close(card: DeviceId, closed: Closed) {
    if let Some(Err(e)) = closed {
        tracing::warn!(device = card, "closing a worker after a failed build: {e}");
    }
}
