//! `cargo xtask bench makespan`: a run's wall time against its lower bound (issue 23), with
//! `--order suite` and `--order smart`, on sleeping host-code cases (the suite binary's hidden
//! `--suite makespan`: durations drawn from a seed, log-normal around 40 ms) on simulated cards
//! whose every init sleeps `--init-delay-ms` (standing for a chip worker's init).
//!
//! Two workloads: 240 cases in 24 classes over 3 runtimes on 4 cards; 480 cases in 48 classes
//! over 3 runtimes, one case in ten needing two cards, on 8 cards. Each workload runs with
//! `--order suite` first (on a fresh history, which it fills), then `--order smart` on that warm
//! history, `--runs` times each (the median run by wall time is reported).
//!
//! The fleet: workload 1 in four partitions, by `duration` and by `hash`, each on a host of one
//! card with its own copy of the first workload's warm history and `--order smart`; the slowest
//! partition's makespan against the ideal share (the four makespans' mean).
//!
//! Each run's figures come from its own files: the makespan is the dispatch window (first
//! assignment to last verdict, `--stats-out`); the lower bound is max((the passing attempts'
//! durations, a case that needs two cards counted twice (the suite's own listing, `--list
//! --format json`, says how many each needs), plus one init of every runtime) / cards, the
//! longest case plus its runtime's init), with each runtime's init the median of the run's
//! worker `built` events' `init_ms`; the inits paid are those `built` events.
//!
//! This file owns the configurations and the figures; the runs are `bench_sandbox`'s.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use cardguard_report::model::{AttemptOutcome, Event, WorkerAction};

use crate::bench_sandbox::{load_average, median_index, RunOut, RunSpec, Sandbox};

/// The settings of one invocation.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Runs of each configuration.
    pub runs: u32,
    /// Every init's delay.
    pub init_delay_ms: u64,
    /// The seed of the durations.
    pub seed: u64,
}

/// One workload (the suite binary's `bench_suite::makespan` builds its cases; xtask never links
/// the runner).
#[derive(Debug, Clone, Copy)]
struct Workload {
    number: u32,
    cards: u32,
}

const WORKLOADS: [Workload; 2] = [Workload { number: 1, cards: 4 }, Workload { number: 2, cards: 8 }];

/// One run's figures.
#[derive(Debug, Clone, Copy)]
struct Figures {
    makespan_ms: f64,
    lower_bound_ms: f64,
    inits: usize,
}

impl Figures {
    fn ratio(&self) -> f64 {
        self.makespan_ms / self.lower_bound_ms.max(1.0)
    }
}

fn figures(run: &RunOut, w: Workload, cards_of: &BTreeMap<String, u64>) -> Result<Figures, String> {
    let window_us = run.stats["window_us"]
        .as_u64()
        .ok_or("the stats have no window_us")?;
    let mut inits: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut built = 0;
    for e in &run.journal {
        if let Event::Worker {
            runtime,
            action: WorkerAction::Built,
            init_ms,
            ..
        } = e
        {
            built += 1;
            if let Some(ms) = init_ms {
                inits.entry(runtime.as_str()).or_default().push(*ms);
            }
        }
    }
    let init_of = |rt: &str| -> u64 {
        inits.get(rt).map_or(0, |v| {
            let mut v = v.clone();
            v.sort_unstable();
            v[(v.len() - 1) / 2]
        })
    };
    let mut work = 0u64;
    let mut longest = 0u64;
    let mut runtimes: Vec<&str> = Vec::new();
    for c in &run.report.cases {
        let Some(a) = c.attempts.iter().find(|a| a.outcome == AttemptOutcome::Passed) else {
            continue;
        };
        let cards = cards_of.get(&c.id).copied().unwrap_or(1).max(1);
        work += a.duration_ms * cards;
        longest = longest.max(a.duration_ms + init_of(&c.runtime));
        if !runtimes.contains(&c.runtime.as_str()) {
            runtimes.push(&c.runtime);
        }
    }
    let all_inits: u64 = runtimes.iter().map(|r| init_of(r)).sum();
    let lb = ((work + all_inits) as f64 / f64::from(w.cards)).max(longest as f64);
    Ok(Figures {
        makespan_ms: window_us as f64 / 1000.0,
        lower_bound_ms: lb,
        inits: built,
    })
}

/// Runs the benchmark; prints its lines to `out`, progress to `log`. Returns the smart ratios of
/// both workloads.
pub fn makespan(
    exe: &Path,
    s: Settings,
    out: &mut dyn std::io::Write,
    log: &mut dyn std::io::Write,
) -> Result<[(f64, f64); 2], String> {
    let mut sandbox = Sandbox::new("makespan")?;
    let histories = tempfile::tempdir().map_err(|e| format!("cannot create a history dir: {e}"))?;
    let w = |r: std::io::Result<()>| r.map_err(|e| e.to_string());
    w(writeln!(
        out,
        "makespan: seed {}, init {} ms, {} run(s) each, load {}",
        s.seed,
        s.init_delay_ms,
        s.runs,
        load_average().map_or("unknown".into(), |l| format!("{l:.2}"))
    ))?;
    let mut ratios = [(0.0, 0.0); 2];
    for (i, wl) in WORKLOADS.into_iter().enumerate() {
        let history = histories.path().join(format!("history-{}.json", wl.number));
        let cards_of = cards_needed(exe, s, wl)?;
        let mut by_order = Vec::new();
        for order in ["suite", "smart"] {
            let mut runs: Vec<Figures> = Vec::new();
            for r in 0..s.runs {
                w(writeln!(
                    log,
                    "workload {} --order {order}: run {}",
                    wl.number,
                    r + 1
                ))?;
                let spec = RunSpec {
                    args: run_args(s, wl.number, wl.cards, order, &history, None),
                    cards: wl.cards,
                    timeouts_ms: None,
                };
                let run = sandbox.run(exe, &spec)?;
                if run.report.summary.passed != run.report.cases.len() as u64 {
                    return Err(format!(
                        "workload {} --order {order}: not every case passed",
                        wl.number
                    ));
                }
                runs.push(figures(&run, wl, &cards_of)?);
            }
            let walls: Vec<Duration> = runs
                .iter()
                .map(|f| Duration::from_secs_f64(f.makespan_ms / 1000.0))
                .collect();
            let m = runs[median_index(&walls).ok_or("no run")?];
            w(writeln!(
                out,
                "workload {} ({} cards) --order {order}: makespan {:.0} ms, lower bound {:.0} ms, \
                 ratio {:.3}, inits {}",
                wl.number,
                wl.cards,
                m.makespan_ms,
                m.lower_bound_ms,
                m.ratio(),
                m.inits
            ))?;
            by_order.push(m.ratio());
        }
        ratios[i] = (by_order[1], by_order[0]);
    }
    let history = histories
        .path()
        .join(format!("history-{}.json", WORKLOADS[0].number));
    let mut fleet = [0.0; 2];
    for (i, by) in ["duration", "hash"].into_iter().enumerate() {
        let f = fleet_partitions(exe, s, &mut sandbox, &history, by, log)?;
        w(writeln!(
            out,
            "fleet (workload 1, {FLEET_HOSTS} partitions by {by}, 1 card each): slowest {:.0} ms, \
             ideal share {:.0} ms, ratio {:.3}",
            f.0,
            f.1,
            f.0 / f.1.max(1.0)
        ))?;
        fleet[i] = f.0 / f.1.max(1.0);
    }
    w(writeln!(
        out,
        "makespan: smart {:.3} / {:.3} of lower bound, suite {:.3} / {:.3}; fleet duration {:.3}, hash {:.3}",
        ratios[0].0, ratios[1].0, ratios[0].1, ratios[1].1, fleet[0], fleet[1]
    ))?;
    Ok(ratios)
}

/// The suite binary's arguments for one run of workload `number` on `cards` cards with
/// `--order order`, reading and writing `history`, and `--partition` when given.
fn run_args(
    s: Settings,
    number: u32,
    cards: u32,
    order: &str,
    history: &Path,
    partition: Option<&str>,
) -> Vec<String> {
    let mut args = suite_args(s, number);
    args.extend(
        [
            "--device-num",
            &cards.to_string(),
            "--faults",
            &format!("dev=*:init_delay_ms={}", s.init_delay_ms),
            "--order",
            order,
            "--history",
            &history.display().to_string(),
        ]
        .map(String::from),
    );
    if let Some(p) = partition {
        args.extend(["--partition".to_owned(), p.to_owned()]);
    }
    args
}

/// The suite binary's arguments that select workload `number`'s cases (of `s.seed`).
fn suite_args(s: Settings, number: u32) -> Vec<String> {
    [
        "--arch",
        "a5",
        "--suite",
        "makespan",
        "--bench-seed",
        &s.seed.to_string(),
        "--bench-workload",
        &number.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// The cards each case of workload `wl` needs, by id, from the suite binary's own listing
/// (`--list --format json`).
fn cards_needed(exe: &Path, s: Settings, wl: Workload) -> Result<BTreeMap<String, u64>, String> {
    let out = std::process::Command::new(exe)
        .args(["--platform", "sim", "--no-config", "--list", "--format", "json"])
        .args(suite_args(s, wl.number))
        .env("ONBOARD_SIM_CARDS", wl.cards.to_string())
        .env_remove("ONBOARD_SIM_FAULTS")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "listing workload {} failed ({}): {}",
            wl.number,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut cards = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("a bad listing line {line:?}: {e}"))?;
        let (Some(id), Some(n)) = (v["id"].as_str(), v["devices"].as_u64()) else {
            return Err(format!("a listing line without id or devices: {line}"));
        };
        cards.insert(id.to_owned(), n);
    }
    Ok(cards)
}

/// The fleet's hosts: partitions of workload 1.
const FLEET_HOSTS: u32 = 4;

/// Workload 1 in [`FLEET_HOSTS`] partitions `by` (`hash` or `duration`), each on a host of one
/// card with its own copy of the warm `history` (a run writes back the history it reads), with
/// `--order smart`: (the slowest partition's makespan, the ideal share: the partitions' makespans
/// added up over their count), in ms.
fn fleet_partitions(
    exe: &Path,
    s: Settings,
    sandbox: &mut Sandbox,
    history: &Path,
    by: &str,
    log: &mut dyn std::io::Write,
) -> Result<(f64, f64), String> {
    let copies = tempfile::tempdir().map_err(|e| format!("cannot create a history dir: {e}"))?;
    let mut walls = Vec::new();
    for k in 1..=FLEET_HOSTS {
        writeln!(log, "fleet --partition {by}:{k}/{FLEET_HOSTS}").map_err(|e| e.to_string())?;
        let copy = copies.path().join(format!("history-{k}.json"));
        std::fs::copy(history, &copy).map_err(|e| format!("cannot copy {}: {e}", history.display()))?;
        let partition = format!("{by}:{k}/{FLEET_HOSTS}");
        let spec = RunSpec {
            args: run_args(s, 1, 1, "smart", &copy, Some(&partition)),
            cards: 1,
            timeouts_ms: None,
        };
        let run = sandbox.run(exe, &spec)?;
        if run.report.summary.passed != run.report.cases.len() as u64 || run.report.cases.is_empty() {
            return Err(format!(
                "fleet --partition {by}:{k}/{FLEET_HOSTS}: not every case passed, or none ran"
            ));
        }
        let window_us = run.stats["window_us"]
            .as_u64()
            .ok_or("the stats have no window_us")?;
        walls.push(window_us as f64 / 1000.0);
    }
    let slowest = walls.iter().copied().fold(0.0, f64::max);
    let ideal = walls.iter().sum::<f64>() / f64::from(FLEET_HOSTS);
    Ok((slowest, ideal))
}
