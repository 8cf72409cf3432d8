//! The event loop's handling of a lane's exit, for any reason (DESIGN section 5 steps 5 to 7): the
//! blamed attempt, the poison sink, the fresh lane, the requeue, the quarantine; and the end of
//! cases no healthy card is left for.
//!
//! This file gathers the facts of the exit (an infrastructure kill among them: a signal the
//! dispatcher did not send), asks [`super::policy`] (`blame`, `sink_rerun`, `lane_exit`,
//! `quarantine`) and applies the answers (a preflight's through `card_memory`). It reads and
//! deletes the sink file (the process side); it decides nothing itself.

use std::time::Instant;

use platform_common::DeviceId;

use super::event_loop::Dispatcher;
use super::on_lane::AttemptEnd;
use super::policy::{
    self, Blamed, DeathFacts, ExitDecision, ExitFacts, InitFailure, InitTimeoutStep, MultiInitStep,
    Outstanding,
};
use super::state::Start;
use crate::report::model::{Event, LaneStatus};
use crate::sink::Sink;

impl Dispatcher {
    pub(super) fn on_exit(&mut self, lane: usize, status: LaneStatus) {
        self.flush_outside_lines(lane);
        let l = &mut self.lanes[lane];
        l.alive = false;
        l.proc_.close();
        let card = l.card;
        let pid = l.proc_.pid;
        self.live.remove(pid);
        let kind = l.kind;
        // A lane that dies while its hung case is diagnosed was being ended for the timeout.
        let kill = l
            .kill
            .take()
            .map(|k| k.reason)
            .or(l.diag.take().map(|d| d.reason));
        let mut init_failed = std::mem::take(&mut l.init_failed);
        let init_timed_out = std::mem::take(&mut l.init_timed_out);
        let running = l.running.take();
        let heard = l.heard;
        let sink = l.sink.take();
        let unfinished = usize::from(running.is_some()) + l.outstanding.len()
            - running.map_or(0, |(i, _)| usize::from(l.outstanding.contains(&i)));
        if self.cards[card].lane == Some(lane) {
            self.cards[card].lane = None;
        }
        let device = self.cards[card].device;
        let at_ms = self.now_ms();
        self.record(Event::LaneExited {
            at_ms,
            device,
            pid,
            status,
        });
        if self.interrupted.is_some() {
            // The run is ending: nobody is blamed, nothing is retried, no lane starts; the sink
            // is removed (its cases are skipped with the others).
            if let Some(sink) = sink {
                sink.take();
            }
            self.lanes[lane].outstanding.clear();
            self.lanes[lane].batches.clear();
            return;
        }

        // Step 6: who pays for the death (a kill from outside is the infrastructure's).
        let infrastructure_kill = policy::infrastructure_kill(status, kill);
        let next = self.lanes[lane]
            .outstanding
            .front()
            .map(|&i| (i, heard.elapsed()));
        let own = running.and_then(|(i, _)| self.work.case(i).timeout);
        let blamed = policy::blame(&DeathFacts {
            status,
            pid,
            kill,
            running: running.map(|(i, since)| (i, since.elapsed())),
            next,
            case_timeout: policy::case_limit(own, self.settings.case_timeout),
            own_timeout: own.is_some(),
        });
        if let Some(b) = blamed {
            self.lanes[lane].take_outstanding(b.case);
            let duration_ms = u64::try_from(b.duration.as_millis()).unwrap_or(u64::MAX);
            // What the lane wrote since the last boundary: the running case's output (all of it:
            // the exit comes after the lane's last bytes), or what it wrote outside a case before
            // the watchdog ended it.
            let end = AttemptEnd {
                outcome: b.outcome,
                duration_ms,
                error: Some(b.error),
                output: self.lanes[lane].capture.take(),
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
            Some(sink) => self.read_sink(device, sink, &outstanding),
            None => policy::SinkRerun {
                requeue: outstanding.clone(),
                ..Default::default()
            },
        };

        // Steps 5 and 7: what follows. A multi-card lane's init timeout is its cards' init failure.
        let own_init_timed_out = init_timed_out.contains(&card);
        if kind == policy::LaneKind::Multi {
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
                    failed_before: self.cards[c].multi_init_failures,
                })
                .collect(),
            sink_reruns: split.fresh.len(),
            deaths_before: self.cards[card].deaths,
            init_timed_out: own_init_timed_out,
            init_timeouts_before: self.cards[card].init_timeouts,
            infrastructure_kill,
            infra_kills_before: match kind {
                policy::LaneKind::Multi => self.multi_infra_kills,
                _ => self.cards[card].infra_kills,
            },
        };
        match policy::after_exit(&facts) {
            ExitDecision::Closed => return,
            ExitDecision::Preflight(step) => {
                // A preflight lane is never given work; should it hold any, it goes back.
                self.work.requeue(&outstanding);
                self.preflight_ended(card, pid, step);
            }
            ExitDecision::Multi {
                died,
                infra_kill,
                cards,
            } => {
                self.work.requeue(&outstanding);
                if died {
                    self.multi_deaths += 1;
                }
                if infra_kill {
                    self.multi_infra_kills += 1;
                }
                for (c, step) in cards {
                    match step {
                        MultiInitStep::Quarantine(reason) => self.quarantine(c, &reason),
                        MultiInitStep::FreshNext(reason) => {
                            self.cards[c].multi_init_failures += 1;
                            self.cards[c].replacement = Some(reason);
                        }
                    }
                }
            }
            ExitDecision::Quarantine(reason) => {
                self.work.requeue(&outstanding);
                self.quarantine(card, &reason);
            }
            ExitDecision::InitTimeout(step) => {
                self.work.requeue(&outstanding);
                match step {
                    InitTimeoutStep::FreshNext(reason) => {
                        self.cards[card].init_timeouts += 1;
                        self.cards[card].replacement = Some(reason);
                    }
                    InitTimeoutStep::Quarantine(reason) => self.quarantine(card, &reason),
                }
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
            ExitDecision::Requeue {
                replacement,
                death,
                infra_kill,
                quarantine,
            } => {
                self.work.requeue(&outstanding);
                if replacement.is_some() {
                    self.cards[card].replacement = replacement;
                }
                if death {
                    self.cards[card].deaths += 1;
                }
                if infra_kill {
                    self.cards[card].infra_kills += 1;
                }
                match quarantine {
                    Some((reason, Blamed::Card)) => self.quarantine(card, &reason),
                    Some((reason, Blamed::Host)) => self.quarantine_host(card, &reason),
                    None => {}
                }
            }
        }
        self.refill_all();
    }

    /// Reads and deletes a dead lane's sink (journal: `sink_read`) and splits its unfinished cases
    /// between a fresh lane and the queue.
    fn read_sink(&mut self, device: DeviceId, sink: Sink, outstanding: &[usize]) -> policy::SinkRerun {
        let contents = sink.take();
        if !contents.malformed_lines.is_empty() {
            tracing::warn!(
                device,
                lines = ?contents.malformed_lines,
                "skipped malformed poison-sink lines"
            );
        }
        let selectors: Vec<String> = contents.records.iter().map(|r| r.selector.clone()).collect();
        let at_ms = self.now_ms();
        self.record(Event::SinkRead {
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

    /// Every card is quarantined: every open case ends with its verdict.
    pub(super) fn abandon_all(&mut self) {
        let devices: Vec<_> = self.cards.iter().map(|c| c.device).collect();
        let reason = policy::quarantine::no_healthy_card(&devices);
        self.work.clear_queue();
        let open = self.work.open_cases();
        self.abandon(open, &reason);
    }

    /// Ends `cases` without running them: each gets its verdict (failed, class infrastructure)
    /// with `reason`, so nothing is lost.
    pub(super) fn abandon(&mut self, cases: impl IntoIterator<Item = usize>, reason: &str) {
        for i in cases {
            let id = self.work.case(i).id.clone();
            let at_ms = self.now_ms();
            self.record(Event::CaseAbandoned {
                at_ms,
                id,
                reason: reason.to_owned(),
            });
            self.work.finish(i);
        }
        self.last_verdict = Some(Instant::now());
    }
}
