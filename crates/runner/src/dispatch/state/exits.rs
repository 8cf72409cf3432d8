//! A lane's exit, for any reason (DESIGN section 5 steps 5 to 7): the blamed attempt, the poison
//! sink's split, the fresh lane, the requeue, the strike against the card, the quarantine.
//!
//! This file gathers the facts of the exit (an infrastructure kill among them: a signal the
//! dispatcher did not send), asks the policy (`blame`, `sink_rerun`, `lane_exit`) and applies the
//! answers (a strike through `health`, a preflight's verdict through `health`). The sink arrives
//! read (the process layer reads and deletes the file); it decides nothing itself.

use platform_common::DeviceId;

use super::attempts::AttemptEnd;
use super::event::LaneId;
use super::handout::Start;
use super::lane::Phase;
use super::machine::DispatchState;
use crate::dispatch::policy::{
    self, DeathFacts, ExitDecision, ExitFacts, InitFailure, LaneKind, Outstanding, SinkRerun,
};
use crate::report::model::{Event as Journal, LaneStatus};
use crate::sink::SinkContents;

impl DispatchState {
    pub(super) fn on_exit(&mut self, lane: LaneId, status: LaneStatus, sink: Option<SinkContents>) {
        self.flush_outside_lines(lane);
        let now = self.now;
        let l = &mut self.lanes[lane];
        l.phase = Phase::Gone;
        let (card, pid, kind, heard) = (l.card, l.pid, l.kind, l.heard);
        // A lane that dies while its hung case is diagnosed was being ended for the timeout.
        let kill = l
            .kill
            .take()
            .map(|k| k.reason)
            .or(l.diag.take().map(|d| d.reason));
        let mut init_failed = std::mem::take(&mut l.init_failed);
        let init_timed_out = std::mem::take(&mut l.init_timed_out);
        let unfinished = l.unfinished();
        let running = l.running.take();
        if self.cards[card].lane == Some(lane) {
            self.cards[card].lane = None;
        }
        let device = self.cards[card].device;
        let at_ms = self.now_ms();
        self.record(Journal::LaneExited {
            at_ms,
            device,
            pid,
            status,
        });
        if self.interrupted.is_some() {
            // The run is ending: nobody is blamed, nothing is retried, no lane starts; the sink
            // was removed (its cases are skipped with the others).
            self.lanes[lane].outstanding.clear();
            self.lanes[lane].batches.clear();
            return;
        }

        // Step 6: who pays for the death (a kill from outside is the infrastructure's).
        let infrastructure_kill = policy::infrastructure_kill(status, kill);
        let next = self.lanes[lane]
            .outstanding
            .front()
            .map(|&i| (i, now.saturating_sub(heard)));
        let own = running.and_then(|(i, _)| self.work.case(i).timeout);
        let blamed = policy::blame(&DeathFacts {
            status,
            pid,
            kill,
            running: running.map(|(i, since)| (i, now.saturating_sub(since))),
            next,
            case_timeout: policy::case_limit(own, self.settings.case_timeout),
            own_timeout: own.is_some(),
        });
        if let Some(b) = blamed {
            let l = &mut self.lanes[lane];
            l.take_outstanding(b.case);
            // What the lane wrote since the last boundary: the running case's output (all of it:
            // the exit comes after the lane's last bytes), or what it wrote outside a case before
            // the watchdog ended it.
            let end = AttemptEnd {
                outcome: b.outcome,
                duration_ms: u64::try_from(b.duration.as_millis()).unwrap_or(u64::MAX),
                error: Some(b.error),
                output: l.capture.take(),
                infrastructure_kill: b.infrastructure_kill.is_some(),
            };
            self.attempt_ended(b.case, card, pid, end);
        }

        // The retries of cases that failed on this card (the blamed one's included), for a fresh
        // lane's pass.
        let retries = std::mem::take(&mut self.cards[card].retries);

        // Step 5: the sink is read after every exit, timeouts and crashes included.
        let outstanding: Vec<usize> = self.lanes[lane].outstanding.drain(..).collect();
        self.lanes[lane].batches.clear();
        let split = match sink {
            Some(contents) => self.split_sink(device, contents, &outstanding),
            None => SinkRerun {
                requeue: outstanding.clone(),
                ..Default::default()
            },
        };

        // Steps 5 and 7: what follows. A multi-card lane's init timeout is its cards' init failure.
        let own_init_timed_out = init_timed_out.contains(&card);
        if kind == LaneKind::Multi {
            for c in init_timed_out {
                if !init_failed.contains(&c) {
                    init_failed.push(c);
                }
            }
        }
        let facts = ExitFacts {
            kind,
            status,
            pid,
            device,
            unfinished,
            finishing: self.finishing.is_some(),
            init_failed: init_failed
                .iter()
                .map(|&c| InitFailure {
                    card: c,
                    device: self.cards[c].device,
                })
                .collect(),
            sink_reruns: split.fresh.len(),
            init_timed_out: own_init_timed_out,
            infrastructure_kill,
        };
        match policy::after_exit(&facts) {
            ExitDecision::Closed => return,
            ExitDecision::Preflight(step) => {
                // A preflight lane is never given work; should it hold any, it goes back.
                self.work.requeue(&outstanding);
                self.preflight_ended(card, pid, step);
            }
            ExitDecision::Multi { strike, init_failed } => {
                self.work.requeue(&outstanding);
                if let Some(s) = strike {
                    self.strike_multi(s);
                }
                for (c, s) in init_failed {
                    self.strike(c, s);
                }
            }
            ExitDecision::Quarantine(reason) => {
                self.work.requeue(&outstanding);
                self.quarantine(card, &reason);
            }
            ExitDecision::InitTimeout(strike) => {
                self.work.requeue(&outstanding);
                self.strike(card, strike);
            }
            ExitDecision::FreshLane(reason) => {
                self.work.requeue(&split.requeue);
                self.cards[card].replacement = Some(reason);
                // Step 6 on the freshly started card: a trigger's retry still queued runs in the
                // fresh lane's pass, in the worker it builds anyway, instead of waiting behind
                // another lane's work.
                let queued: Vec<usize> = retries.into_iter().filter(|&i| self.work.unqueue(i)).collect();
                self.spawn(card, Start::Fresh(policy::fresh_pass(split.fresh, queued)));
            }
            ExitDecision::Requeue { replacement, strike } => {
                self.work.requeue(&outstanding);
                if replacement.is_some() {
                    self.cards[card].replacement = replacement;
                }
                if let Some(s) = strike {
                    self.strike(card, s);
                }
            }
        }
        self.refill();
    }

    /// A dead lane's sink, read (journal: `sink_read`): its unfinished cases split between a
    /// fresh lane and the queue.
    fn split_sink(&mut self, device: DeviceId, contents: SinkContents, outstanding: &[usize]) -> SinkRerun {
        if !contents.malformed_lines.is_empty() {
            tracing::warn!(
                device,
                lines = ?contents.malformed_lines,
                "skipped malformed poison-sink lines"
            );
        }
        let selectors: Vec<String> = contents.records.iter().map(|r| r.selector.clone()).collect();
        let at_ms = self.now_ms();
        self.record(Journal::SinkRead {
            at_ms,
            device,
            selectors: selectors.clone(),
            malformed_lines: contents.malformed_lines,
        });
        let held: Vec<Outstanding<'_>> = outstanding
            .iter()
            .map(|&i| {
                let c = self.work.case(i);
                Outstanding {
                    index: i,
                    class: c.class_name(),
                    name: c.name(),
                }
            })
            .collect();
        let split = policy::rerun_from_sink(&selectors, &held);
        for bad in &split.bad {
            tracing::warn!(device, "ignoring a poison-sink selector: {bad}");
        }
        split
    }
}
