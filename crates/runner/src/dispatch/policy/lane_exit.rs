//! DESIGN section 5 steps 5 and 7 after every lane exit: where the lane's unfinished work goes
//! (back to the queue, or to a fresh lane from its poison sink), whether the next lane on its card
//! is a fresh process, and whether the card is quarantined; and for a preflight lane (a card whose
//! health record said quarantined, checked before it gets work) whether the card passed.
//!
//! A lane killed by a signal the dispatcher did not send ([`super::blame::infrastructure_kill`])
//! is replaced by a fresh process like any lane that died, but it is no death of the card's: it
//! is a strike of its own kind ([`Strike::InfraKill`]), and the card leaves the run only at that
//! kind's bound, blamed on the host.
//!
//! A decision names the strike an exit is ([`Strike`]); it never reads a count. The state machine
//! counts the strike and asks [`super::strikes::after_strike`] what the new count means.
//!
//! This file owns that decision as a pure function of an [`ExitFacts`] (nextest's dispatcher
//! shape: facts in, a response out). The blame for a death ([`super::blame`]) and the sink's
//! split ([`super::sink_rerun`]) are decided before it; it never spawns, requeues or records
//! anything (the state machine applies the [`ExitDecision`]).

use platform_common::DeviceId;

use super::blame::describe_signal;
use super::quarantine;
use super::strikes::Strike;
use crate::protocol::EXIT_NEEDS_FRESH_PROCESS;
use crate::report::model::LaneStatus;

/// Which kind of lane ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneKind {
    /// A regular lane with a sink, fed from the queue.
    Regular,
    /// A fresh lane without a sink (one bounded pass over a sink's cases).
    Fresh,
    /// The multi-card phase's lane.
    Multi,
    /// A preflight lane: it only builds a worker on its card, probes it and exits (a card whose
    /// health record said quarantined, before it gets work).
    Preflight,
}

/// A card whose worker failed to init in the lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitFailure {
    /// The card (its index in the run).
    pub card: usize,
    /// Its number.
    pub device: DeviceId,
}

/// The facts of one lane exit. A field per fact: later rules (an init timeout, a kill the
/// dispatcher did not send, an isolation mode) add a field here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitFacts {
    /// Which kind of lane.
    pub kind: LaneKind,
    /// How its process ended.
    pub status: LaneStatus,
    /// Its pid.
    pub pid: u32,
    /// Its card.
    pub device: DeviceId,
    /// Cases it had not finished when it ended (the running one included).
    pub unfinished: usize,
    /// Whether the run is closing its lanes (every verdict is in).
    pub finishing: bool,
    /// Cards whose worker failed to init in this lane.
    pub init_failed: Vec<InitFailure>,
    /// Cases its poison sink sends to a fresh lane.
    pub sink_reruns: usize,
    /// Whether the dispatcher ended it because an init exceeded `--init-timeout` (on its own
    /// card; a multi-card lane's slow cards are in `init_failed`).
    pub init_timed_out: bool,
    /// The signal, when the lane was killed from outside (an infrastructure kill).
    pub infrastructure_kill: Option<i32>,
}

impl ExitFacts {
    /// Exit 0 with nothing unfinished. Exit 0 with work unfinished is no clean end: the lane died as
    /// much as a crashed one.
    pub fn clean(&self) -> bool {
        self.status == LaneStatus::Exited(0) && self.unfinished == 0
    }
}

/// What the state machine does after a lane exit. Every variant but [`ExitDecision::Closed`] puts
/// the lane's unfinished cases back in the queue ([`ExitDecision::FreshLane`]: those the sink does
/// not name) and hands out work again. A strike a variant names is counted against the card (a
/// multi-card lane's own: against the multi-card lanes), and its count may take the card out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitDecision {
    /// The run is finishing and the lane closed cleanly: nothing to do.
    Closed,
    /// A preflight lane ended: the card passed, failed (quarantined at the start of the run), or
    /// is checked again (its preflight was killed from outside).
    Preflight(PreflightStep),
    /// The multi-card lane ended: a strike of the multi-card lanes when it died or was killed
    /// from outside, and one per card whose init failed in it.
    Multi {
        /// A death ([`Strike::Death`]) or a kill from outside ([`Strike::InfraKill`]) of a
        /// multi-card lane.
        strike: Option<Strike>,
        /// Per card (index) whose init failed: its [`Strike::MultiInitFailure`].
        init_failed: Vec<(usize, Strike)>,
    },
    /// A fresh lane could not recover its card either: the card is quarantined.
    Quarantine(String),
    /// The lane was ended in an init past `--init-timeout`: its cases go back to the queue
    /// without an attempt, and the card gets this [`Strike::InitTimeout`] (a fresh process next,
    /// or quarantine).
    InitTimeout(Strike),
    /// The sink named cases: they re-run in a fresh lane on the same card, recorded as
    /// `fresh_process` with this reason.
    FreshLane(String),
    /// A lane on the card starts again when work is queued.
    Requeue {
        /// Set when the exit was unclean: the next lane is a fresh process, with this reason.
        replacement: Option<String>,
        /// The strike against the card: a death ([`Strike::Death`]), or a kill from outside
        /// ([`Strike::InfraKill`], never a death).
        strike: Option<Strike>,
    },
}

/// What a preflight lane's exit says of its card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreflightStep {
    /// Init and probe passed: the card's record is cleared and the card gets work.
    Passed,
    /// It failed (the reason says how): the card is quarantined at once and its record kept.
    Failed(String),
    /// It was killed from outside: a strike ([`Strike::InfraKill`]) against the card, which is
    /// checked again by a new preflight lane unless the count takes it out (blamed on the host).
    Killed(Strike),
}

/// Decides what follows a lane exit (see [`ExitDecision`]).
pub fn after_exit(f: &ExitFacts) -> ExitDecision {
    let clean = f.clean();
    if f.kind == LaneKind::Preflight {
        return ExitDecision::Preflight(after_preflight(f));
    }
    if f.finishing && clean {
        return ExitDecision::Closed;
    }
    let (status, pid) = (f.status, f.pid);
    if f.init_timed_out && f.kind != LaneKind::Multi {
        return ExitDecision::InitTimeout(Strike::InitTimeout {
            pid,
            fresh: f.kind == LaneKind::Fresh,
        });
    }
    match f.kind {
        LaneKind::Multi => ExitDecision::Multi {
            strike: match f.infrastructure_kill {
                Some(signal) => Some(Strike::InfraKill { signal }),
                None => (!clean).then_some(Strike::Death),
            },
            init_failed: f
                .init_failed
                .iter()
                .map(|c| (c.card, Strike::MultiInitFailure { pid, status }))
                .collect(),
        },
        LaneKind::Fresh
            if status == LaneStatus::Exited(EXIT_NEEDS_FRESH_PROCESS) || !f.init_failed.is_empty() =>
        {
            ExitDecision::Quarantine(quarantine::fresh_lane_failed(f.device, status))
        }
        _ if f.sink_reruns > 0 => ExitDecision::FreshLane(format!(
            "fresh process re-runs {} case(s) from the poison sink of lane pid {pid} ({status})",
            f.sink_reruns
        )),
        _ if clean => ExitDecision::Requeue {
            replacement: None,
            strike: None,
        },
        _ if f.infrastructure_kill.is_some() => {
            let signal = f.infrastructure_kill.unwrap_or_default();
            ExitDecision::Requeue {
                replacement: Some(format!(
                    "replacement lane: lane pid {pid} was killed by {}, which the dispatcher did \
                     not send",
                    describe_signal(signal)
                )),
                strike: Some(Strike::InfraKill { signal }),
            }
        }
        _ => {
            let unfinished = if status == LaneStatus::Exited(0) {
                format!(" with {} case(s) unfinished", f.unfinished)
            } else {
                String::new()
            };
            ExitDecision::Requeue {
                replacement: Some(format!(
                    "replacement lane: lane pid {pid} ended ({status}){unfinished}"
                )),
                strike: Some(Strike::Death),
            }
        }
    }
}

/// A preflight lane's exit (see [`PreflightStep`]): it passed when it exited 0 with no failed or
/// timed-out init.
fn after_preflight(f: &ExitFacts) -> PreflightStep {
    if let Some(signal) = f.infrastructure_kill {
        return PreflightStep::Killed(Strike::InfraKill { signal });
    }
    if f.init_timed_out {
        return PreflightStep::Failed(format!(
            "its init did not finish within --init-timeout; lane pid {} was ended",
            f.pid
        ));
    }
    if !f.init_failed.is_empty() {
        return PreflightStep::Failed(format!("its init or probe failed in lane pid {}", f.pid));
    }
    if f.status != LaneStatus::Exited(0) {
        return PreflightStep::Failed(format!("lane pid {} ended ({})", f.pid, f.status));
    }
    PreflightStep::Passed
}

#[cfg(test)]
mod tests {
    use super::*;
    use LaneKind as K;

    const NEEDS_FRESH: LaneStatus = LaneStatus::Exited(EXIT_NEEDS_FRESH_PROCESS);
    const EXIT0: LaneStatus = LaneStatus::Exited(0);
    const SEGV: LaneStatus = LaneStatus::Signaled(11);
    const KILL: LaneStatus = LaneStatus::Signaled(9);

    fn facts(kind: LaneKind, status: LaneStatus) -> ExitFacts {
        ExitFacts {
            kind,
            status,
            pid: 40,
            device: 1,
            unfinished: 0,
            finishing: false,
            init_failed: Vec::new(),
            sink_reruns: 0,
            init_timed_out: false,
            infrastructure_kill: None,
        }
    }

    fn init_failure() -> Vec<InitFailure> {
        vec![InitFailure { card: 1, device: 1 }]
    }

    /// The short name of a decision, for the table.
    fn short(d: &ExitDecision) -> &'static str {
        match d {
            ExitDecision::Closed => "closed",
            ExitDecision::Preflight(PreflightStep::Passed) => "preflight passed",
            ExitDecision::Preflight(PreflightStep::Failed(_)) => "preflight failed",
            ExitDecision::Preflight(PreflightStep::Killed(_)) => "preflight killed",
            ExitDecision::Multi {
                strike: Some(Strike::InfraKill { .. }),
                ..
            } => "multi, killed",
            ExitDecision::Multi { strike: Some(_), .. } => "multi, died",
            ExitDecision::Multi { strike: None, .. } => "multi",
            ExitDecision::Quarantine(_) => "quarantine",
            ExitDecision::InitTimeout(Strike::InitTimeout { fresh: true, .. }) => {
                "init timeout of a fresh lane"
            }
            ExitDecision::InitTimeout(_) => "init timeout",
            ExitDecision::FreshLane(_) => "fresh lane",
            ExitDecision::Requeue {
                strike: Some(Strike::InfraKill { .. }),
                ..
            } => "requeue, fresh next, no death",
            ExitDecision::Requeue { strike: Some(_), .. } => "requeue, fresh next",
            ExitDecision::Requeue { .. } => "requeue",
        }
    }

    /// Every row of steps 5 and 7 that follows a lane exit (and the lane-death rules of docs/guide/running.md).
    /// What the count of a strike means is `strikes`' table; whole sequences of exits are the
    /// state machine's scenarios.
    #[test]
    fn lane_exit_table() {
        #[rustfmt::skip]
        let rows: Vec<(&str, ExitFacts, &str)> = vec![
            // what,                                                  facts,                                                       then
            ("clean close at the end of the run",
                ExitFacts { finishing: true, ..facts(K::Regular, EXIT0) }, "closed"),
            ("clean exit mid-run (stdin closed for the multi-card phase)",
                facts(K::Regular, EXIT0), "requeue"),
            ("exit 0 with work unfinished died as much as a crash",
                ExitFacts { unfinished: 2, ..facts(K::Regular, EXIT0) }, "requeue, fresh next"),
            ("exit 0 with work unfinished, even while finishing",
                ExitFacts { unfinished: 1, finishing: true, ..facts(K::Regular, EXIT0) }, "requeue, fresh next"),
            ("a crash without a sink: replacement lane, a death counted",
                ExitFacts { unfinished: 3, ..facts(K::Regular, SEGV) }, "requeue, fresh next"),
            ("escalation with a sink: its cases re-run in a fresh lane",
                ExitFacts { unfinished: 3, sink_reruns: 3, ..facts(K::Regular, NEEDS_FRESH) }, "fresh lane"),
            ("a crash while the sink was written: the sink still re-runs",
                ExitFacts { unfinished: 3, sink_reruns: 1, ..facts(K::Regular, SEGV) }, "fresh lane"),
            ("a regular lane's init failure goes through its sink",
                ExitFacts { unfinished: 2, sink_reruns: 2, init_failed: init_failure(), ..facts(K::Regular, NEEDS_FRESH) }, "fresh lane"),
            ("escalation with an empty sink: a replacement lane",
                ExitFacts { unfinished: 2, ..facts(K::Regular, NEEDS_FRESH) }, "requeue, fresh next"),
            ("a fresh lane that escalates quarantines its card",
                ExitFacts { unfinished: 2, ..facts(K::Fresh, NEEDS_FRESH) }, "quarantine"),
            ("a fresh lane that cannot init quarantines its card",
                ExitFacts { unfinished: 2, init_failed: init_failure(), ..facts(K::Fresh, NEEDS_FRESH) }, "quarantine"),
            ("a fresh lane that crashed is replaced like any lane",
                ExitFacts { unfinished: 1, ..facts(K::Fresh, SEGV) }, "requeue, fresh next"),
            ("a fresh lane done with its pass",
                ExitFacts { finishing: false, ..facts(K::Fresh, EXIT0) }, "requeue"),
            ("the multi-card lane closes cleanly",
                facts(K::Multi, EXIT0), "multi"),
            ("the multi-card lane died",
                ExitFacts { unfinished: 1, ..facts(K::Multi, SEGV) }, "multi, died"),
            ("an init past --init-timeout: the cases go back, a strike for the card",
                ExitFacts { unfinished: 3, init_timed_out: true, ..facts(K::Regular, LaneStatus::Signaled(15)) }, "init timeout"),
            ("even with a sink: the hung lane wrote nothing, its cases go back",
                ExitFacts { unfinished: 3, sink_reruns: 1, init_timed_out: true, ..facts(K::Regular, LaneStatus::Signaled(9)) }, "init timeout"),
            ("a sink's fresh lane timed out in init",
                ExitFacts { unfinished: 1, init_timed_out: true, ..facts(K::Fresh, LaneStatus::Signaled(15)) }, "init timeout of a fresh lane"),
            ("a multi-card lane's init timeout is its cards' init failure",
                ExitFacts { unfinished: 1, init_timed_out: true, init_failed: init_failure(), ..facts(K::Multi, LaneStatus::Signaled(15)) }, "multi, died"),
            ("a SIGKILL from outside: a fresh process next, no death counted",
                ExitFacts { unfinished: 2, infrastructure_kill: Some(9), ..facts(K::Regular, KILL) }, "requeue, fresh next, no death"),
            ("a killed lane's sink still re-runs",
                ExitFacts { unfinished: 2, sink_reruns: 1, infrastructure_kill: Some(9), ..facts(K::Regular, KILL) }, "fresh lane"),
            ("a killed multi-card lane is no death",
                ExitFacts { unfinished: 1, infrastructure_kill: Some(15), ..facts(K::Multi, LaneStatus::Signaled(15)) }, "multi, killed"),
            ("a preflight that passed",
                facts(K::Preflight, EXIT0), "preflight passed"),
            ("a preflight that passed while the run finishes",
                ExitFacts { finishing: true, ..facts(K::Preflight, EXIT0) }, "preflight passed"),
            ("a preflight whose init failed",
                ExitFacts { init_failed: init_failure(), ..facts(K::Preflight, NEEDS_FRESH) }, "preflight failed"),
            ("a preflight that crashed",
                facts(K::Preflight, SEGV), "preflight failed"),
            ("a preflight past --init-timeout",
                ExitFacts { init_timed_out: true, ..facts(K::Preflight, LaneStatus::Signaled(15)) }, "preflight failed"),
            ("a preflight killed from outside: a strike, checked again",
                ExitFacts { infrastructure_kill: Some(9), ..facts(K::Preflight, KILL) }, "preflight killed"),
        ];
        for (what, f, want) in rows {
            let d = after_exit(&f);
            assert_eq!(short(&d), want, "{what}: {d:?}");
        }
    }

    #[test]
    fn a_multi_card_init_failure_is_the_cards_own() {
        let f = ExitFacts {
            unfinished: 1,
            init_failed: init_failure(),
            ..facts(K::Multi, NEEDS_FRESH)
        };
        let ExitDecision::Multi {
            strike: Some(Strike::Death),
            init_failed,
        } = after_exit(&f)
        else {
            panic!("multi");
        };
        assert_eq!(
            init_failed,
            [(
                1,
                Strike::MultiInitFailure {
                    pid: 40,
                    status: NEEDS_FRESH
                }
            )]
        );
    }

    #[test]
    fn the_reasons_say_what_happened() {
        let d = after_exit(&ExitFacts {
            unfinished: 2,
            ..facts(K::Regular, EXIT0)
        });
        let ExitDecision::Requeue {
            replacement: Some(r), ..
        } = d
        else {
            panic!("{d:?}");
        };
        assert_eq!(
            r,
            "replacement lane: lane pid 40 ended (exit 0) with 2 case(s) unfinished"
        );
        let d = after_exit(&ExitFacts {
            unfinished: 3,
            sink_reruns: 3,
            ..facts(K::Regular, NEEDS_FRESH)
        });
        assert_eq!(
            d,
            ExitDecision::FreshLane(
                "fresh process re-runs 3 case(s) from the poison sink of lane pid 40 (exit 75)".into()
            )
        );
    }
}
