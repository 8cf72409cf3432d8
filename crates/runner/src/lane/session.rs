//! One lane process's life: hold the card's inherited lease, run assigned cases with the pool,
//! heal it, and escalate to a fresh process when the card cannot be recovered in-process
//! (DESIGN section 5, steps 3 and 4).
//!
//! This file owns the order of work inside a lane: a pooled case runs on the pooled worker (built
//! on first use); a device-runtime error retires it (close = force reset) and the next case
//! rebuilds it; a standalone case runs on a worker of its own after the pooled one is closed; a
//! multi-card case runs on a worker per card, each card's on its own thread (the lane's own card
//! on this thread, the others on their [`CardThread`]s): a driver keeps one current device per
//! thread, so no thread ever drives two cards.
//! When a reset is not confirmed, or a (re)build fails with a device error, every remaining
//! assigned case goes to the poison sink and the lane exits with
//! [`EXIT_NEEDS_FRESH_PROCESS`]. It never retries a case (the dispatcher does) and never skips
//! one for a legitimate reason (the dispatcher never assigns those).

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
use super::heal::{self, CloseAt, Escalation, PoolStep, Step};
use super::hooks::{Hooks, Point};
use super::input::{Input, Pending, EXIT_ORPHANED};
use super::output::Marks;
use super::stamp;
use crate::case::{Body, CaseSpec, ClassSpec, Kind, Runtime, Suite};
use crate::exec::{self, CaseRun};
use crate::pool::{Pool, PoolError};
use crate::protocol::{FromLane, LaneOut, EXIT_NEEDS_FRESH_PROCESS};
use crate::report::model::{AttemptOutcome, ErrorReport, Platform, WorkerAction};
use crate::sink::SinkWriter;
use crate::worker::{ChipWorker, WorkerEnv};

/// A running lane.
pub struct Lane {
    suite: IndexedSuite,
    env: WorkerEnv,
    pool: Pool,
    lease: DeviceLease,
    /// Leases of further cards, for multi-card cases (the multi-card phase's lane only).
    extra: Vec<Arc<DeviceLease>>,
    /// The threads driving those cards (one per card, started by the first case that needs it):
    /// a thread drives one card, and this one drives the lane's own.
    cards: Vec<CardThread>,
    platform: Platform,
    sink: Option<SinkWriter>,
    out: LaneOut,
    marks: Marks,
    health: stamp::Stamped,
    hooks: Hooks,
    input: Receiver<Input>,
    pending: Pending,
    started_classes: HashSet<String>,
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
        let pending = Pending::default();
        let input = super::input::spawn_reader(pending.clone(), &chan);
        Self {
            suite: IndexedSuite::new(suite),
            env,
            pool: Pool::new(),
            lease,
            extra: Vec::new(),
            cards: Vec::new(),
            platform: Platform::Sim,
            sink,
            out: LaneOut::new(chan),
            marks: Marks::from_env(),
            health,
            hooks: Hooks::none(),
            input,
            pending,
            started_classes: HashSet::new(),
        }
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
        while let Ok(Input::Run(cases)) = self.input.recv() {
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

    fn send(&mut self, msg: &FromLane) {
        if let Err(e) = self.out.send(msg) {
            tracing::warn!("cannot write to the dispatcher ({e}): it is gone; exiting");
            std::process::exit(EXIT_ORPHANED);
        }
    }

    fn flush_health(&mut self) {
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

    fn started(&mut self, class: &str, id: &str) {
        self.started_classes.insert(class.to_owned());
        self.send_started(id);
        self.hooks.reach(Point::DuringCase, id);
    }

    fn finish(&mut self, id: &str, run: CaseRun, since: Instant) {
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
    fn init_started(&mut self, device: DeviceId, runtime: &Runtime) {
        self.send(&FromLane::InitStarted {
            device,
            runtime: runtime.name.clone(),
        });
    }

    /// Reports a worker's lifecycle step on `device` to the dispatcher (for the journal).
    fn worker_event(&mut self, device: DeviceId, runtime: &Runtime, action: WorkerAction) {
        self.send(&FromLane::Worker {
            device,
            runtime: runtime.name.clone(),
            action,
        });
    }

    /// Reports that the pooled worker of `runtime` was closed, if one was.
    fn pooled_closed(&mut self, runtime: Option<&Runtime>, closed: bool) {
        if let (Some(rt), true) = (runtime, closed) {
            self.worker_event(self.env.device, rt, WorkerAction::Closed);
        }
    }

    /// Reports every card whose worker failed to build (each a health event of that card, not
    /// an attempt of any case) and escalates: the current case and the rest go to the sink.
    fn init_failed(&mut self, runtime: &str, failures: Vec<(DeviceId, InitError)>) -> Step {
        self.flush_health();
        let mut summary = Vec::new();
        for (device, e) in failures {
            let error = match e.driver_error() {
                Some(d) => ErrorReport::from_driver(&d, e.to_string()),
                None => ErrorReport::new(e.class(), e.to_string()),
            };
            summary.push((device, e.to_string(), error.code));
            self.send(&FromLane::InitFailed {
                device,
                runtime: runtime.to_owned(),
                error,
            });
        }
        heal::after_init_failure(&summary)
    }

    fn run_one(&mut self, id: &str) -> Step {
        let Some((class, case)) = self.suite.find_case(id) else {
            let since = Instant::now();
            self.send_started(id);
            let e = ErrorReport::new(
                FailureClass::Usage,
                format!("no case {id:?} in this lane's suite"),
            );
            self.finish(id, CaseRun::failed(e), since);
            return Step::Next;
        };
        let (class, case) = (class_head(class), case.clone());
        match (&case.body, class.kind) {
            (Body::Trivial, _) => {
                let since = Instant::now();
                self.started(&class.name, id);
                self.finish(id, CaseRun::passed(), since);
                Step::Next
            }
            _ if case.device_count > 1 => self.run_multi(id, &class, &case),
            (_, Kind::Pooled) => self.run_pooled(id, &class, &case),
            (_, Kind::Standalone) => self.run_standalone(id, &class, &case),
        }
    }

    fn run_pooled(&mut self, id: &str, class: &ClassSpec, case: &CaseSpec) -> Step {
        let device = self.env.device;
        let before = self.pool.runtime().cloned();
        let building = before.as_ref() != Some(&class.runtime);
        if building {
            self.init_started(device, &class.runtime);
        }
        let got = self
            .pool
            .worker(&self.env, &class.runtime, &self.lease)
            .map(|_| ());
        let switched = before.as_ref().is_some_and(|rt| *rt != class.runtime);
        self.pooled_closed(before.as_ref(), switched);
        match got {
            Ok(()) => {
                if building {
                    self.send(&FromLane::InitDone { device });
                    self.worker_event(device, &class.runtime, WorkerAction::Built);
                }
            }
            Err(PoolError::Init(e)) => return self.init_failed(&class.runtime.name, vec![(device, e)]),
            Err(PoolError::Close(e)) => {
                self.flush_health();
                return heal::after_close(Some(&Err::<(), _>(e)), CloseAt::BeforeCase);
            }
        }
        let since = Instant::now();
        self.started(&class.name, id);
        let run = match (&case.body, self.pool.current_mut()) {
            (Body::Compute { generator, tolerance }, Some(worker)) => {
                exec::run_compute(worker, &mut self.env, case, generator, *tolerance)
            }
            _ => CaseRun::failed(ErrorReport::new(
                FailureClass::Usage,
                format!("case {id:?} cannot run on a pooled worker (declare its class standalone)"),
            )),
        };
        let pool_step = heal::after_case(run.error.as_ref());
        self.finish(id, run, since);
        if pool_step == PoolStep::Retire {
            let closed = self.pool.retire(&self.lease);
            if closed.is_some() {
                self.worker_event(device, &class.runtime, WorkerAction::Retired);
            }
            self.flush_health();
            return heal::after_close(closed.as_ref(), CloseAt::AfterCase);
        }
        Step::Next
    }

    fn run_standalone(&mut self, id: &str, class: &ClassSpec, case: &CaseSpec) -> Step {
        // One process per card at a time, and one context per card in this process: the pooled
        // worker is closed before the standalone one is built.
        if let Some(step) = self.close_pooled() {
            return step;
        }
        let device = self.env.device;
        self.init_started(device, &class.runtime);
        let worker = match ChipWorker::init(&self.env, &class.runtime) {
            Ok(w) => w,
            Err(e) => return self.init_failed(&class.runtime.name, vec![(device, e)]),
        };
        self.send(&FromLane::InitDone { device });
        self.worker_event(device, &class.runtime, WorkerAction::Built);
        let since = Instant::now();
        self.started(&class.name, id);
        let (run, closed) = match &case.body {
            Body::ExpectOpTimeout(spec) => {
                exec::run_expect_op_timeout(worker, &mut self.env, &self.lease, case, spec)
            }
            Body::Compute { generator, tolerance } => {
                let mut worker = worker;
                let run = exec::run_compute(&mut worker, &mut self.env, case, generator, *tolerance);
                (run, worker.close(&self.lease))
            }
            Body::Trivial => (CaseRun::passed(), worker.close(&self.lease)),
        };
        self.worker_event(device, &class.runtime, WorkerAction::Closed);
        self.finish(id, run, since);
        heal::after_close(Some(&closed), CloseAt::AfterCase)
    }

    /// A case on several cards, one thread per card (CANN keeps one current device per thread):
    /// the lane's own card on this thread, every further card on its [`CardThread`]. The pooled
    /// worker is closed and every card's worker is built at once; once all are ready the case
    /// starts, every card runs the workload at once, and every worker is closed with its card's
    /// lease. The first card (in lane order) that fails decides the attempt; a failed build is
    /// a health event of the card that failed (as on a single card), and a close that leaves a
    /// card unusable escalates.
    fn run_multi(&mut self, id: &str, class: &ClassSpec, case: &CaseSpec) -> Step {
        if let Some(step) = self.close_pooled() {
            return step;
        }
        let Body::Compute { generator, tolerance } = &case.body else {
            let e = ErrorReport::new(
                FailureClass::Usage,
                format!("multi-card case {id:?} must be a compute case"),
            );
            return self.fail_at_once(&class.name, id, e);
        };
        let need = case.device_count as usize;
        let held = 1 + self.extra.len();
        if held < need {
            let e = ErrorReport::new(
                FailureClass::Infrastructure,
                format!("case {id:?} needs {need} cards, this lane holds {held}"),
            );
            return self.fail_at_once(&class.name, id, e);
        }
        if let Err(e) = self.start_card_threads(need - 1) {
            return self.fail_at_once(&class.name, id, e);
        }

        // Build: every card at once, each on its own thread.
        let own_device = self.env.device;
        self.init_started(own_device, &class.runtime);
        for card in self.cards[..need - 1]
            .iter()
            .map(CardThread::card)
            .collect::<Vec<_>>()
        {
            self.init_started(card, &class.runtime);
        }
        let others = &mut self.cards[..need - 1];
        let pending: Vec<_> = others.iter_mut().map(|c| c.init(&class.runtime)).collect();
        let own = ChipWorker::init(&self.env, &class.runtime);
        let built: Vec<_> = others
            .iter_mut()
            .zip(pending)
            .map(|(c, p)| (c.card(), c.wait(p)))
            .collect();
        let mut failures = Vec::new();
        let own = match own {
            Ok(w) => {
                self.send(&FromLane::InitDone { device: own_device });
                self.worker_event(own_device, &class.runtime, WorkerAction::Built);
                Some(w)
            }
            Err(e) => {
                failures.push((own_device, e));
                None
            }
        };
        for (card, result) in built {
            match result {
                Ok(()) => {
                    self.send(&FromLane::InitDone { device: card });
                    self.worker_event(card, &class.runtime, WorkerAction::Built);
                }
                Err(e) => failures.push((card, e)),
            }
        }
        let mut own = match own {
            Some(w) if failures.is_empty() => w,
            own => {
                if let Some(w) = own {
                    log_close(own_device, Some(w.close(&self.lease)));
                    self.worker_event(own_device, &class.runtime, WorkerAction::Closed);
                }
                for (card, closed) in self.close_card_threads(need - 1) {
                    if closed.is_some() {
                        self.worker_event(card, &class.runtime, WorkerAction::Closed);
                    }
                    log_close(card, closed);
                }
                return self.init_failed(&class.runtime.name, failures);
            }
        };

        let since = Instant::now();
        self.started(&class.name, id);

        // Run: every card at once.
        let others = &mut self.cards[..need - 1];
        let pending: Vec<_> = others.iter_mut().map(|c| c.run(case)).collect();
        let mut runs = vec![exec::run_compute(
            &mut own,
            &mut self.env,
            case,
            generator,
            *tolerance,
        )];
        runs.extend(others.iter_mut().zip(pending).map(|(c, p)| c.wait(p)));

        // Close: every card at once, each with its own lease.
        let pending: Vec<_> = others.iter_mut().map(CardThread::close).collect();
        let mut closed = vec![(own_device, Some(own.close(&self.lease)))];
        closed.extend(others.iter_mut().zip(pending).map(|(c, p)| (c.card(), c.wait(p))));
        for (card, c) in &closed {
            if c.is_some() {
                self.worker_event(*card, &class.runtime, WorkerAction::Closed);
            }
        }

        let run = runs
            .into_iter()
            .find(|r| r.outcome != AttemptOutcome::Passed)
            .unwrap_or_else(CaseRun::passed);
        let close_error = closed.into_iter().filter_map(|(_, c)| c).find(Result::is_err);
        self.finish(id, run, since);
        heal::after_close(close_error.as_ref(), CloseAt::AfterCase)
    }

    /// Closes the pooled worker before a standalone or multi-card case (one context per card in
    /// this process). A close that leaves the card unusable escalates.
    fn close_pooled(&mut self) -> Option<Step> {
        let runtime = self.pool.runtime().cloned();
        let closed = self.pool.close(&self.lease);
        self.pooled_closed(runtime.as_ref(), closed.is_some());
        match heal::after_close(closed.as_ref(), CloseAt::BeforeCase) {
            Step::Next => None,
            escalate => {
                self.flush_health();
                Some(escalate)
            }
        }
    }

    /// A case that fails before any device work: started and finished at once.
    fn fail_at_once(&mut self, class: &str, id: &str, e: ErrorReport) -> Step {
        let since = Instant::now();
        self.started(class, id);
        self.finish(id, CaseRun::failed(e), since);
        Step::Next
    }

    /// Closes the workers of the first `n` further cards, each on its thread, all at once.
    fn close_card_threads(&mut self, n: usize) -> Vec<(DeviceId, Closed)> {
        let others = &mut self.cards[..n];
        let pending: Vec<_> = others.iter_mut().map(CardThread::close).collect();
        others
            .iter_mut()
            .zip(pending)
            .map(|(c, p)| (c.card(), c.wait(p)))
            .collect()
    }

    /// Starts the threads of the lane's first `n` further cards that have none yet, each with
    /// that card's own driver value. A failure fails the case (infrastructure).
    fn start_card_threads(&mut self, n: usize) -> Result<(), ErrorReport> {
        while self.cards.len() < n {
            let lease = Arc::clone(&self.extra[self.cards.len()]);
            let card = lease.card();
            let driver = crate::platform::open_driver(self.platform, self.env.arch)
                .map(|(d, _)| d)
                .map_err(|e| {
                    ErrorReport::new(
                        FailureClass::Infrastructure,
                        format!("cannot open a driver for card {card}: {e}"),
                    )
                })?;
            let env = self.env.for_device(card, driver);
            let thread = CardThread::spawn(env, lease).map_err(|e| {
                ErrorReport::new(
                    FailureClass::Infrastructure,
                    format!("cannot start the thread of card {card}: {e}"),
                )
            })?;
            self.cards.push(thread);
        }
        Ok(())
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
fn log_close(card: DeviceId, closed: Closed) {
    if let Some(Err(e)) = closed {
        tracing::warn!(device = card, "closing a worker after a failed build: {e}");
    }
}

/// A class's header (name, runtime, kind) without its cases.
fn class_head(c: &ClassSpec) -> ClassSpec {
    ClassSpec {
        name: c.name.clone(),
        runtime: c.runtime.clone(),
        kind: c.kind,
        cases: Vec::new(),
    }
}
