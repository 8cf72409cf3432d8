//! A multi-card case in the lane: one worker per card, one thread per card (CANN keeps one
//! current device per thread): the lane's own card on the lane's thread, every further card on
//! its [`CardThread`].
//!
//! The pooled worker is closed and every card's worker is built at once; once all are ready the
//! case starts, the body runs on every card at once (each with its own case context; the class's
//! host fixture is built once, on this thread, and shared), each card's worker is health-checked
//! after it (`super::post_check`, on the card's own thread), and every worker is closed with its
//! card's lease. The first card (in lane order) whose judged attempt fails decides the attempt; a
//! failed build is a health event of the card that failed (as on a single card), and a close that
//! leaves a card unusable escalates. This file owns that order.

use std::sync::Arc;
use std::time::Instant;

use platform_common::{DeviceId, FailureClass};

use super::card_thread::{CardThread, Closed, RunJob};
use super::heal::{self, CloseAt, Step};
use super::post_check;
use super::session::{log_close, Lane};
use crate::case::{CaseSpec, ClassSpec};
use crate::exec::{self, CaseRun};
use crate::protocol::FromLane;
use crate::report::model::{AttemptOutcome, ErrorReport, WorkerAction};
use crate::worker::ChipWorker;

impl Lane {
    /// Runs multi-card case `id` (see the module docs).
    pub(super) fn run_multi(&mut self, id: &str, class: &ClassSpec, case: &CaseSpec) -> Step {
        if let Some(step) = self.close_pooled() {
            return step;
        }
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

        // Close: every card at once, each with its own lease.
        let others = &mut self.cards[..need - 1];
        let pending: Vec<_> = others.iter_mut().map(CardThread::close).collect();
        let mut closed = vec![(own_device, Some(own.close(&self.lease)))];
        closed.extend(others.iter_mut().zip(pending).map(|(c, p)| (c.card(), c.wait(p))));
        for (card, c) in &closed {
            if c.is_some() {
                self.worker_event(*card, &class.runtime, WorkerAction::Closed);
            }
        }

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
}
