//! A hung case's diagnosis in the run (issue 9 item 2): when a running case passes its timeout,
//! the lane is asked where it is and, where a stack tool is installed, its stacks are captured;
//! the lane is ended once both are in, or once the diagnosis' bound passes, and the diagnosis goes
//! with the timed-out attempt.
//!
//! This file owns that sequence (what a diagnosis gathers and says is `diagnosis`'). It never
//! decides that a case timed out (the clock rules do) and never blames anyone (`exits` does).

use std::time::Duration;

use super::diagnosis::{Answer, Diagnosis, Stacks, NO_TOOL};
use super::event::{Action, LaneId};
use super::machine::DispatchState;
use crate::dispatch::policy::KillReason;
use crate::protocol::ToLane;

impl DispatchState {
    /// Lane `id`'s running case passed its timeout: ask the lane where it is, ask for its stacks,
    /// and end the lane (`reason`, `grace`) once both are in or bounded out.
    pub(super) fn begin_diagnosis(&mut self, id: LaneId, reason: KillReason, grace: Duration) {
        self.act(Action::Send {
            lane: id,
            msg: ToLane::Where,
        });
        let stacks = match self.settings.stack_tool {
            Some(tool) => {
                self.act(Action::CaptureStacks { lane: id });
                Stacks::Pending(tool)
            }
            None => {
                if !self.told_no_stack_tool {
                    self.told_no_stack_tool = true;
                    tracing::warn!(
                        "{NO_TOOL}; hung cases are reported with their breadcrumb only (install \
                         elfutils or gdb)"
                    );
                }
                Stacks::NoTool
            }
        };
        self.lanes[id].diag = Some(Diagnosis {
            started: self.now,
            reason,
            grace,
            answer: None,
            stacks,
        });
        self.end_diagnosed(id);
    }

    /// Lane `id` answered where it is.
    pub(super) fn on_where(&mut self, id: LaneId, answer: Answer) {
        if let Some(d) = &mut self.lanes[id].diag {
            d.answer = Some(answer);
        }
        self.end_diagnosed(id);
    }

    /// The stack tool finished on lane `id`.
    pub(super) fn on_stacks(&mut self, id: LaneId, got: Result<String, String>) {
        if let Some(d) = &mut self.lanes[id].diag {
            if let Stacks::Pending(tool) = d.stacks {
                d.stacks = Stacks::Done(tool, got);
            }
        }
        self.end_diagnosed(id);
    }

    /// Ends lane `id` if its diagnosis is over (everything in, or its bound passed): the
    /// diagnosis goes with the running attempt, then SIGTERM (and SIGKILL after the grace).
    pub(super) fn end_diagnosed(&mut self, id: LaneId) {
        let now = self.now;
        let l = &mut self.lanes[id];
        let over = l.diag.as_ref().is_some_and(|d| now >= d.deadline());
        if !over || l.kill.is_some() {
            return;
        }
        let Some(d) = l.diag.take() else { return };
        let (reason, grace) = (d.reason, d.grace);
        let case = l.running.map(|(i, _)| self.work.case(i).id.clone());
        let diagnostics = d.diagnostics(case.as_deref());
        tracing::warn!(
            pid = l.pid,
            case = case.as_deref().unwrap_or("-"),
            "case past its timeout: {}; ending its lane",
            diagnostics.summary()
        );
        l.capture.set_diagnostics(diagnostics);
        self.end_lane(id, reason, grace);
    }
}
