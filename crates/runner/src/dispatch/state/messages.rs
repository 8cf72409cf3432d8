//! A lane's messages: a case started or finished, a health event, an init started, done or
//! failed, a worker's lifecycle step, a fixture's setup, an escalation, the answer about a hung
//! case.
//!
//! This file owns turning lane messages into journal events and attempt bookkeeping. The retry
//! decision is `attempts`' (through the policy); it never handles a lane's exit (`exits`) and
//! never translates a health event (a device runner's event is embedded whole in its record).

use platform_common::health::HealthEvent;
use platform_common::{DeviceId, FailureClass};

use super::attempts::AttemptEnd;
use super::diagnosis::Answer;
use super::event::LaneId;
use super::machine::DispatchState;
use crate::protocol::FromLane;
use crate::report::model::{
    AttemptOutcome, AttemptOutput, ErrorReport, Event as Journal, HealthRecord, RunnerEventKind, WorkerAction,
};

impl DispatchState {
    /// The card index of `device`, else the lane's own card.
    fn card_of(&self, lane: LaneId, device: DeviceId) -> usize {
        self.cards
            .iter()
            .position(|c| c.device == device)
            .unwrap_or(self.lanes[lane].card)
    }

    pub(super) fn on_msg(&mut self, lane: LaneId, msg: FromLane) {
        self.lanes[lane].heard = self.now;
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
                let now = self.now;
                let l = &mut self.lanes[lane];
                if !l.initing.iter().any(|(c, _, _)| *c == card) {
                    l.initing.push((card, runtime, now));
                }
            }
            FromLane::InitDone { device } => {
                let card = self.card_of(lane, device);
                let now = self.now;
                let l = &mut self.lanes[lane];
                if let Some(pos) = l.initing.iter().position(|(c, _, _)| *c == card) {
                    let (_, _, since) = l.initing.remove(pos);
                    l.inits_done.retain(|(c, _)| *c != card);
                    l.inits_done.push((card, now.saturating_sub(since)));
                }
                self.cards[card].strikes.init_done();
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
                let rt = self.work.runtime_index(&runtime);
                let l = &mut self.lanes[lane];
                let pid = l.pid;
                if card == l.card {
                    // The worker its card holds now (a standalone case's closes after it).
                    l.worker = match action {
                        WorkerAction::Built => rt,
                        WorkerAction::Retired | WorkerAction::Closed => None,
                    };
                }
                let init_ms = match action {
                    WorkerAction::Built => l
                        .inits_done
                        .iter()
                        .position(|(c, _)| *c == card)
                        .map(|pos| l.inits_done.remove(pos).1)
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                    WorkerAction::Retired | WorkerAction::Closed => None,
                };
                if let (Some(rt), Some(ms)) = (rt, init_ms) {
                    self.note_init(rt, ms);
                }
                let at_ms = self.now_ms();
                self.record(Journal::Worker {
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
                let pid = self.lanes[lane].pid;
                let at_ms = self.now_ms();
                self.record(Journal::Fixture {
                    at_ms,
                    device,
                    pid,
                    class,
                    part,
                    case,
                    error,
                });
            }
            FromLane::Released => self.on_released(lane),
            FromLane::Escalating { reason, cases } => {
                let device = self.cards[self.lanes[lane].card].device;
                tracing::warn!(device, cases, "lane escalates to a fresh process: {reason}");
            }
        }
    }

    /// A worker of the lane failed to init on `device`: a health event of that card (whichever
    /// lane saw it), never an attempt of a case; the lane's exit decides what it means.
    fn on_init_failed(&mut self, lane: LaneId, device: DeviceId, runtime: &str, error: &ErrorReport) {
        let card = self.card_of(lane, device);
        let l = &mut self.lanes[lane];
        l.initing.retain(|(c, _, _)| *c != card);
        if !l.init_failed.contains(&card) {
            l.init_failed.push(card);
        }
        let pid = l.pid;
        let detail = format!(
            "init of runtime {runtime} on card {device} failed: {}",
            error.message
        );
        let r = HealthRecord::runner(self.now_ms(), RunnerEventKind::InitFailed, detail)
            .with_error(error.call, error.code)
            .with_capability(error.capability)
            .with_pid(pid);
        self.health(card, r);
    }

    /// The case `id` a lane names.
    fn case_index(&self, lane: LaneId, id: &str) -> Option<usize> {
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

    fn on_started(&mut self, lane: LaneId, id: &str) {
        let Some(i) = self.case_index(lane, id) else {
            return;
        };
        // The output before this line was outside any case: logged, and not the case's.
        self.flush_outside_lines(lane);
        let now = self.now;
        let l = &mut self.lanes[lane];
        l.capture.clear();
        l.running = Some((i, now));
        l.initing.clear();
        let device = self.cards[l.card].device;
        let attempt = self.work.case(i).attempts + 1;
        let at_ms = self.now_ms();
        self.record(Journal::CaseStarted {
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
        l.take_outstanding(i);
        // The case's output (all of it arrived before this line); a passing attempt keeps none.
        let output = if outcome.is_failure() {
            l.capture.take()
        } else {
            l.capture.clear();
            AttemptOutput::default()
        };
        if error
            .as_ref()
            .is_some_and(|e| e.class == FailureClass::DeviceRuntime)
        {
            // The lane retires its worker after a device error (its reset follows).
            l.worker = None;
        }
        let (card, pid) = (l.card, l.pid);
        self.cards[card].strikes.case_finished();
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
        self.refill();
    }

    /// A device runner's health event: recorded whole under the card it names, with the case
    /// running in the lane and the lane's pid, at the time the lane stamped it on the run's clock
    /// (its `unix_ms`, the lane's wall clock, is kept as the lane sent it and orders nothing).
    fn on_health(&mut self, lane: LaneId, ev: &HealthEvent, mono_ns: u64) {
        let card = self.card_of(lane, ev.device);
        let l = &self.lanes[lane];
        let case = l.running.map(|(i, _)| self.work.case(i).id.clone());
        let r = HealthRecord::device(self.event_ms(mono_ns), ev.clone())
            .with_case(case)
            .with_pid(l.pid);
        self.health(card, r);
    }
}
