//! A multi-card case in the lane: one worker per card, one thread per card (CANN keeps one
//! current device per thread): the lane's own card on the lane's thread, every further card on
//! its [`CardThread`].
//!
//! The pooled worker is closed and every card's worker is built at once; once all are ready the
//! case starts, the body runs on every card at once (each with its own case context; the class's
//! host fixture is built once, on this thread, and shared), and each card's worker is
//! health-checked after it (`super::post_check`, on the card's own thread). The first card (in
//! lane order) whose judged attempt fails decides the attempt; a failed build is a health event of
//! the card that failed (as on a single card), and a close that leaves a card unusable escalates.
//!
//! The workers of a pooled class's multi-card case are kept for the next multi-card case of the
//! same runtime and width, as a pooled worker is kept on one card (DESIGN section 5, step 3): a
//! block of N-card cases pays one init per card, not one per case. They are closed (finalize,
//! which force-resets an unusable card) when any card's attempt ends in a device-runtime error or
//! leaves its runner unusable (or its runtime retires after every case, SDMA), before a case of
//! another runtime, width or kind, and when the lane ends. A standalone class's multi-card case
//! builds its workers and closes them after it, the close part of its attempt.
//!
//! Once the block is done the dispatcher tells the lane to release its further cards
//! ([`crate::protocol::ToLane::Release`]): their workers are closed (each with its card's lease)
//! and their threads end, and the kept worker of the lane's own card becomes its pooled worker,
//! so the lane goes on as that card's regular lane without building it again. This file owns
//! that order.

use std::sync::Arc;
use std::time::Instant;

use platform_common::{DeviceId, FailureClass};

use super::card_thread::{CardThread, Closed, RunJob};
use super::heal::{self, CloseAt, PoolStep, Step};
use super::kept::KeptMulti;
use super::post_check;
use super::session::{log_close, Lane};
use crate::case::{CaseSpec, ClassSpec, Kind, Runtime};
use crate::exec::{self, CaseRun};
use crate::protocol::FromLane;
use crate::report::model::{AttemptOutcome, ErrorReport, WorkerAction};
use crate::worker::ChipWorker;

impl Lane {
    /// Runs multi-card case `id` (see the module docs).
    pub(super) fn run_multi(&mut self, id: &str, class: &ClassSpec, case: &CaseSpec) -> Step {
        let need = case.device_count as usize;
        let reuse = class.kind == Kind::Pooled
            && self
                .kept_multi
                .as_ref()
                .is_some_and(|k| k.runtime == class.runtime && k.cards == need);
        let mut own = match self.kept_multi.take() {
            Some(k) if reuse => k.own,
            kept => {
                self.kept_multi = kept;
                match self.build_multi(id, class, need) {
                    Ok(own) => own,
                    Err(step) => return step,
                }
            }
        };
        let own_device = self.env.device;
        let since = Instant::now();
        self.started(&class.name, id);

        // Run: every card at once.
        let mut runs = Vec::with_capacity(need);
        match self.prepare(id, class, case) {
            Err(e) => runs.push((
                own_device,
                exec::Executed {
                    raw: CaseRun::failed(e),
                    notes: Vec::new(),
                },
            )),
            Ok(input) => {
                let job = RunJob {
                    id: id.to_owned(),
                    class: class.name.clone(),
                    case: case.clone(),
                    host_fixture: input.host_fixture.clone(),
                    device_setup: input.device_setup.clone(),
                    health_check: self.health_check,
                };
                let others = &mut self.cards[..need - 1];
                let pending: Vec<_> = others.iter_mut().map(|c| c.run(job.clone())).collect();
                let mut executed = exec::execute(&mut own, &mut self.env, &input);
                executed.raw = post_check::apply(self.health_check, &mut own, executed.raw);
                runs.push((own_device, executed));
                runs.extend(others.iter_mut().zip(pending).map(|(c, p)| (c.card(), c.wait(p))));
            }
        }

        // Keep (a pooled class, every card's worker fine after it) or close: every card at once,
        // each with its own lease.
        let always = heal::retire_always(class.runtime.sdma, self.keep_sdma_workers);
        let keep = class.kind == Kind::Pooled && self.multi_usable(need, own.is_unusable()) && {
            runs.iter()
                .all(|(_, e)| heal::after_case(e.raw.error.as_ref(), false, always) == PoolStep::Keep)
        };
        let closed = if keep {
            self.kept_multi = Some(KeptMulti {
                runtime: class.runtime.clone(),
                cards: need,
                own,
            });
            Vec::new()
        } else {
            self.close_multi(own, &class.runtime, need)
        };

        let expect = class.settings_of(case).expect;
        let mut run = CaseRun::passed();
        for (card, executed) in runs {
            self.fixture_notes(card, executed.notes);
            let judged = exec::judge(executed.raw, expect.as_ref(), self.env.arch);
            if run.outcome == AttemptOutcome::Passed && judged.reported.outcome != AttemptOutcome::Passed {
                run = judged.reported;
            }
        }
        let close_error = closed.into_iter().filter_map(|(_, c)| c).find(Result::is_err);
        self.finish(id, run, since);
        heal::after_close(close_error.as_ref(), CloseAt::AfterCase)
    }

    /// Builds the workers of a multi-card case of `class` on `need` cards (the kept ones and the
    /// pooled one closed first), the lane's own card's returned; `Err` is the step a failure
    /// leads to (the case failed at once, or the lane escalates).
    fn build_multi(&mut self, id: &str, class: &ClassSpec, need: usize) -> Result<ChipWorker, Step> {
        if let Some(step) = self.close_kept_multi(CloseAt::BeforeCase) {
            return Err(step);
        }
        if let Some(step) = self.close_pooled() {
            return Err(step);
        }
        let held = 1 + self.extra.len();
        if held < need {
            let e = ErrorReport::new(
                FailureClass::Infrastructure,
                format!("case {id:?} needs {need} cards, this lane holds {held}"),
            );
            return Err(self.fail_at_once(&class.name, id, e));
        }
        if let Err(e) = self.start_card_threads(need - 1) {
            return Err(self.fail_at_once(&class.name, id, e));
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
        match own {
            Some(w) if failures.is_empty() => Ok(w),
            own => {
                if let Some(w) = own {
                    log_close(own_device, Some(w.close(&self.lease)));
                    self.worker_event(own_device, &class.runtime, WorkerAction::Closed);
                }
                for (card, closed) in self.close_card_threads(need - 1, &class.runtime) {
                    log_close(card, closed);
                }
                Err(self.init_failed(&class.runtime.name, failures))
            }
        }
    }

    /// Whether every card of the multi-card set (the lane's own `own_unusable` aside) still has a
    /// usable worker.
    fn multi_usable(&mut self, need: usize, own_unusable: bool) -> bool {
        let others = &mut self.cards[..need - 1];
        let pending: Vec<_> = others.iter_mut().map(CardThread::usable).collect();
        let usable: Vec<bool> = others.iter_mut().zip(pending).map(|(c, p)| c.wait(p)).collect();
        !own_unusable && usable.into_iter().all(|u| u)
    }

    /// Closes the multi-card workers (`own` and the first `need - 1` further cards'), every card
    /// at once, each with its own lease, and reports each close.
    fn close_multi(&mut self, own: ChipWorker, runtime: &Runtime, need: usize) -> Vec<(DeviceId, Closed)> {
        let own_device = self.env.device;
        let others = &mut self.cards[..need - 1];
        let pending: Vec<_> = others.iter_mut().map(CardThread::close).collect();
        let mut closed = vec![(own_device, Some(own.close(&self.lease)))];
        closed.extend(others.iter_mut().zip(pending).map(|(c, p)| (c.card(), c.wait(p))));
        for (card, c) in &closed {
            if c.is_some() {
                self.worker_event(*card, runtime, WorkerAction::Closed);
            }
        }
        closed
    }

    /// Closes the kept multi-card workers, if any (before a case that cannot use them, or as the
    /// lane ends); a close that leaves a card unusable escalates as a close `at` the current case.
    pub(super) fn close_kept_multi(&mut self, at: CloseAt) -> Option<Step> {
        let k = self.kept_multi.take()?;
        let closed = self.close_multi(k.own, &k.runtime, k.cards);
        let error = closed.into_iter().filter_map(|(_, c)| c).find(Result::is_err);
        match heal::after_close(error.as_ref(), at) {
            Step::Next => None,
            escalate => {
                self.flush_health();
                Some(escalate)
            }
        }
    }

    /// Releases the further cards ([`crate::protocol::ToLane::Release`], see the module docs)
    /// and says so. A further card whose close leaves it unusable is a warning, as at the lane's
    /// end: the card's next lane builds its worker anew (and its init is the card's check).
    pub(super) fn release(&mut self) {
        if let Some(k) = self.kept_multi.take() {
            for (card, c) in self.close_card_threads(k.cards - 1, &k.runtime) {
                if let Some(Err(e)) = c {
                    tracing::warn!(device = card, "closing a released card's worker: {e}");
                }
            }
            let before = self.pool.runtime().cloned();
            let replaced = self.pool.adopt(k.own, &self.lease);
            self.pooled_closed(before.as_ref(), replaced.is_some());
            if let Some(Err(e)) = replaced {
                tracing::warn!(device = self.env.device, "closing the pooled worker: {e}");
            }
        }
        for thread in self.cards.drain(..) {
            thread.shutdown();
        }
        self.extra.clear();
        self.flush_health();
        self.send(&FromLane::Released);
    }

    /// Closes the workers of `runtime` on the first `n` further cards, each on its thread, all
    /// at once, and reports each close.
    fn close_card_threads(&mut self, n: usize, runtime: &Runtime) -> Vec<(DeviceId, Closed)> {
        let others = &mut self.cards[..n];
        let pending: Vec<_> = others.iter_mut().map(CardThread::close).collect();
        let closed: Vec<(DeviceId, Closed)> = others
            .iter_mut()
            .zip(pending)
            .map(|(c, p)| (c.card(), c.wait(p)))
            .collect();
        for (card, c) in &closed {
            if c.is_some() {
                self.worker_event(*card, runtime, WorkerAction::Closed);
            }
        }
        closed
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
}
