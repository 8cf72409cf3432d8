//! The event loop's handling of messages from lanes: a case started or finished, a health event, a
//! failed init, a worker's lifecycle step, an escalation.
//!
//! This file owns turning lane messages into journal events and attempt bookkeeping. The retry
//! decision is [`super::policy::retry`]'s; it never handles a lane's exit (`on_exit`) and never
//! translates a health event (a device runner's event is embedded whole in its record).

use std::time::Instant;

use platform_common::health::HealthEvent;
use platform_common::DeviceId;

use super::diagnose::Answer;
use super::event_loop::Dispatcher;
use super::policy::{self, AttemptDecision, AttemptFacts};
use crate::protocol::FromLane;
use crate::report::model::{
    AttemptOutcome, AttemptOutput, ErrorReport, Event, HealthRecord, RunnerEventKind, WorkerAction,
};

/// How an attempt ended, as the event loop records it.
#[derive(Debug)]
pub(super) struct AttemptEnd {
    pub(super) outcome: AttemptOutcome,
    pub(super) duration_ms: u64,
    pub(super) error: Option<ErrorReport>,
    /// What the lane wrote during it (empty for a passing attempt).
    pub(super) output: AttemptOutput,
    /// Whether its lane was killed by a signal the dispatcher did not send (retried although its
    /// class is `infrastructure`).
    pub(super) infrastructure_kill: bool,
}

impl Dispatcher {
    /// The card index of `device`, else the lane's own card.
    fn card_of(&self, lane: usize, device: DeviceId) -> usize {
        self.cards
            .iter()
            .position(|c| c.device == device)
            .unwrap_or(self.lanes[lane].card)
    }

    pub(super) fn on_msg(&mut self, lane: usize, msg: FromLane) {
        self.lanes[lane].heard = Instant::now();
        match msg {
            FromLane::Ready { pid } => tracing::trace!(lane, pid, "lane ready"),
            FromLane::Where {
                case,
                in_call,
                since_ms,
                launch,
                launches,
            } => self.on_where(
                lane,
                Answer {
                    case,
                    in_call,
                    since_ms,
                    launch,
                    launches,
                },
            ),
            FromLane::Started { case, .. } => self.on_started(lane, &case),
            FromLane::Finished {
                case,
                outcome,
                duration_us,
                error,
                ..
            } => self.on_finished(lane, &case, outcome, duration_us / 1000, error),
            FromLane::Health { event, mono_ns } => self.on_health(lane, &event, mono_ns),
            FromLane::InitStarted { device, runtime } => {
                let card = self.card_of(lane, device);
                let l = &mut self.lanes[lane];
                if !l.initing.iter().any(|(c, _, _)| *c == card) {
                    l.initing.push((card, runtime, Instant::now()));
                }
            }
            FromLane::InitDone { device } => {
                let card = self.card_of(lane, device);
                let l = &mut self.lanes[lane];
                if let Some(pos) = l.initing.iter().position(|(c, _, _)| *c == card) {
                    let (_, _, since) = l.initing.remove(pos);
                    l.inits_done.retain(|(c, _)| *c != card);
                    l.inits_done.push((card, since.elapsed()));
                }
                self.cards[card].init_timeouts = 0;
            }
            FromLane::InitFailed {
                device,
                runtime,
                error,
            } => self.on_init_failed(lane, device, &runtime, &error),
            FromLane::Worker {
                device,
                runtime,
                action,
            } => {
                let card = self.card_of(lane, device);
                let l = &mut self.lanes[lane];
                let pid = l.proc_.pid;
                let init_ms = match action {
                    WorkerAction::Built => l
                        .inits_done
                        .iter()
                        .position(|(c, _)| *c == card)
                        .map(|pos| l.inits_done.remove(pos).1)
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                    WorkerAction::Retired | WorkerAction::Closed => None,
                };
                let at_ms = self.now_ms();
                self.record(Event::Worker {
                    at_ms,
                    device,
                    pid,
                    runtime,
                    action,
                    init_ms,
                });
            }
            FromLane::Fixture {
                device,
                class,
                part,
                case,
                error,
            } => {
                let pid = self.lanes[lane].proc_.pid;
                let at_ms = self.now_ms();
                self.record(Event::Fixture {
                    at_ms,
                    device,
                    pid,
                    class,
                    part,
                    case,
                    error,
                });
            }
            FromLane::Escalating { reason, cases } => {
                let device = self.cards[self.lanes[lane].card].device;
                tracing::warn!(device, cases, "lane escalates to a fresh process: {reason}");
            }
        }
    }

    /// A worker of the lane failed to init on `device`: a health event of that card (whichever
    /// lane saw it), never an attempt of a case; the lane's exit decides what it means.
    fn on_init_failed(&mut self, lane: usize, device: DeviceId, runtime: &str, error: &ErrorReport) {
        let card = self.card_of(lane, device);
        self.lanes[lane].initing.retain(|(c, _, _)| *c != card);
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

    fn case_index(&self, lane: usize, id: &str) -> Option<usize> {
        // A lane runs its cases in the order it was given them: the one it names is nearly always
        // its running case (`finished`) or the first it holds (`started`). One comparison each,
        // where the suite's index costs a cache miss at 100,000 cases.
        let l = &self.lanes[lane];
        let likely = l
            .running
            .map(|(i, _)| i)
            .into_iter()
            .chain(l.outstanding.front().copied());
        for i in likely {
            if self.work.case(i).id == id {
                return Some(i);
            }
        }
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

    fn on_started(&mut self, lane: usize, id: &str) {
        let Some(i) = self.case_index(lane, id) else {
            return;
        };
        // The output before this line was outside any case: logged, and not the case's.
        self.flush_outside_lines(lane);
        self.lanes[lane].capture.clear();
        self.lanes[lane].running = Some((i, Instant::now()));
        self.lanes[lane].initing.clear();
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
        lane: usize,
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
        l.take_outstanding(i);
        // The case's output (all of it arrived before this line); a passing attempt keeps none.
        let output = if outcome.is_failure() {
            l.capture.take()
        } else {
            l.capture.clear();
            AttemptOutput::default()
        };
        let card = l.card;
        let pid = l.proc_.pid;
        self.cards[card].deaths = 0;
        self.cards[card].infra_kills = 0;
        let end = AttemptEnd {
            outcome,
            duration_ms,
            error,
            output,
            infrastructure_kill: false,
        };
        self.attempt_ended(i, card, pid, end);
        // A fresh lane's pass, the multi-card phase, a `class` or `case` lane's unit: done.
        self.close_if_done(lane);
        self.refill_all();
    }

    /// Records an attempt and applies the retry rule: verdict final, or retry first in the queue.
    pub(super) fn attempt_ended(&mut self, i: usize, card: usize, pid: u32, end: AttemptEnd) {
        let AttemptEnd {
            outcome,
            duration_ms,
            error,
            output,
            infrastructure_kill,
        } = end;
        let device = self.cards[card].device;
        let c = self.work.case_mut(i);
        c.attempts += 1;
        let attempt = c.attempts;
        let id = c.id.clone();
        let decision = policy::after_attempt(&AttemptFacts {
            outcome,
            error: error.as_ref(),
            attempt,
            retries: policy::retries_for(c.retries, self.settings.retries),
            infrastructure_kill,
        });
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
            output,
        });
        match decision {
            AttemptDecision::Retry { reason } => {
                self.record(Event::RetryScheduled { at_ms, id, reason });
                self.work.push_retry(i);
                if self.work.case(i).devices <= 1 {
                    self.cards[card].retries.push(i);
                }
            }
            AttemptDecision::Final => {
                self.work.finish(i);
                self.last_verdict = Some(Instant::now());
            }
        }
    }

    /// A device runner's health event: recorded whole under the card it names, with the case
    /// running in the lane and the lane's pid, at the time the lane stamped it on the run's clock
    /// (its `unix_ms`, the lane's wall clock, is kept as the lane sent it and orders nothing).
    fn on_health(&mut self, lane: usize, ev: &HealthEvent, mono_ns: u64) {
        let card = self.card_of(lane, ev.device);
        let l = &self.lanes[lane];
        let pid = l.proc_.pid;
        let case = l.running.map(|(i, _)| self.work.case(i).id.clone());
        let at_ms = self.event_ms(mono_ns);
        let r = HealthRecord::device(at_ms, ev.clone())
            .with_case(case)
            .with_pid(pid);
        self.health(card, r);
    }
}
