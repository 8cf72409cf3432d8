//! The event loop's handling of SIGINT and SIGTERM (issue 8, item 4): the run stops handing out
//! work, every lane's process group is ended (SIGTERM, [`KILL_GRACE`], SIGKILL), and once every
//! lane is gone each case without a verdict is `skipped` with the signal's reason; the run then
//! writes its reports (with `interrupted`) and exits 130 or 143.
//!
//! This file owns those three steps. A lane that exits meanwhile is recorded and its sink read
//! and removed (`on_exit`), but nobody is blamed, nothing is retried and no lane starts. It never
//! catches a signal itself (`signals` does, outside the loop).

use std::time::Instant;

use super::event_loop::Dispatcher;
use super::kill::{KillReason, Termination};
use super::policy::KILL_GRACE;
use crate::report::model::{Event, Interruption};

impl Dispatcher {
    /// The first signal: no more work, every live lane ended (a lane already being ended keeps
    /// its termination). Later signals never get here (the second exits the process).
    pub(super) fn on_interrupt(&mut self, signal: Interruption) {
        if self.interrupted.is_some() {
            return;
        }
        self.interrupted = Some(signal);
        let at_ms = self.now_ms();
        self.record(Event::RunInterrupted { at_ms, signal });
        self.work.clear_queue();
        let now = Instant::now();
        for l in self.lanes.iter_mut().filter(|l| l.alive) {
            l.proc_.close();
            if l.kill.is_none() {
                l.kill = Some(Termination::begin(
                    l.proc_.pid,
                    KillReason::Interrupted,
                    now,
                    KILL_GRACE,
                ));
            }
        }
    }

    /// Every lane is gone: each case without a verdict is skipped, with the signal's reason.
    pub(super) fn skip_unfinished(&mut self, signal: Interruption) {
        let reason = signal.skip_reason();
        for i in self.work.open_cases() {
            let id = self.work.case(i).id.clone();
            let at_ms = self.now_ms();
            self.record(Event::CaseSkipped {
                at_ms,
                id,
                reason: reason.clone(),
            });
            self.work.finish(i);
        }
        self.last_verdict = Some(Instant::now());
    }
}
