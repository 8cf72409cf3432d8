//! A single-card case in the lane: pooled or standalone, from its worker to its attempt.
//!
//! A pooled case runs on the pooled worker of its runtime (built on first use, the previous
//! runtime's closed first); a standalone case on a worker of its own, built after the pooled one
//! is closed and closed after the case (the close is part of its attempt). Each attempt: the
//! class's host fixture (once per lane), the executor's raw attempt, the post-case health check
//! (`super::post_check`), the expectation judged from it, and step 3 of the chain decided from the raw attempt and the runner's state (a device
//! fault a case expected still retires its worker). This file owns that order; the decisions are
//! `super::heal`'s and `crate::exec`'s.

use std::time::Instant;

use platform_common::FailureClass;

use super::heal::{self, CloseAt, PoolStep, Step};
use super::post_check;
use super::session::Lane;
use crate::case::{CaseSpec, ClassSpec};
use crate::exec::{self, liveness, CaseInput, CaseRun, Executed};
use crate::pool::PoolError;
use crate::protocol::FromLane;
use crate::report::model::{ErrorReport, WorkerAction};
use crate::worker::ChipWorker;

impl Lane {
    /// What case `id` of `class` runs with: its class's host fixture, built at the class's first
    /// case in this lane (inside that case's attempt), or the attempt's failure.
    pub(super) fn prepare<'a>(
        &mut self,
        id: &'a str,
        class: &'a ClassSpec,
        case: &'a CaseSpec,
    ) -> Result<CaseInput<'a>, ErrorReport> {
        let got = self.fixtures.get(class, id, self.env.arch);
        if let Some(note) = got.note {
            self.fixture_notes(self.env.device, vec![note]);
        }
        Ok(CaseInput {
            id,
            class: &class.name,
            case,
            host_fixture: got.data?,
            device_setup: class.fixture.as_ref().and_then(|f| f.device.clone()),
        })
    }

    pub(super) fn run_pooled(&mut self, id: &str, class: &ClassSpec, case: &CaseSpec) -> Step {
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
        let executed = match self.prepare(id, class, case) {
            Err(e) => Executed {
                raw: CaseRun::failed(e),
                notes: Vec::new(),
            },
            Ok(input) => match self.pool.current_mut() {
                Some(worker) => {
                    let mut executed = exec::execute(worker, &mut self.env, &input);
                    executed.raw = post_check::apply(self.health_check, worker, executed.raw);
                    executed
                }
                None => Executed {
                    raw: CaseRun::failed(ErrorReport::new(
                        FailureClass::Infrastructure,
                        format!("no pooled worker for case {id:?}"),
                    )),
                    notes: Vec::new(),
                },
            },
        };
        self.fixture_notes(device, executed.notes);
        let unusable = self.pool.current_mut().is_some_and(|w| w.is_unusable());
        let always = heal::retire_always(class.runtime.sdma, self.keep_sdma_workers);
        let pool_step = heal::after_case(executed.raw.error.as_ref(), unusable, always);
        let expect = class.settings_of(case).expect;
        let judged = exec::judge(executed.raw, expect.as_ref(), self.env.arch);
        self.finish(id, judged.reported, since);
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

    pub(super) fn run_standalone(&mut self, id: &str, class: &ClassSpec, case: &CaseSpec) -> Step {
        // One process per card at a time, and one context per card in this process: the pooled
        // worker is closed before the standalone one is built.
        if let Some(step) = self.close_pooled() {
            return step;
        }
        let device = self.env.device;
        self.init_started(device, &class.runtime);
        let mut worker = match ChipWorker::init(&self.env, &class.runtime) {
            Ok(w) => w,
            Err(e) => return self.init_failed(&class.runtime.name, vec![(device, e)]),
        };
        self.send(&FromLane::InitDone { device });
        self.worker_event(device, &class.runtime, WorkerAction::Built);
        let since = Instant::now();
        self.started(&class.name, id);
        let executed = match self.prepare(id, class, case) {
            Err(e) => Executed {
                raw: CaseRun::failed(e),
                notes: Vec::new(),
            },
            Ok(input) => {
                let mut executed = exec::execute(&mut worker, &mut self.env, &input);
                executed.raw = post_check::apply(self.health_check, &mut worker, executed.raw);
                executed
            }
        };
        self.fixture_notes(device, executed.notes);
        let device_fault = executed.raw.class() == Some(FailureClass::DeviceRuntime);
        let expect = class.settings_of(case).expect;
        let judged = exec::judge(executed.raw, expect.as_ref(), self.env.arch);
        // The close is part of the attempt: an expected device fault must also be recovered
        // from in time.
        let closing = Instant::now();
        let closed = worker.close(&self.lease);
        let reported = liveness::judge_close(
            judged.reported,
            judged.met && device_fault,
            closing.elapsed(),
            &self.env.timeouts,
        );
        self.worker_event(device, &class.runtime, WorkerAction::Closed);
        self.finish(id, reported, since);
        heal::after_close(Some(&closed), CloseAt::AfterCase)
    }

    /// Closes the pooled worker before a standalone or multi-card case (one context per card in
    /// this process). A close that leaves the card unusable escalates.
    pub(super) fn close_pooled(&mut self) -> Option<Step> {
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
    pub(super) fn fail_at_once(&mut self, class: &str, id: &str, e: ErrorReport) -> Step {
        let since = Instant::now();
        self.started(class, id);
        self.finish(id, CaseRun::failed(e), since);
        Step::Next
    }
}
