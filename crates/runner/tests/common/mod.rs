//! Shared support of the runner's integration tests: a sandbox per test (its own sim root, lock
//! directory and report directory, passed to the spawned suite binary through its flags and
//! environment; the test process's environment is never changed), short sim timeouts, and
//! helpers to read what a run left behind.
#![allow(dead_code)]

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;

use runner::report::model::{AttemptOutcome, Event, Outcome, RunReport};

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
    /// The run's temp dir (its `TMPDIR`): the private poison-sink directory lives there.
    pub tmp_dir: PathBuf,
}

impl Sandbox {
    pub fn new() -> Self {
        Self::with_cards(4)
    }

    pub fn with_cards(cards: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Self { dir, cards }
    }

    /// The `TMPDIR` of every process the sandbox starts.
    pub fn tmp_dir(&self) -> PathBuf {
        self.dir.path().join("tmp")
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
        self.bare_with(Path::new(SUITE))
    }

    /// Another suite binary (`exe`, e.g. the test kit's `probe-suite`) with this sandbox's
    /// environment and no arguments.
    pub fn bare_with(&self, exe: &Path) -> Command {
        let mut c = Command::new(exe);
        c.env("ONBOARD_SIM_ROOT", self.sim_root())
            .env("ONBOARD_LOCK_DIR", self.lock_dir())
            .env("ONBOARD_SIM_CARDS", self.cards.to_string())
            .env("ONBOARD_SCHEDULER_TIMEOUT_MS", "20")
            .env("ONBOARD_OP_EXECUTE_TIMEOUT_US", "60000")
            .env("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "250")
            .env("TMPDIR", self.tmp_dir())
            .env_remove("ONBOARD_SIM_FAULTS")
            .env_remove("ONBOARD_POISON_SINK")
            .env_remove("ONBOARD_LEASE_FD")
            .env_remove("ONBOARD_TEST_LANE_PAUSE")
            .env_remove("RUST_LOG")
            .env_remove(runner::config::ENV_CONFIG)
            .env_remove(runner::config::ENV_PROFILE)
            // No config file of the checkout (or of a developer's) applies: the search for
            // `.config/cardguard.toml` starts in the sandbox.
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        for k in runner::config::KEYS {
            c.env_remove(k.env);
        }
        c
    }

    /// A dispatcher run of `arch` on sim, reports in this sandbox, plus `args`.
    pub fn command(&self, arch: &str, args: &[&str]) -> Command {
        self.command_with(Path::new(SUITE), arch, args)
    }

    /// [`Sandbox::command`] of another suite binary.
    pub fn command_with(&self, exe: &Path, arch: &str, args: &[&str]) -> Command {
        let mut c = self.bare_with(exe);
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

    /// [`Sandbox::run`] of another suite binary.
    pub fn run_with(&self, exe: &Path, arch: &str, args: &[&str]) -> Run {
        let out = self.command_with(exe, arch, args).output().unwrap();
        self.finish(out)
    }

    /// `--devices devices`, a `--case` per entry of `cases`, then `extra`.
    pub fn selection<'a>(devices: &'a str, cases: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["--devices", devices];
        args.extend(selectors(cases));
        args.extend_from_slice(extra);
        args
    }

    /// A run of `cases` on `devices` (see [`Sandbox::selection`]).
    pub fn run_cases(&self, arch: &str, devices: &str, cases: &[&str], extra: &[&str]) -> Run {
        self.run(arch, &Self::selection(devices, cases, extra))
    }

    /// The ids `--list` gives for `cases`, then a run of them on `devices` with `extra`.
    pub fn list_and_run(
        &self,
        arch: &str,
        devices: &str,
        cases: &[&str],
        extra: &[&str],
    ) -> (Vec<String>, Run) {
        let ids = list(self, arch, &selectors(cases));
        (ids, self.run_cases(arch, devices, cases, extra))
    }

    /// The ids of the `cases` selectors, then a run of them on cards 0 and 1 under fault `plan`.
    pub fn run_faulted(&self, arch: &str, cases: &[&str], plan: &str) -> (Vec<String>, Run) {
        self.list_and_run(arch, "0,1", cases, &["--faults", plan])
    }

    /// A fresh lane pause hook in this sandbox: its directory and the FIFO a paused lane
    /// announces itself on.
    pub fn pause_hook(&self) -> PauseHook {
        let dir = self.dir.path().join("hook");
        std::fs::create_dir(&dir).unwrap();
        let fifo = dir.join("announce");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            0o600.into(),
            0,
        )
        .unwrap();
        PauseHook { dir, fifo }
    }

    pub fn finish(&self, out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            report_dir: self.report_dir(),
            tmp_dir: self.tmp_dir(),
        }
    }
}

/// The lane pause hook of `--test-hooks` (`ONBOARD_TEST_LANE_PAUSE=<point>:<dir>`): a paused lane
/// writes `<pid> <point> <case>` to the FIFO `dir/announce`.
pub struct PauseHook {
    pub dir: PathBuf,
    pub fifo: PathBuf,
}

impl PauseHook {
    /// The `ONBOARD_TEST_LANE_PAUSE` value that pauses lanes at `point`.
    pub fn at(&self, point: &str) -> String {
        format!("{point}:{}", self.dir.display())
    }

    /// The first announcement line, read on a thread of its own (the FIFO open blocks until a lane
    /// opens it for writing). An end of file before any byte is a writer that had not closed the
    /// FIFO yet when this open came (a lane announced, was killed by the test and died before its
    /// close): the FIFO is opened again, which waits for the next writer.
    pub fn announcement(&self) -> mpsc::Receiver<String> {
        let fifo = self.fifo.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            while line.is_empty() {
                BufReader::new(File::open(&fifo).unwrap())
                    .read_line(&mut line)
                    .unwrap();
            }
            let _ = tx.send(line);
        });
        rx
    }
}

impl Run {
    /// Panics unless the run exited with `code`; then its report, whose counts add up.
    pub fn consistent_report(&self, code: i32) -> RunReport {
        self.expect_code(code);
        let r = self.report();
        assert_consistent(&r);
        r
    }

    /// The selectors of every sink read in the journal, of card `device` only when given.
    pub fn sink_reads(&self, device: Option<u32>) -> Vec<Vec<String>> {
        self.journal()
            .into_iter()
            .filter_map(|e| match e {
                Event::SinkRead {
                    device: d, selectors, ..
                } if device.map_or(true, |want| want == d) => Some(selectors),
                _ => None,
            })
            .collect()
    }

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

    /// What the run left in its temp dir (the private sink directory must be gone).
    pub fn temp_left(&self) -> Vec<String> {
        std::fs::read_dir(&self.tmp_dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// The names in the report dir.
    pub fn report_files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.report_dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
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

/// Asserts case `id` failed its first attempt as `first`, passed its retry and ends flaky.
pub fn assert_retried_once(r: &RunReport, id: &str, first: AttemptOutcome) {
    assert_eq!(attempts(r, id), [first, AttemptOutcome::Passed], "{id}");
    assert_eq!(outcome(r, id), Outcome::Flaky, "{id}");
}

/// Asserts case `id` lost its first attempt to an infrastructure kill (its lane SIGKILLed from
/// outside: `crashed`, class `infrastructure`), passed its retry and ends passed, not flaky.
pub fn assert_passed_after_infrastructure_kill(r: &RunReport, id: &str) {
    assert_eq!(
        attempts(r, id),
        [AttemptOutcome::Crashed, AttemptOutcome::Passed],
        "{id}"
    );
    assert_eq!(outcome(r, id), Outcome::Passed, "{id}");
    let e = case(r, id).attempts[0].error.as_ref().unwrap();
    assert_eq!(
        e.class,
        platform_common::FailureClass::Infrastructure,
        "{id}: {e}"
    );
}

/// Asserts every case of `ids` but `except` passed at its one attempt.
pub fn assert_others_passed_once(r: &RunReport, ids: &[String], except: &str) {
    for id in ids.iter().filter(|i| *i != except) {
        assert_eq!(attempts(r, id), [AttemptOutcome::Passed], "{id}");
    }
}

/// Health event names of card `device`, in order (`poisoned`, `fresh_process`, ...).
pub fn health(r: &RunReport, device: u32) -> Vec<&'static str> {
    r.devices_health
        .get(&device.to_string())
        .map(|v| v.iter().map(|h| h.name()).collect())
        .unwrap_or_default()
}

/// Asserts the six counts add up and every case has a final verdict.
pub fn assert_consistent(r: &RunReport) {
    assert!(r.summary.is_consistent(), "{:?}", r.summary);
    assert_eq!(r.summary.total as usize, r.cases.len());
}

/// A `--case` flag per entry of `cases`.
pub fn selectors<'a>(cases: &[&'a str]) -> Vec<&'a str> {
    cases.iter().flat_map(|c| ["--case", *c]).collect()
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

/// The cases in the order card 0 started their first attempts.
pub fn started_on_card0(run: &Run) -> Vec<String> {
    run.journal()
        .into_iter()
        .filter_map(|e| match e {
            Event::CaseStarted {
                id,
                device: 0,
                attempt: 1,
                ..
            } => Some(id),
            _ => None,
        })
        .collect()
}
