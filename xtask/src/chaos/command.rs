//! `cargo xtask chaos`: the command line, the loop over plans, and what it prints.
//!
//! This module owns the chaos flow: build the suite binary (debug, as `cargo xtask onboard`), ask
//! it which cases each arch selects, draw `--plans` plans from the seed, run each once (with a lane
//! kill under `--kill`), check its report, print one line per plan and, for a plan that broke an
//! invariant, the plan, the seed, each invariant and the kept report dir; the last line is
//! `chaos: <held>/<N> plans held every invariant (seed S)`. It never draws, runs or judges a plan
//! itself (`plan`, `run`, `check`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use platform_common::Arch;
use serde_json::Value;

use super::check::{check, Facts, Violation};
use super::plan::{Plan, BUILTIN_LAUNCHES, PYTEST_LAUNCHES};
use super::run::{list_cases, run_plan, CaseList, Kill, PlanRun, RunError, Target};
use crate::onboard::{build_suite, target_dir, workspace_root};

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many random fault plans to run.
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..))]
    plans: u32,
    /// The seed of the plans [default: random, printed].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// SIGKILL one lane of each run at a random moment.
    #[arg(long)]
    kill: bool,
    /// Print the plans of the seed and the faults they use, without running them.
    #[arg(long)]
    dry_run: bool,
    /// The suite the plans run: the built-in one (the suite binary on simulated cards), or the
    /// example pytest suite through `cardguard pytest` on libsim_acl.so (the interpreter is
    /// CARDGUARD_PYTHON, else python3, with pytest-cardguard installed).
    #[arg(long, value_enum, default_value = "builtin")]
    suite: SuiteArg,
}

/// `--suite`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SuiteArg {
    /// The built-in suite.
    Builtin,
    /// `examples/pytest-suite` in pytest lanes.
    Pytest,
}

/// What a chaos session is given.
#[derive(Debug, Clone)]
pub struct Settings {
    /// What the plans run.
    pub target: Target,
    /// Plans to run.
    pub plans: u32,
    /// Their seed.
    pub seed: u64,
    /// Kill one lane per run.
    pub kill: bool,
    /// Where the runs' directories go (a run that broke an invariant keeps its own).
    pub work: PathBuf,
}

/// How a session went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Plans that held every invariant.
    pub held: u32,
    /// Plans run.
    pub plans: u32,
    /// The seed.
    pub seed: u64,
    /// Per invariant, the plans that broke it.
    pub broken: BTreeMap<&'static str, BTreeSet<usize>>,
}

impl Summary {
    /// The last line.
    pub fn last_line(&self) -> String {
        format!(
            "chaos: {}/{} plans held every invariant (seed {})",
            self.held, self.plans, self.seed
        )
    }
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    let seed = args.seed.unwrap_or_else(rand::random);
    if args.dry_run {
        let mut out = std::io::stdout().lock();
        let launches = match args.suite {
            SuiteArg::Builtin => BUILTIN_LAUNCHES,
            SuiteArg::Pytest => PYTEST_LAUNCHES,
        };
        dry_run(args.plans, seed, launches, &mut out);
        return ExitCode::SUCCESS;
    }
    let built = match args.suite {
        SuiteArg::Builtin => build_suite(false).map(Target::suite),
        SuiteArg::Pytest => pytest_target(),
    };
    let target = match built {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: chaos: {e}");
            return ExitCode::from(2);
        }
    };
    let settings = Settings {
        target,
        plans: args.plans,
        seed,
        kill: args.kill,
        work: target_dir().join("chaos"),
    };
    let mut out = std::io::stdout().lock();
    match chaos(&settings, &mut out) {
        Ok(summary) if summary.held == summary.plans => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: chaos: {e}");
            ExitCode::from(2)
        }
    }
}

/// `cardguard pytest` over `examples/pytest-suite` on `libsim_acl.so`: builds the `cardguard`
/// binary and the library (debug).
fn pytest_target() -> Result<Target, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(workspace_root())
        .args(["build", "--quiet", "-p", "cargo-cardguard", "-p", "sim-acl"])
        .status()
        .map_err(|e| format!("cannot run cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("building cardguard and libsim_acl.so failed ({status})"));
    }
    let debug = target_dir().join("debug");
    let python = std::env::var_os("CARDGUARD_PYTHON").unwrap_or_else(|| "python3".into());
    Ok(Target {
        exe: debug.join("cardguard"),
        pre: vec!["pytest".into()],
        post: vec!["--".into(), ".".into()],
        platform: "onboard",
        env: vec![
            ("ONBOARD_ACL_LIB".into(), debug.join("libsim_acl.so").into()),
            ("CARDGUARD_PYTHON".into(), python),
        ],
        cwd: Some(workspace_root().join("examples/pytest-suite")),
        launches: PYTEST_LAUNCHES,
    })
}

/// The suite's facts per arch: its listed cases and its multi-card cases.
type ArchFacts = std::collections::HashMap<Arch, CaseList>;

/// Runs a whole session, writing its lines to `out` (write errors are ignored: a closed stdout
/// never changes the verdict).
pub fn chaos(s: &Settings, out: &mut dyn Write) -> Result<Summary, RunError> {
    std::fs::create_dir_all(&s.work).map_err(|source| RunError::Prepare {
        path: s.work.clone(),
        source,
    })?;
    let kill = if s.kill {
        ", one lane SIGKILLed per run"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "chaos: {} plans, seed {}{kill}, suite {}",
        s.plans,
        s.seed,
        s.target.exe.display()
    );
    let mut facts = ArchFacts::new();
    for arch in Arch::ALL {
        facts.insert(arch, list_cases(&s.target, arch, &s.work)?);
    }
    let mut summary = Summary {
        held: 0,
        plans: s.plans,
        seed: s.seed,
        broken: BTreeMap::new(),
    };
    let mut used: BTreeSet<&'static str> = BTreeSet::new();
    for index in 1..=s.plans as usize {
        let plan = Plan::draw_for(s.seed, index, s.target.launches);
        used.extend(plan.kinds());
        let run = run_plan(&s.target, &plan, s.kill, &s.work)?;
        let violations = judge(&plan, &run, &facts[&plan.arch]);
        let _ = writeln!(out, "{}", plan_line(&plan, s.plans, &run, &violations));
        if violations.is_empty() {
            summary.held += 1;
            continue;
        }
        for v in &violations {
            summary.broken.entry(v.invariant).or_default().insert(index);
        }
        let dir = run.report_dir();
        let kept = run.dir.keep();
        let _ = writeln!(out, "  plan {index} of seed {}: {plan}", s.seed);
        for line in violation_lines(&violations) {
            let _ = writeln!(out, "  {line}");
        }
        let _ = writeln!(
            out,
            "  report dir (kept): {} (the run's stdout.txt and stderr.txt are in {})",
            dir.display(),
            kept.display()
        );
        let _ = writeln!(out, "  rerun: {}", rerun(&plan));
    }
    let used: Vec<&str> = used.into_iter().collect();
    let _ = writeln!(out, "chaos: faults used: {}", used.join(", "));
    for (invariant, plans) in &summary.broken {
        let plans: Vec<String> = plans.iter().map(ToString::to_string).collect();
        let _ = writeln!(out, "chaos: broken {invariant}: plan(s) {}", plans.join(", "));
    }
    let _ = writeln!(out, "{}", summary.last_line());
    Ok(summary)
}

/// Prints the plans of `seed` and the faults they use.
pub fn dry_run(plans: u32, seed: u64, launches: u64, out: &mut dyn Write) {
    let mut used: BTreeSet<&'static str> = BTreeSet::new();
    for index in 1..=plans as usize {
        let plan = Plan::draw_for(seed, index, launches);
        used.extend(plan.kinds());
        let _ = writeln!(out, "plan {index}/{plans}: {plan}");
    }
    let used: Vec<&str> = used.into_iter().collect();
    let _ = writeln!(out, "chaos: faults used: {} (seed {seed})", used.join(", "));
}

/// Every violation of one run: its report's, or that it hung or left no report.
fn judge(plan: &Plan, run: &PlanRun, list: &CaseList) -> Vec<Violation> {
    let mut violations = Vec::new();
    if run.hung {
        violations.push(Violation {
            invariant: "the run ends",
            detail: format!(
                "still running after {} s; its processes were killed",
                plan.bound_ms() / 1000
            ),
        });
    }
    match &run.report {
        Ok(report) => {
            let facts = Facts {
                plan,
                exit: run.exit,
                listed: &list.ids,
                multi_card: &list.multi,
                own_retries: &list.own_retries,
                killed: match run.kill {
                    Kill::Killed { lane, .. } => Some(u64::from(lane.pid)),
                    Kill::NotAsked | Kill::RunEndedFirst => None,
                },
                counters: run.counters.as_deref(),
            };
            violations.extend(check(report, &facts));
        }
        Err(e) => violations.push(Violation {
            invariant: "the run writes its report",
            detail: format!("{e} (exit {:?})", run.exit),
        }),
    }
    violations
}

fn plan_line(plan: &Plan, plans: u32, run: &PlanRun, violations: &[Violation]) -> String {
    let exit = run
        .exit
        .map_or_else(|| "by a signal".to_owned(), |c| c.to_string());
    let counts = run
        .report
        .as_ref()
        .map_or_else(|_| "no report".to_owned(), counts);
    let kill = match run.kill {
        Kill::NotAsked => String::new(),
        Kill::Killed { lane, at } => format!(
            "; killed lane pid {} (card {}) at {:.1} s",
            lane.pid,
            lane.device.map_or_else(|| "?".to_owned(), |d| d.to_string()),
            at.as_secs_f64()
        ),
        Kill::RunEndedFirst => "; no kill: the run ended first".to_owned(),
    };
    let fired = match (run.fired, run.launches) {
        (Some((f, t)), Some(l)) => format!(", {f}/{t} launch faults fired in {l} launches"),
        _ => String::new(),
    };
    let verdict = if violations.is_empty() {
        "held".to_owned()
    } else {
        let invariants: BTreeSet<&str> = violations.iter().map(|v| v.invariant).collect();
        format!("BROKE {} invariant(s)", invariants.len())
    };
    format!(
        "plan {}/{plans}: {plan} -> exit {exit} in {:.1} s, {counts}{fired}{kill}: {verdict}",
        plan.index,
        run.elapsed.as_secs_f64()
    )
}

/// Per broken invariant, its first violations (at most [`SHOWN`]) and how many more there are.
fn violation_lines(violations: &[Violation]) -> Vec<String> {
    let mut by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for v in violations {
        by.entry(v.invariant).or_default().push(&v.detail);
    }
    let mut lines = Vec::new();
    for (invariant, details) in by {
        for d in details.iter().take(SHOWN) {
            lines.push(format!("invariant broken: {invariant}: {d}"));
        }
        if details.len() > SHOWN {
            lines.push(format!(
                "invariant broken: {invariant}: ... and {} more",
                details.len() - SHOWN
            ));
        }
    }
    lines
}

/// Violations of one invariant shown per plan.
const SHOWN: usize = 5;

/// `51 cases: 49 passed, 1 flaky, 1 failed` from a report's summary (zero counts left out).
fn counts(report: &Value) -> String {
    let s = &report["summary"];
    let parts: Vec<String> = ["passed", "flaky", "failed", "skipped", "timed_out", "crashed"]
        .iter()
        .filter_map(|k| s[k].as_u64().filter(|&n| n > 0).map(|n| format!("{n} {k}")))
        .collect();
    format!("{} cases: {}", s["total"].as_u64().unwrap_or(0), parts.join(", "))
}

/// The command that runs the same plan by hand (default sim root and lock dir).
fn rerun(plan: &Plan) -> String {
    let args: Vec<String> = plan
        .suite_args()
        .into_iter()
        .filter(|a| a != "--no-progress")
        .map(|a| {
            if a.contains(';') || a.contains('=') {
                format!("'{a}'")
            } else {
                a
            }
        })
        .collect();
    format!(
        "ONBOARD_SIM_CARDS={} cargo xtask onboard {}",
        plan.cards,
        args.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed of the CI run (`cargo test`): its 5 plans use every fault but `init_delay_ms`
    /// (chosen when that fault could not hold: issue 8 items 2 and 3, since fixed), the hardware
    /// `sync_fail` included (seed 2 since that fault was added);
    /// `cargo xtask chaos --dry-run --plans 5 --seed 2` prints them.
    const CI_SEED: u64 = 2;

    #[test]
    fn rerun_quotes_the_plan() {
        let p = Plan::draw(CI_SEED, 1);
        let r = rerun(&p);
        assert!(
            r.starts_with(&format!(
                "ONBOARD_SIM_CARDS={} cargo xtask onboard --arch",
                p.cards
            )),
            "{r}"
        );
        assert!(r.contains(&format!("--faults '{}'", p.faults())), "{r}");
    }

    /// CI's chaos run: 5 plans of a fixed seed through the real suite binary, no kill (a kill's
    /// moment is wall-clock, so it would make the test's outcome depend on the machine's speed).
    #[test]
    fn five_plans_of_the_ci_seed_hold_every_invariant() {
        let exe = build_suite(false).expect("the suite binary builds");
        let work = tempfile::tempdir().unwrap();
        let settings = Settings {
            target: Target::suite(exe),
            plans: 5,
            seed: CI_SEED,
            kill: false,
            work: work.path().to_owned(),
        };
        let mut out = Vec::new();
        let summary = chaos(&settings, &mut out).expect("the chaos session runs");
        let text = String::from_utf8_lossy(&out);
        let last = text.lines().last().unwrap_or("");
        assert_eq!(
            last,
            format!("chaos: 5/5 plans held every invariant (seed {CI_SEED})"),
            "{text}"
        );
        assert_eq!(summary.held, 5, "{text}");
        let used = text
            .lines()
            .find(|l| l.starts_with("chaos: faults used: "))
            .unwrap_or("");
        for fault in [
            "launch_fail",
            "op_timeout",
            "corrupt",
            "crash",
            "stall",
            "drain",
            "dead",
            "sync_fail",
            "sdma_fault",
            "sdma_warmup_fault",
        ] {
            assert!(used.contains(fault), "the CI plans no longer use {fault}: {used}");
        }
        assert!(
            used.contains("force_reset_fail") && used.contains("probe_fail"),
            "{used}"
        );
    }

    #[test]
    fn violations_are_grouped_and_cut_per_invariant() {
        let v = |invariant, detail: String| Violation { invariant, detail };
        let mut vs: Vec<Violation> = (0..7).map(|i| v("b", format!("case {i}"))).collect();
        vs.push(v("a", "one".to_owned()));
        let lines = violation_lines(&vs);
        assert_eq!(lines.len(), 1 + SHOWN + 1, "{lines:?}");
        assert_eq!(lines[0], "invariant broken: a: one");
        assert_eq!(lines[1], "invariant broken: b: case 0");
        assert_eq!(lines.last().unwrap(), "invariant broken: b: ... and 2 more");
    }

    #[test]
    fn the_summary_line_reads_as_specified() {
        let s = Summary {
            held: 99,
            plans: 100,
            seed: 7,
            broken: BTreeMap::new(),
        };
        assert_eq!(s.last_line(), "chaos: 99/100 plans held every invariant (seed 7)");
    }
}
