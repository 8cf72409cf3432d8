//! `cargo xtask bench dispatch`: the runner's own overhead. Builds the suite binary in release
//! mode and runs its benchmark suite on 2 simulated cards, each run in its own temporary sim root,
//! lock directory and report directory:
//!
//! - the 2000 trivial cases (20 classes of one runtime, bodies that do no device work, so no
//!   post-case health check runs): `dispatch: <N> cases/s, <M> us/case`, M being the wall time
//!   from the first assignment to the last verdict divided by the number of cases;
//! - the 200 small compute cases (`vector_add` of 64 elements), with the default
//!   `--health-check each` and with `off`: `dispatch (health check each, compute cases): ...` and
//!   `dispatch (health check off, compute cases): ...`; the difference of the two M is the check's
//!   cost per case.

use std::path::Path;
use std::process::{Command, ExitCode};

use crate::onboard::{build_suite, target_dir};

/// What to benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// The dispatcher and lanes on trivial cases.
    Dispatch,
}

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The benchmark.
    #[arg(value_enum)]
    which: Which,
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    match args.which {
        Which::Dispatch => match dispatch() {
            Ok(lines) => {
                for line in lines {
                    println!("{line}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: bench dispatch: {e}");
                ExitCode::from(1)
            }
        },
    }
}

/// The compute classes of the benchmark suite (their tag, `runner::bench_suite::COMPUTE_TAG`).
const COMPUTE: &str = "tag:bench_compute";

fn dispatch() -> Result<Vec<String>, String> {
    let exe = build_suite(true)?;
    let work = target_dir()
        .join("bench-dispatch")
        .join(std::process::id().to_string());
    let runs: [(&str, &[&str]); 3] = [
        ("dispatch", &["--exclude", COMPUTE]),
        (
            "dispatch (health check each, compute cases)",
            &["--case", COMPUTE, "--health-check", "each"],
        ),
        (
            "dispatch (health check off, compute cases)",
            &["--case", COMPUTE, "--health-check", "off"],
        ),
    ];
    let mut lines = Vec::new();
    for (i, (label, args)) in runs.iter().enumerate() {
        let dir = work.join(i.to_string());
        let result = run_in(&exe, &dir, args);
        let _ = std::fs::remove_dir_all(&dir);
        let (per_sec, per_case) = result?;
        lines.push(format!("{label}: {per_sec:.0} cases/s, {per_case:.1} us/case"));
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(lines)
}

/// One benchmark run with `args`: cases per second and µs per case.
fn run_in(exe: &Path, work: &Path, args: &[&str]) -> Result<(f64, f64), String> {
    let dirs = ["sim", "locks", "report"].map(|d| work.join(d));
    for d in &dirs {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let stats = work.join("stats.json");
    let out = Command::new(exe)
        .args([
            "--arch",
            "a5",
            "--platform",
            "sim",
            "--devices",
            "0,1",
            "--suite",
            "bench",
            "--no-progress",
        ])
        .args(args)
        .arg("--report-dir")
        .arg(&dirs[2])
        .arg("--stats-out")
        .arg(&stats)
        .env("ONBOARD_SIM_ROOT", &dirs[0])
        .env("ONBOARD_LOCK_DIR", &dirs[1])
        .env("ONBOARD_SIM_CARDS", "2")
        .env_remove("ONBOARD_SIM_FAULTS")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "the benchmark run failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text =
        std::fs::read_to_string(&stats).map_err(|e| format!("cannot read {}: {e}", stats.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("bad stats: {e}"))?;
    let cases = v["cases"]
        .as_u64()
        .filter(|c| *c > 0)
        .ok_or("stats name no case")?;
    let window_us = v["window_us"]
        .as_u64()
        .filter(|w| *w > 0)
        .ok_or("stats have no window")?;
    let per_case = window_us as f64 / cases as f64;
    let per_sec = cases as f64 * 1e6 / window_us as f64;
    Ok((per_sec, per_case))
}
