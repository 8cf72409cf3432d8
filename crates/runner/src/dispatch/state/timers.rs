//! The clock rules applied: after every event each live lane's deadline is checked, and a lane
//! past it is ended (SIGTERM, the grace, SIGKILL): a running case past its timeout after its
//! diagnosis (`hung`), an init past `--init-timeout` (a health event of each card it was
//! initialising, never an attempt), a silent lane with work outstanding (the watchdog), a closed
//! lane that did not exit in time.
//!
//! This file owns applying [`crate::dispatch::policy::watchdog`] and beginning a lane's end
//! ([`super::ending::Ending`]). It never reads a clock (the time comes with the event) and never
//! blames anyone (`exits` does once the lane is gone).

use std::time::Duration;

use super::ending::Ending;
use super::event::{Action, LaneId, LaneSignal};
use super::machine::DispatchState;
use crate::dispatch::policy::{self, KillReason};
use crate::report::model::{HealthRecord, RunnerEventKind};

impl DispatchState {
    /// Applies the clock rules to every live lane at the event's time.
    pub(super) fn check_deadlines(&mut self) {
        let now = self.now;
        for id in 0..self.lanes.len() {
            if !self.lanes[id].alive() {
                continue;
            }
            let due = self.lane_deadline(&self.lanes[id]).is_some_and(|d| now >= d);
            let l = &mut self.lanes[id];
            if let Some(k) = &mut l.kill {
                if k.poll(now) {
                    tracing::warn!(pid = l.pid, "lane still alive after the grace period: SIGKILL");
                    self.act(Action::Signal {
                        lane: id,
                        signal: LaneSignal::Kill,
                    });
                }
                continue;
            }
            if !due {
                continue;
            }
            if l.diag.is_some() {
                self.end_diagnosed(id);
                continue;
            }
            let (reason, grace) = policy::watchdog::on_deadline(&l.times(None));
            if reason == KillReason::CaseTimeout {
                // Before the kill: where is it stuck?
                self.begin_diagnosis(id, reason, grace);
                continue;
            }
            tracing::warn!(pid = l.pid, ?reason, "lane past its deadline: ending it");
            self.end_lane(id, reason, grace);
            if reason == KillReason::InitTimeout {
                self.init_timed_out(id);
            }
        }
    }

    /// Begins ending lane `id` for `reason`: SIGTERM now and SIGKILL after `grace` (SIGKILL at
    /// once when it is zero).
    pub(super) fn end_lane(&mut self, id: LaneId, reason: KillReason, grace: Duration) {
        let (ending, signal) = Ending::begin(reason, self.now, grace);
        self.lanes[id].kill = Some(ending);
        self.act(Action::Signal { lane: id, signal });
    }

    /// Lane `id` is being ended for an init past `--init-timeout`: a health event
    /// `init_timed_out` of each card it was initialising (never an attempt of any case).
    fn init_timed_out(&mut self, id: LaneId) {
        let initing = std::mem::take(&mut self.lanes[id].initing);
        let pid = self.lanes[id].pid;
        let secs = self.settings.init_timeout.as_secs_f64();
        for (card, runtime, _) in initing {
            self.lanes[id].init_timed_out.push(card);
            let device = self.cards[card].device;
            let detail = format!(
                "init of runtime {runtime} on card {device} did not finish within --init-timeout of \
                 {secs} s; lane pid {pid} was ended"
            );
            let at_ms = self.now_ms();
            self.health(
                card,
                HealthRecord::runner(at_ms, RunnerEventKind::InitTimedOut, detail).with_pid(pid),
            );
        }
    }
}
