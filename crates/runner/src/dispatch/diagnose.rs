//! A hung case's diagnosis (issue 9 item 2): when a running case passes its timeout, before its
//! lane is sent SIGTERM, the event loop asks the lane where it is ([`ToLane::Where`], answered by
//! the lane's channel reader from its breadcrumb, not by the stuck thread) and, where a stack tool
//! is installed, captures the native stacks of every lane thread on a thread of its own. The lane
//! is ended once both are in, or once [`policy::diagnosis::ends_at`] passes: a lane that cannot
//! answer is still ended in time. The result goes with the timed-out attempt
//! ([`Diagnostics`], kept in the lane's capture).
//!
//! This file owns that sequence in the event loop. It never decides that a case timed out (the
//! watchdog rules do) and never blames anyone (the exit handling does).

use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use platform_common::driver::DriverCall;

use super::event_loop::Dispatcher;
use super::kill::{KillReason, Termination};
use super::lane_proc::{LaneEvent, LaneId};
use super::policy::diagnosis::{ends_at, Waiting, ANSWER_WAIT};
use super::stacks::{StackError, StackTool, STACK_BOUND};
use crate::protocol::ToLane;
use crate::report::model::Diagnostics;

/// The lane's answer to [`ToLane::Where`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The case its breadcrumb names.
    pub case: Option<String>,
    /// The driver call in flight.
    pub in_call: Option<DriverCall>,
    /// For how long, in ms.
    pub since_ms: Option<u64>,
    /// The case launch in flight or last made.
    pub launch: u64,
    /// The case's launches, when known.
    pub launches: Option<u64>,
}

/// The stack capture of a diagnosis.
#[derive(Debug)]
enum Stacks {
    /// No tool: the breadcrumb alone is reported.
    NoTool,
    /// The tool runs.
    Pending(&'static str),
    /// It finished.
    Done(&'static str, Result<String, StackError>),
}

/// A diagnosis in progress on one lane.
#[derive(Debug)]
pub struct Diagnosis {
    /// When it started.
    started: Instant,
    /// How the lane is ended afterwards.
    pub reason: KillReason,
    grace: Duration,
    answer: Option<Answer>,
    stacks: Stacks,
}

impl Diagnosis {
    fn waiting(&self) -> Waiting {
        Waiting {
            started: self.started,
            answer: self.answer.is_none(),
            stacks: matches!(self.stacks, Stacks::Pending(_)),
            stack_bound: STACK_BOUND,
        }
    }

    /// When the lane is ended at the latest.
    pub fn deadline(&self) -> Instant {
        ends_at(&self.waiting()).unwrap_or(self.started)
    }

    /// The record of what was found out, for the attempt of `case`.
    fn diagnostics(self, case: Option<&str>) -> Diagnostics {
        let mut d = Diagnostics::default();
        match self.answer {
            Some(a) => {
                d.answered = true;
                d.in_call = a.in_call;
                d.since_ms = a.since_ms;
                d.launch = Some(a.launch);
                d.launches = a.launches;
                if a.case.as_deref() != case {
                    d.notes.push(format!(
                        "the lane's breadcrumb names {} as its running case",
                        a.case.as_deref().unwrap_or("no case")
                    ));
                }
            }
            None => d.notes.push(format!(
                "the lane did not say where it was within {} s",
                ANSWER_WAIT.as_secs_f64()
            )),
        }
        match self.stacks {
            Stacks::NoTool => d.notes.push(NO_TOOL.to_owned()),
            Stacks::Pending(tool) => d.notes.push(format!(
                "{tool} did not report the stacks within {} s",
                STACK_BOUND.as_secs_f64()
            )),
            Stacks::Done(tool, Ok(text)) => {
                d.stacks = Some(text);
                d.stack_tool = Some(tool.to_owned());
            }
            Stacks::Done(_, Err(e)) => d.notes.push(e.to_string()),
        }
        d
    }
}

/// What a diagnosis says without a stack tool.
const NO_TOOL: &str = "no stack tool (eu-stack or gdb) on the stack-tool search path: no native stacks";

/// The run's stack tool, and whether its absence was told already.
#[derive(Debug)]
pub struct Diagnoser {
    tool: Option<StackTool>,
    told_missing: bool,
}

impl Diagnoser {
    /// A diagnoser with `tool` (none found: the breadcrumb alone is reported).
    pub fn new(tool: Option<StackTool>) -> Self {
        Self {
            tool,
            told_missing: false,
        }
    }
}

/// Captures the stacks of lane `id` (process `pid`) with `tool` on a thread of its own; the
/// result comes back as [`LaneEvent::Stacks`].
fn spawn_capture(tool: StackTool, id: LaneId, pid: u32, tx: Sender<LaneEvent>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("stacks-{pid}"))
        .spawn(move || {
            let got = tool.capture(pid, STACK_BOUND);
            let _ = tx.send(LaneEvent::Stacks(id, got));
        })
        .map(drop)
}

impl Dispatcher {
    /// Lane `id`'s running case passed its timeout at `now`: ask the lane where it is, start the
    /// stack capture, and end the lane (`reason`, `grace`) once both are in or bounded out.
    pub(super) fn begin_diagnosis(&mut self, id: LaneId, reason: KillReason, grace: Duration, now: Instant) {
        let pid = self.lanes[id].proc_.pid;
        self.lanes[id].proc_.send(&ToLane::Where);
        let stacks = match self.diagnoser.tool.clone() {
            Some(tool) => {
                let name = tool.name;
                match spawn_capture(tool, id, pid, self.tx.clone()) {
                    Ok(()) => Stacks::Pending(name),
                    Err(e) => Stacks::Done(
                        name,
                        Err(StackError::Spawn {
                            tool: name,
                            reason: e.to_string(),
                        }),
                    ),
                }
            }
            None => {
                if !self.diagnoser.told_missing {
                    self.diagnoser.told_missing = true;
                    tracing::warn!(
                        "{NO_TOOL}; hung cases are reported with their breadcrumb only (install \
                         elfutils or gdb)"
                    );
                }
                Stacks::NoTool
            }
        };
        self.lanes[id].diag = Some(Diagnosis {
            started: now,
            reason,
            grace,
            answer: None,
            stacks,
        });
        self.end_diagnosed(id, now);
    }

    /// Lane `id` answered where it is.
    pub(super) fn on_where(&mut self, id: LaneId, answer: Answer) {
        if let Some(d) = &mut self.lanes[id].diag {
            d.answer = Some(answer);
        }
        self.end_diagnosed(id, Instant::now());
    }

    /// The stack tool finished on lane `id`.
    pub(super) fn on_stacks(&mut self, id: LaneId, got: Result<String, StackError>) {
        if let Some(d) = &mut self.lanes[id].diag {
            if let Stacks::Pending(tool) = d.stacks {
                d.stacks = Stacks::Done(tool, got);
            }
        }
        self.end_diagnosed(id, Instant::now());
    }

    /// Ends lane `id` if its diagnosis is over at `now` (everything in, or its bound passed):
    /// the diagnosis goes with the running attempt, then SIGTERM (and SIGKILL after the grace).
    pub(super) fn end_diagnosed(&mut self, id: LaneId, now: Instant) {
        let l = &mut self.lanes[id];
        let over = l.diag.as_ref().is_some_and(|d| now >= d.deadline());
        if !over || l.kill.is_some() {
            return;
        }
        let Some(d) = l.diag.take() else { return };
        let (reason, grace) = (d.reason, d.grace);
        let case = l.running.map(|(i, _)| self.work.case(i).id.clone());
        let diagnostics = d.diagnostics(case.as_deref());
        let pid = l.proc_.pid;
        tracing::warn!(
            pid,
            case = case.as_deref().unwrap_or("-"),
            "case past its timeout: {}; ending its lane",
            diagnostics.summary()
        );
        l.capture.set_diagnostics(diagnostics);
        l.kill = Some(Termination::begin(pid, reason, now, grace));
    }
}
