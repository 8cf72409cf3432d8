//! `cargo xtask bench recovery`: what a fault costs beyond the unavoidable, and what process
//! isolation costs, on the built-in suite on 2 simulated cards with realistic costs (every init
//! slowed by `--init-delay-ms`, standing for CANN's device init, and the sim's op-execute
//! timeout).
//!
//! Every configuration runs in one invocation, each `--runs` times, round robin so a change of
//! the machine's load spreads over all of them: `pool` clean; `pool` with one `op_timeout`, one
//! `launch_fail`, one `crash`, and one op-timeout whose drain lies and whose force resets fail
//! (`drain=false_negative`, `force_reset_fail=3`: a fresh process), each on card 0's third case
//! launch; one SDMA fault (`sdma_fault@2` on every card: the SDMA class's second copy, on the card
//! that runs the class); `class` and `case` clean.
//!
//! A fault's overhead in a run is that run's wall time minus its round's clean run's; its floor is
//! computed from the same run's measured parts: the time to detect the fault (the op-execute
//! timeout; otherwise the failed attempt's own duration, less the card's recovery inside it: a
//! standalone case's close is part of its attempt), the SDMA handoff waits and every force reset
//! on the card from the fault to the first worker built there after it (as the
//! `sdma_handoff_wait` and `force_reset` events time them, the probes included), that one init
//! (the rebuild after an in-process reset, the fresh process's, or the retried standalone case's:
//! its worker `built` event's `init_ms`), and the retried attempt's own duration. The floor adds
//! up the chain as if nothing ran beside it; the other card goes on meanwhile, so a ratio under 1
//! is common. Every run is judged (at most 1.10 x floor + 50 ms), not the median: a fault's line
//! shows its worst run, with the median ratio beside it.
//!
//! This file owns the configurations and the figures; the runs themselves are `bench_sandbox`'s.

use std::path::Path;
use std::time::Duration;

use cardguard_report::model::{CardEvent, Event, Outcome, RunReport, WorkerAction};
use platform_common::health::HealthEventKind;

use crate::bench_sandbox::{load_average, median_index, ms, RunOut, RunSpec, Sandbox};

/// The settings of one invocation.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Runs of each configuration.
    pub runs: u32,
    /// Every init's delay on both cards.
    pub init_delay_ms: u64,
    /// The sim's op-execute timeout (the scheduler timeout is half of it, at most 250 ms; the
    /// stream-sync bound three times it).
    pub op_timeout_ms: u64,
}

/// One configuration.
#[derive(Debug, Clone, Copy)]
struct Config {
    /// The fault's name on its line, or the isolation mode of a clean run.
    name: &'static str,
    isolation: &'static str,
    /// The fault rules on card 0 (none: clean).
    fault: Option<&'static str>,
}

const CONFIGS: [Config; 8] = [
    Config {
        name: "pool",
        isolation: "pool",
        fault: None,
    },
    Config {
        name: "op_timeout",
        isolation: "pool",
        fault: Some("dev=0:op_timeout@3"),
    },
    Config {
        name: "launch_fail",
        isolation: "pool",
        fault: Some("dev=0:launch_fail@3"),
    },
    Config {
        name: "crash",
        isolation: "pool",
        fault: Some("dev=0:crash@3"),
    },
    Config {
        name: "fresh_process",
        isolation: "pool",
        fault: Some("dev=0:op_timeout@3;dev=0:drain=false_negative;dev=0:force_reset_fail=3"),
    },
    Config {
        name: "sdma",
        isolation: "pool",
        // The second SDMA copy of a card faults: the SDMA class's two cases run on one card, so
        // its second case is the trigger wherever the class runs, and its retry (a third copy
        // there, or a first on the other card) does not fault again.
        fault: Some("dev=*:sdma_fault@2"),
    },
    Config {
        name: "class",
        isolation: "class",
        fault: None,
    },
    Config {
        name: "case",
        isolation: "case",
        fault: None,
    },
];

/// A fault's floor and its parts, in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floor {
    /// Detecting the fault.
    pub detect: f64,
    /// The SDMA handoff waits before the card's force reset (`sdma_handoff_wait` events).
    pub handoff: f64,
    /// Force resets with their probes.
    pub resets: f64,
    /// The one init the chain needs.
    pub init: f64,
    /// The retried attempt.
    pub retry: f64,
}

impl Floor {
    /// The parts together.
    pub fn total(&self) -> f64 {
        self.detect + self.handoff + self.resets + self.init + self.retry
    }
}

/// The target of a fault's overhead: at most 1.10 x its floor plus 50 ms of fixed cost.
pub fn within_target(overhead_ms: f64, floor_ms: f64) -> bool {
    overhead_ms <= 1.10 * floor_ms + 50.0
}

/// Runs every configuration and prints the figures to `out` (the per-run details go to `log`);
/// returns the worst fault ratio.
pub fn recovery(
    exe: &Path,
    s: Settings,
    out: &mut dyn std::io::Write,
    log: &mut dyn std::io::Write,
) -> Result<f64, String> {
    let mut sandbox = Sandbox::new("recovery")?;
    let sched = (s.op_timeout_ms / 2).clamp(1, 250);
    let timeouts = (sched, s.op_timeout_ms, s.op_timeout_ms * 3);
    let mut runs: Vec<Vec<RunOut>> = CONFIGS.iter().map(|_| Vec::new()).collect();
    for round in 0..s.runs {
        for (c, cfg) in CONFIGS.iter().enumerate() {
            let mut plan = format!("dev=*:init_delay_ms={}", s.init_delay_ms);
            if let Some(f) = cfg.fault {
                plan.push(';');
                plan.push_str(f);
            }
            let spec = RunSpec {
                args: [
                    "--arch",
                    "a5",
                    "--devices",
                    "0,1",
                    "--isolation",
                    cfg.isolation,
                    "--faults",
                    &plan,
                ]
                .map(str::to_owned)
                .to_vec(),
                cards: 2,
                timeouts_ms: Some(timeouts),
            };
            let run = sandbox.run(exe, &spec)?;
            let _ = writeln!(
                log,
                "bench: recovery {} run {}: {:.0} ms (load {})",
                cfg.name,
                round + 1,
                ms(run.wall),
                load_average().map_or_else(|| "?".to_owned(), |l| format!("{l:.2}"))
            );
            runs[c].push(run);
        }
    }
    let median = |c: usize| -> &RunOut {
        let walls: Vec<Duration> = runs[c].iter().map(|r| r.wall).collect();
        &runs[c][median_index(&walls).unwrap_or(0)]
    };
    // Every run of a fault is judged against the clean run of its round (round robin: the two ran
    // under about the same load): the worst one counts.
    let mut worst: f64 = 0.0;
    let mut missed: Vec<String> = Vec::new();
    for (c, cfg) in CONFIGS.iter().enumerate().filter(|(_, c)| c.fault.is_some()) {
        let mut judged: Vec<(f64, f64, f64)> = Vec::new();
        for (r, run) in runs[c].iter().enumerate() {
            let floor = floor(cfg.name, run, s.op_timeout_ms as f64)?;
            let overhead = ms(run.wall) - ms(runs[0][r].wall);
            let ratio = overhead / floor.total();
            let _ = writeln!(
                log,
                "bench: {} run {} floor: detect {:.0} + handoff {:.0} + resets {:.0} + init {:.0} + retry {:.0} ms; overhead {overhead:.0} ms, ratio {ratio:.2}",
                cfg.name,
                r + 1,
                floor.detect,
                floor.handoff,
                floor.resets,
                floor.init,
                floor.retry
            );
            if !within_target(overhead, floor.total()) {
                missed.push(format!("{} run {}", cfg.name, r + 1));
            }
            judged.push((ratio, overhead, floor.total()));
        }
        judged.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (ratio, overhead, floor) = judged.last().copied().ok_or("no run")?;
        let median_ratio = judged[judged.len().saturating_sub(1) / 2].0;
        worst = worst.max(ratio);
        let _ = writeln!(
            out,
            "fault {}: overhead {overhead:.0} ms, floor {floor:.0} ms, ratio {ratio:.2} (worst of {} runs; median {median_ratio:.2})",
            cfg.name,
            judged.len()
        );
    }
    let clean = ms(median(0).wall);
    let mut case_x = 1.0;
    for (c, cfg) in CONFIGS.iter().enumerate().filter(|(_, c)| c.fault.is_none()) {
        let wall = ms(median(c).wall);
        let x = wall / clean;
        if cfg.isolation == "case" {
            case_x = x;
        }
        let _ = writeln!(out, "isolation {}: {wall:.0} ms, {x:.2}x of pool", cfg.isolation);
    }
    let verdict = if missed.is_empty() {
        "every run within 1.10 x floor + 50 ms".to_owned()
    } else {
        format!("over 1.10 x floor + 50 ms: {}", missed.join(", "))
    };
    let _ = writeln!(
        out,
        "recovery: worst fault ratio {worst:.2} ({verdict}); case isolation {case_x:.2}x slower than pool"
    );
    Ok(worst)
}

/// The floor of the fault `name` in `run` (see the module docs).
pub fn floor(name: &str, run: &RunOut, op_timeout_ms: f64) -> Result<Floor, String> {
    let trigger = trigger(&run.report).ok_or_else(|| {
        format!(
            "fault {name}: no single case failed once and passed on its retry ({:?})",
            run.report.summary
        )
    })?;
    let first = &trigger.attempts[0];
    let retry = trigger.attempts.last().ok_or("no attempt")?;
    let card = first.device.ok_or("the failed attempt has no card")?;
    let t0 = first.started_ms;
    let timed_out = matches!(name, "op_timeout" | "fresh_process");
    // The chain on the card ends with the first worker built there after the failed attempt ended
    // (the rebuild after an in-process reset, the fresh process's init, or the next standalone
    // case's worker: a standalone attempt's own worker is built before it starts, in its start's
    // millisecond); the retry may run elsewhere first. Its end is when the dispatcher had its
    // verdict: every health event the lane stamped before it is stamped earlier.
    let attempt_end = run
        .journal
        .iter()
        .find_map(|e| match e {
            Event::CaseFinished {
                at_ms,
                id,
                attempt: 1,
                ..
            } if *id == trigger.id => Some(*at_ms),
            _ => None,
        })
        .unwrap_or(t0 + first.duration_ms);
    let (built_ms, init) = run
        .journal
        .iter()
        .find_map(|e| match e {
            Event::Worker {
                at_ms,
                device,
                action: WorkerAction::Built,
                init_ms: Some(init_ms),
                ..
            } if *device == card && *at_ms >= attempt_end => Some((*at_ms, *init_ms)),
            _ => None,
        })
        .ok_or_else(|| format!("fault {name}: no worker was built on card {card} after the fault"))?;
    // The card's recovery from the fault to that build: each SDMA handoff wait and force reset
    // (with its probe), with when it was stamped.
    let steps: Vec<(u64, u64, u64)> = run
        .report
        .devices_health
        .get(&card.to_string())
        .map(|h| h.as_slice())
        .unwrap_or_default()
        .iter()
        // An event the dispatcher filed under the trigger is the fault's even when the lane
        // stamped it before the dispatcher read the case's start (a fault at once, a busy host);
        // one filed under no case, from the attempt's start. A reset of a case that poisons its
        // card on purpose is not the fault's.
        .filter(|h| h.at_ms <= built_ms)
        .filter(|h| match h.case.as_deref() {
            Some(c) => c == trigger.id,
            None => h.at_ms >= t0,
        })
        .filter_map(|h| match &h.event {
            CardEvent::Device(e) => match e.kind {
                HealthEventKind::SdmaHandoffWait { wait_ms, .. } => Some((h.at_ms, wait_ms, 0)),
                HealthEventKind::ForceReset { duration_ms, .. } => Some((h.at_ms, 0, duration_ms)),
                _ => None,
            },
            CardEvent::Runner(_) => None,
        })
        .collect();
    let handoff: u64 = steps.iter().map(|s| s.1).sum();
    let resets: u64 = steps.iter().map(|s| s.2).sum();
    // A standalone case's close is part of its attempt: the recovery inside the failed attempt's
    // own duration is counted once, as recovery, not as detection.
    let inside: u64 = steps
        .iter()
        .filter(|s| s.0 <= attempt_end)
        .map(|s| s.1 + s.2)
        .sum();
    let detect = if timed_out {
        op_timeout_ms
    } else {
        (first.duration_ms.saturating_sub(inside)) as f64
    };
    Ok(Floor {
        detect,
        handoff: handoff as f64,
        resets: resets as f64,
        init: init as f64,
        retry: retry.duration_ms as f64,
    })
}

/// The one case that failed its first attempt and passed a retry.
fn trigger(r: &RunReport) -> Option<&cardguard_report::model::CaseReport> {
    let mut flaky = r.cases.iter().filter(|c| c.outcome == Outcome::Flaky);
    let t = flaky.next()?;
    (flaky.next().is_none() && t.attempts.len() >= 2 && t.attempts[0].outcome.is_failure()).then_some(t)
}
