//! `cargo xtask bench dispatch`: the runner's own overhead. Builds the suite binary in release
//! mode and runs its benchmark suite (2000 trivial cases in 20 classes of one runtime, bodies that
//! do no device work) on 2 simulated cards, each in its own temporary sim root, lock directory and
//! report directory. The last line is `dispatch: <N> cases/s, <M> us/case`, M being the wall time
//! from the first assignment to the last verdict divided by the number of cases.

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
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: bench dispatch: {e}");
                ExitCode::from(1)
            }
        },
    }
}

fn dispatch() -> Result<String, String> {
    let exe = build_suite(true)?;
    let work = target_dir()
        .join("bench-dispatch")
        .join(std::process::id().to_string());
    let result = run_in(&exe, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn run_in(exe: &Path, work: &Path) -> Result<String, String> {
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
            // A config file of the checkout must not change what is measured.
            "--no-config",
        ])
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
    Ok(format!("dispatch: {per_sec:.0} cases/s, {per_case:.1} us/case"))
}
