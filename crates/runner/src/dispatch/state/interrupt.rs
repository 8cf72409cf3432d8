//! SIGINT and SIGTERM (issue 8, item 4): the run stops handing out work, every lane's process
//! group is ended (SIGTERM, [`KILL_GRACE`], SIGKILL), and once every lane is gone each case
//! without a verdict is `skipped` with the signal's reason; the run then writes its reports (with
//! `interrupted`) and exits 130 or 143.
//!
//! This file owns those three steps. A lane that exits meanwhile is recorded (its sink was read
//! and removed by the process layer), but nobody is blamed, nothing is retried and no lane starts
//! (`exits`). It never catches a signal itself (the process layer does, outside the state).

use super::event::Action;
use super::machine::DispatchState;
use crate::dispatch::policy::{KillReason, KILL_GRACE};
use crate::report::model::{Event as Journal, Interruption};

impl DispatchState {
    /// The first signal: no more work, every live lane ended (a lane already being ended keeps
    /// its termination). Later signals never get here (the second exits the process).
    pub(super) fn on_interrupt(&mut self, signal: Interruption) {
        if self.interrupted.is_some() {
            return;
        }
        self.interrupted = Some(signal);
        let at_ms = self.now_ms();
        self.record(Journal::RunInterrupted { at_ms, signal });
        self.work.clear_queue();
        for id in 0..self.lanes.len() {
            if !self.lanes[id].alive() {
                continue;
            }
            self.act(Action::Close {
                lane: id,
                done: false,
            });
            if self.lanes[id].kill.is_none() {
                self.end_lane(id, KillReason::Interrupted, KILL_GRACE);
            }
        }
    }

    /// Every lane is gone: each case without a verdict is skipped, with the signal's reason.
    pub(super) fn skip_unfinished(&mut self, signal: Interruption) {
        let reason = signal.skip_reason();
        for i in self.work.open_cases() {
            let id = self.work.case(i).id.clone();
            let at_ms = self.now_ms();
            self.record(Journal::CaseSkipped {
                at_ms,
                id,
                reason: reason.clone(),
            });
            self.work.finish(i);
        }
        self.last_verdict = Some(self.now);
    }
}
