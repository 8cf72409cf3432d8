//! Shared support of the runner's integration tests: a sandbox per test (its own sim root, lock
//! directory and report directory, passed to the spawned suite binary through its flags and
//! environment; the test process's environment is never changed), short sim timeouts, and
//! helpers to read what a run left behind.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use runner::report::model::{AttemptOutcome, Event, HealthKind, Outcome, RunReport};

/// The suite binary under test.
pub const SUITE: &str = env!("CARGO_BIN_EXE_cardguard-suite");

/// Classes of the built-in suite whose cases launch one compute kernel each on one pooled runtime
/// (so a fault plan's K names a predictable case).
pub const ONE_LAUNCH_CLASSES: [&str; 1] = ["VectorAdd"];

/// One test's private machine.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub cards: u32,
}

/// What a run gave.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub report_dir: PathBuf,
}

impl Sandbox {
    pub fn new() -> Self {
        Self::with_cards(4)
    }

    pub fn with_cards(cards: u32) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            cards,
        }
    }

    pub fn sim_root(&self) -> PathBuf {
        self.dir.path().join("sim")
    }

    pub fn lock_dir(&self) -> PathBuf {
        self.dir.path().join("locks")
    }

    pub fn report_dir(&self) -> PathBuf {
        self.dir.path().join("report")
    }

    /// The suite binary with this sandbox's environment (short sim timeouts) and no arguments.
    pub fn bare(&self) -> Command {
        let mut c = Command::new(SUITE);
        c.env("ONBOARD_SIM_ROOT", self.sim_root())
            .env("ONBOARD_LOCK_DIR", self.lock_dir())
            .env("ONBOARD_SIM_CARDS", self.cards.to_string())
            .env("ONBOARD_SCHEDULER_TIMEOUT_MS", "20")
            .env("ONBOARD_OP_EXECUTE_TIMEOUT_US", "60000")
            .env("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "250")
            .env_remove("ONBOARD_SIM_FAULTS")
            .env_remove("ONBOARD_POISON_SINK")
            .env_remove("ONBOARD_LEASE_FD")
            .env_remove("ONBOARD_TEST_LANE_PAUSE")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        c
    }

    /// A dispatcher run of `arch` on sim, reports in this sandbox, plus `args`.
    pub fn command(&self, arch: &str, args: &[&str]) -> Command {
        let mut c = self.bare();
        c.args([
            "--arch",
            arch,
            "--platform",
            "sim",
            "--no-progress",
            "--report-dir",
        ])
        .arg(self.report_dir())
        .args(args);
        c
    }

    pub fn run(&self, arch: &str, args: &[&str]) -> Run {
        let out = self.command(arch, args).output().unwrap();
        self.finish(out)
    }

    pub fn finish(&self, out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            report_dir: self.report_dir(),
        }
    }
}

impl Run {
    pub fn report(&self) -> RunReport {
        runner::report::read_report(&self.report_dir.join("report.json")).unwrap_or_else(|e| {
            panic!(
                "no report: {e}\nstdout:\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    pub fn journal(&self) -> Vec<Event> {
        runner::report::read_journal(&self.report_dir.join("journal.jsonl")).unwrap()
    }

    /// Panics with the run's output unless it exited with `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            Some(code),
            "exit status\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    pub fn dump(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

/// The outcome of case `id`.
pub fn outcome(r: &RunReport, id: &str) -> Outcome {
    case(r, id).outcome
}

pub fn case<'a>(r: &'a RunReport, id: &str) -> &'a runner::report::model::CaseReport {
    r.cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id} in the report"))
}

/// Attempt outcomes of case `id`.
pub fn attempts(r: &RunReport, id: &str) -> Vec<AttemptOutcome> {
    case(r, id).attempts.iter().map(|a| a.outcome).collect()
}

/// Health event kinds of card `device`, in order.
pub fn health(r: &RunReport, device: u32) -> Vec<HealthKind> {
    r.devices_health
        .get(&device.to_string())
        .map(|v| v.iter().map(|h| h.event).collect())
        .unwrap_or_default()
}

/// Asserts the six counts add up and every case has a final verdict.
pub fn assert_consistent(r: &RunReport) {
    assert!(r.summary.is_consistent(), "{:?}", r.summary);
    assert_eq!(r.summary.total as usize, r.cases.len());
}

/// The ids of every case `--list` prints for `args`.
pub fn list(sandbox: &Sandbox, arch: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--list"];
    all.extend_from_slice(args);
    let out = sandbox.command(arch, &all).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}
