//! One benchmark run of the suite binary in a sandbox of its own: a fresh sim root, lock directory
//! and report directory per run (under a temporary directory in the target dir, removed with the
//! sandbox), the settings on the child only (`ONBOARD_SIM_ROOT`, `ONBOARD_LOCK_DIR`,
//! `ONBOARD_SIM_CARDS`, the sim timeouts; `ONBOARD_SIM_FAULTS` removed: a plan goes in
//! `--faults`), its whole-process wall time, and what it left: `report.json`, the journal, the
//! `--stats-out` figures and the report files' sizes.
//!
//! This file owns a run's processes and files. It never computes a figure (the benches do).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cardguard_report::model::{Event, RunReport};
use serde_json::Value;
use tempfile::TempDir;

use crate::onboard::target_dir;

/// The report files a run writes, in the order the benches print them.
pub const REPORT_FILES: [&str; 4] = ["report.json", "junit.xml", "journal.jsonl", "timeline.svg"];

/// A directory for one benchmark's runs.
#[derive(Debug)]
pub struct Sandbox {
    dir: TempDir,
    runs: u32,
}

/// One run to make.
#[derive(Debug, Clone, Default)]
pub struct RunSpec {
    /// Arguments after the ones every run gets (`--platform sim --no-progress --report-dir
    /// --stats-out`).
    pub args: Vec<String>,
    /// Simulated cards on the machine (`ONBOARD_SIM_CARDS`).
    pub cards: u32,
    /// The sim timeouts, in ms: (scheduler, op-execute, stream sync).
    pub timeouts_ms: Option<(u64, u64, u64)>,
}

/// What a run gave.
#[derive(Debug)]
pub struct RunOut {
    /// Spawn to exit of the suite binary.
    pub wall: Duration,
    /// Its `report.json`.
    pub report: RunReport,
    /// Its journal.
    pub journal: Vec<Event>,
    /// Its `--stats-out` figures.
    pub stats: Value,
    /// Each report file's size in bytes, as [`REPORT_FILES`].
    pub sizes: Vec<(&'static str, u64)>,
}

impl Sandbox {
    /// A sandbox under `<target>/bench-<name>/` (removed when dropped).
    pub fn new(name: &str) -> Result<Self, String> {
        let base = target_dir().join(format!("bench-{name}"));
        std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
        let dir = tempfile::Builder::new()
            .prefix("run-")
            .tempdir_in(&base)
            .map_err(|e| format!("cannot create a directory in {}: {e}", base.display()))?;
        Ok(Self { dir, runs: 0 })
    }

    /// Runs `exe` with `spec` in fresh directories; an exit status other than 0 or 1 (a run
    /// whose verdicts failed still measures) is an error with the run's output.
    pub fn run(&mut self, exe: &Path, spec: &RunSpec) -> Result<RunOut, String> {
        self.runs += 1;
        let root = self.dir.path().join(format!("run{}", self.runs));
        let [sim, locks, report] = ["sim", "locks", "report"].map(|d| root.join(d));
        for d in [&sim, &locks] {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        let stats = root.join("stats.json");
        let mut cmd = Command::new(exe);
        // A config file of the checkout must not change what is measured.
        cmd.args(["--platform", "sim", "--no-progress", "--no-config"])
            .arg("--report-dir")
            .arg(&report)
            .arg("--stats-out")
            .arg(&stats)
            .args(&spec.args)
            .env("ONBOARD_SIM_ROOT", &sim)
            .env("ONBOARD_LOCK_DIR", &locks)
            .env("ONBOARD_SIM_CARDS", spec.cards.to_string())
            .env_remove("ONBOARD_SIM_FAULTS")
            .env_remove("RUST_LOG");
        if let Some((sched, op, sync)) = spec.timeouts_ms {
            cmd.env("ONBOARD_SCHEDULER_TIMEOUT_MS", sched.to_string())
                .env("ONBOARD_OP_EXECUTE_TIMEOUT_US", (op * 1000).to_string())
                .env("ONBOARD_STREAM_SYNC_TIMEOUT_MS", sync.to_string());
        }
        let start = Instant::now();
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        let wall = start.elapsed();
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(format!(
                "the run `{}` failed ({}):\n{}{}",
                spec.args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let read = |name: &str| -> Result<PathBuf, String> {
            let p = report.join(name);
            if p.is_file() {
                Ok(p)
            } else {
                Err(format!("the run left no {}", p.display()))
            }
        };
        let report_json = cardguard_report::read_report(&read("report.json")?).map_err(|e| e.to_string())?;
        let journal = cardguard_report::read_journal(&read("journal.jsonl")?).map_err(|e| e.to_string())?;
        let text =
            std::fs::read_to_string(&stats).map_err(|e| format!("cannot read {}: {e}", stats.display()))?;
        let stats: Value =
            serde_json::from_str(&text).map_err(|e| format!("bad stats {}: {e}", stats.display()))?;
        let mut sizes = Vec::new();
        for name in REPORT_FILES {
            let len = std::fs::metadata(read(name)?).map_err(|e| e.to_string())?.len();
            sizes.push((name, len));
        }
        // The run's files can be large (100,000 cases): gone as soon as they are read.
        let _ = std::fs::remove_dir_all(&root);
        Ok(RunOut {
            wall,
            report: report_json,
            journal,
            stats,
            sizes,
        })
    }
}

/// The median of `values` (the lower middle one of an even count); `None` when empty.
pub fn median_index(values: &[Duration]) -> Option<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by_key(|&i| values[i]);
    order.get(values.len().saturating_sub(1) / 2).copied()
}

/// Milliseconds of a duration, with fractions.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Mebibytes of a byte count.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The load average over the last minute (`/proc/loadavg`), for the record.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_run() {
        let d = |ms| Duration::from_millis(ms);
        assert_eq!(median_index(&[d(30), d(10), d(20)]), Some(2));
        assert_eq!(median_index(&[d(5)]), Some(0));
        assert_eq!(
            median_index(&[d(4), d(1), d(3), d(2)]),
            Some(3),
            "the lower middle"
        );
        assert_eq!(median_index(&[]), None);
    }
}
