//! Running one chaos plan through the suite binary, and what the checks need to know of the suite.
//!
//! This module owns one run's processes and files: a temporary directory per run (under the
//! chaos work dir) holding the sim root, the lock dir, the report dir and the run's stdout and
//! stderr, set on the child's environment only (`ONBOARD_SIM_ROOT`, `ONBOARD_LOCK_DIR`,
//! `ONBOARD_SIM_CARDS`; `ONBOARD_SIM_FAULTS` removed: the plan goes in `--faults`); with `--kill`
//! a thread that, at the plan's moment, SIGKILLs one lane of the run (or says the run ended
//! first); the bound past which a run counts as hung (its whole process tree is then killed). The
//! suite stays in this process's process group, so a Ctrl-C reaches it too. It also asks the suite binary which cases it selects and which of them need several
//! cards (`--list --format json`). It never judges a report (see `check`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use platform_common::sim::{card_state, CardCounters, SimConfig};
use platform_common::Arch;
use serde_json::Value;
use tempfile::TempDir;

use super::lanes::{kill_lane, lanes_of, Lane};
use super::plan::Plan;
use crate::child_wait::{wait_bounded, Waited};
use crate::procs;

/// A run could not be made at all (as opposed to a run that broke an invariant).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A file or directory of the run could not be made.
    #[error("failed to prepare {path}: {source}")]
    Prepare {
        /// What.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The suite binary could not be started or waited for.
    #[error("failed to run {exe}: {source}")]
    Spawn {
        /// The binary.
        exe: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `--list` failed.
    #[error("`{exe} --arch {arch} --list` failed: {detail}")]
    List {
        /// The binary.
        exe: PathBuf,
        /// The arch.
        arch: Arch,
        /// Its status and stderr.
        detail: String,
    },
}

/// What a `--kill` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// No kill was asked for.
    NotAsked,
    /// This lane was SIGKILLed at this moment of the run.
    Killed {
        /// The lane.
        lane: Lane,
        /// When, since the run started.
        at: Duration,
    },
    /// The run ended before the kill's moment, or before a lane could be found after it.
    RunEndedFirst,
}

/// One run's result.
#[derive(Debug)]
pub struct PlanRun {
    /// The exit code (`None`: ended by a signal).
    pub exit: Option<i32>,
    /// The run passed its bound and was killed.
    pub hung: bool,
    /// Its wall time.
    pub elapsed: Duration,
    /// What the kill did.
    pub kill: Kill,
    /// `report.json`, or why it could not be read.
    pub report: Result<Value, String>,
    /// Launch faults of the plan that fired, of those installed (from the sim's card files; `None`
    /// when they could not be read).
    pub fired: Option<(usize, usize)>,
    /// Case launches on all cards of the run.
    pub launches: Option<u64>,
    /// The sim's counters of each card (`None`: a card file could not be read).
    pub counters: Option<Vec<CardCounters>>,
    /// The run's directory (sim root, locks, report, output); removed on drop unless kept.
    pub dir: TempDir,
}

impl PlanRun {
    /// The report dir.
    pub fn report_dir(&self) -> PathBuf {
        self.dir.path().join("report")
    }
}

fn prepare(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Prepare {
        path: path.to_owned(),
        source,
    }
}

/// What every run setting's variable (and the profile's) starts with: removed from a plan's run.
const SETTING_VAR_PREFIX: &str = "CARDGUARD_";

/// What the plans run: the suite binary on simulated cards, or `cardguard pytest` over the
/// example pytest suite on `libsim_acl.so` (`--suite pytest`).
#[derive(Debug, Clone)]
pub struct Target {
    /// The program.
    pub exe: PathBuf,
    /// Its arguments before the runner's flags (`pytest`).
    pub pre: Vec<OsString>,
    /// Its arguments after them (`-- .`).
    pub post: Vec<OsString>,
    /// The `--platform` of every run.
    pub platform: &'static str,
    /// Extra environment (set after the run settings' variables are removed).
    pub env: Vec<(OsString, OsString)>,
    /// Where it runs (the suite's directory), if not here.
    pub cwd: Option<PathBuf>,
    /// The launches its clean run makes, which the plans' launch faults are drawn for.
    pub launches: u64,
}

impl Target {
    /// The suite binary `exe` on simulated cards.
    pub fn suite(exe: PathBuf) -> Self {
        Self {
            exe,
            pre: Vec::new(),
            post: Vec::new(),
            platform: "sim",
            env: Vec::new(),
            cwd: None,
            launches: super::plan::BUILTIN_LAUNCHES,
        }
    }
}

/// The target's command with a sim root, lock dir and card count of `dir`'s, for `arch`.
fn suite_command(t: &Target, dir: &Path, cards: u32, arch: &str) -> Result<Command, RunError> {
    let sim = dir.join("sim");
    let locks = dir.join("locks");
    for d in [&sim, &locks] {
        std::fs::create_dir(d).map_err(prepare(d))?;
    }
    let mut cmd = Command::new(&t.exe);
    if let Some(d) = &t.cwd {
        cmd.current_dir(d);
    }
    if t.platform == "onboard" {
        // The cards behind libsim_acl.so: as many as the simulator has, of the plan's arch.
        cmd.env("ONBOARD_CARDS", cards.to_string())
            .env("ONBOARD_SIM_ARCH", arch);
    }
    cmd.env("ONBOARD_SIM_ROOT", &sim)
        .env("ONBOARD_LOCK_DIR", &locks)
        .env("ONBOARD_SIM_CARDS", cards.to_string())
        .env_remove("ONBOARD_SIM_FAULTS")
        .stdin(Stdio::null())
        // Neither a config file of the checkout nor a run setting's variable changes a plan's run:
        // every run setting's variable is a `CARDGUARD_*` one (the fault plan's aside, removed
        // above), and so is the profile's.
        .args(&t.pre)
        .arg("--no-config");
    for (var, _) in std::env::vars_os() {
        if var.as_encoded_bytes().starts_with(SETTING_VAR_PREFIX.as_bytes()) {
            cmd.env_remove(var);
        }
    }
    cmd.envs(t.env.iter().map(|(k, v)| (k, v)));
    Ok(cmd)
}

/// Runs `plan` once in a new directory under `work`.
pub fn run_plan(t: &Target, plan: &Plan, kill: bool, work: &Path) -> Result<PlanRun, RunError> {
    let exe = t.exe.as_path();
    let dir = tempfile::Builder::new()
        .prefix(&format!("plan-{}-", plan.index))
        .tempdir_in(work)
        .map_err(prepare(work))?;
    let mut cmd = suite_command(t, dir.path(), plan.cards, &plan.arch.to_string())?;
    let out_path = dir.path().join("stdout.txt");
    let err_path = dir.path().join("stderr.txt");
    let stdout = File::create(&out_path).map_err(prepare(&out_path))?;
    let stderr = File::create(&err_path).map_err(prepare(&err_path))?;
    let report_dir = dir.path().join("report");
    cmd.args(plan.suite_args_on(t.platform))
        .arg("--report-dir")
        .arg(&report_dir)
        .args(&t.post)
        .stdout(stdout)
        .stderr(stderr);
    let spawn_err = |source| RunError::Spawn {
        exe: exe.to_owned(),
        source,
    };
    let start = Instant::now();
    let child = cmd.spawn().map_err(spawn_err)?;
    let pid = child.id();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let killer = kill.then(|| {
        let delay = Duration::from_millis((plan.kill_window_ms() as f64 * plan.kill_at) as u64);
        let pick = plan.kill_pick;
        std::thread::spawn(move || kill_one_lane(pid, delay, pick, &done_rx, start))
    });
    let bound = Duration::from_millis(plan.bound_ms());
    // Hung: the dispatcher, its lanes and whatever they started.
    let waited = wait_bounded(child, bound, procs::kill_tree);
    let elapsed = start.elapsed();
    drop(done_tx);
    let kill = killer.map_or(Kill::NotAsked, |k| k.join().unwrap_or(Kill::RunEndedFirst));
    let (status, hung) = match waited.map_err(spawn_err)? {
        Waited::Exited(s) => (s, false),
        Waited::Killed(s) => (s, true),
    };
    let report_path = report_dir.join("report.json");
    let report = std::fs::read_to_string(&report_path)
        .map_err(|e| format!("cannot read {}: {e}", report_path.display()))
        .and_then(|t| serde_json::from_str(&t).map_err(|e| format!("bad {}: {e}", report_path.display())));
    let (fired, launches) = match fired_faults(plan, &dir.path().join("sim")) {
        Some((f, t, l)) => (Some((f, t)), Some(l)),
        None => (None, None),
    };
    let counters = card_counters(plan, &dir.path().join("sim"));
    Ok(PlanRun {
        exit: status.code(),
        hung,
        elapsed,
        kill,
        report,
        fired,
        launches,
        counters,
        dir,
    })
}

/// The sim's counters of each of the plan's cards after the run (`None` if a card file cannot be
/// read).
fn card_counters(plan: &Plan, sim_root: &Path) -> Option<Vec<CardCounters>> {
    let cfg = SimConfig::new(cardguard_arches::entry(plan.arch).facts, sim_root).with_cards(plan.cards);
    (0..plan.cards)
        .map(|card| card_state(&cfg, card).ok().map(|s| s.counters))
        .collect()
}

/// (launch faults fired, launch faults installed, case launches) over the plan's cards, from the
/// sim's record of each card.
fn fired_faults(plan: &Plan, sim_root: &Path) -> Option<(usize, usize, u64)> {
    let cfg = SimConfig::new(cardguard_arches::entry(plan.arch).facts, sim_root).with_cards(plan.cards);
    let mut totals = (0, 0, 0);
    for card in 0..plan.cards {
        let state = card_state(&cfg, card).ok()?;
        let launch = |i: &usize| state.faults.get(*i).is_some_and(|f| f.launch_number().is_some());
        totals.0 += state.fired.iter().filter(|i| launch(i)).count();
        totals.1 += state
            .faults
            .iter()
            .filter(|f| f.launch_number().is_some())
            .count();
        totals.2 += state.counters.case_launches;
    }
    Some(totals)
}

/// Waits until `delay` has passed (or the run ended), then SIGKILLs one lane of `parent`.
fn kill_one_lane(parent: u32, delay: Duration, pick: u64, done: &Receiver<()>, start: Instant) -> Kill {
    if done.recv_timeout(delay) != Err(RecvTimeoutError::Timeout) {
        return Kill::RunEndedFirst;
    }
    loop {
        let lanes = lanes_of(parent);
        if !lanes.is_empty() {
            let lane = lanes[(pick % lanes.len() as u64) as usize];
            if kill_lane(lane, parent) {
                return Kill::Killed {
                    lane,
                    at: start.elapsed(),
                };
            }
        }
        // No lane at this instant (one is being started or has just exited): look again soon,
        // unless the run ends meanwhile.
        if done.recv_timeout(Duration::from_millis(5)) != Err(RecvTimeoutError::Timeout) {
            return Kill::RunEndedFirst;
        }
    }
}

/// The case ids `--list` selects for `arch` (every case of the built-in suite the arch admits),
/// and those of them that need more than one card, with the number they need: the suite
/// binary's `--list --format json`.
pub fn list_cases(t: &Target, arch: Arch, work: &Path) -> Result<CaseList, RunError> {
    let exe = t.exe.as_path();
    let dir = tempfile::Builder::new()
        .prefix("list-")
        .tempdir_in(work)
        .map_err(prepare(work))?;
    let out = suite_command(t, dir.path(), 2, arch.name())?
        .args([
            "--arch",
            arch.name(),
            "--platform",
            t.platform,
            "--list",
            "--format",
            "json",
            // What a case lists as its retries is its own setting, or this: a case listing
            // another number has its own (`CaseList::own_retries`).
            "--retries",
            &LIST_RETRIES.to_string(),
        ])
        .args(&t.post)
        .output()
        .map_err(|source| RunError::Spawn {
            exe: exe.to_owned(),
            source,
        })?;
    let list_err = |detail: String| RunError::List {
        exe: exe.to_owned(),
        arch,
        detail,
    };
    if !out.status.success() {
        return Err(list_err(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let list = parse_list(&String::from_utf8_lossy(&out.stdout)).map_err(list_err)?;
    if list.ids.is_empty() {
        return Err(list_err("it listed no case".to_owned()));
    }
    Ok(list)
}

/// The cases of a list (their ids), and those that need more than one card.
#[derive(Debug, Default)]
pub struct CaseList {
    /// Every case id.
    pub ids: BTreeSet<String>,
    /// The cases that need more than one card, with the number they need.
    pub multi: BTreeMap<String, u32>,
    /// The cases with retries of their own (a marker's `retries=1`), which win over a plan's
    /// `--retries`.
    pub own_retries: BTreeMap<String, u32>,
}

/// The `--retries` the listing is asked with: no case of ours sets this many of its own.
const LIST_RETRIES: u64 = 4_000_000;

/// Reads `--list --format json` (asked with `--retries` [`LIST_RETRIES`]): one object per case
/// (`id`, `devices`, `retries`, ...), a line each.
pub fn parse_list(text: &str) -> Result<CaseList, String> {
    let mut list = CaseList::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value =
            serde_json::from_str(line).map_err(|e| format!("a line is not JSON ({e}): {line}"))?;
        let (Some(id), Some(devices)) = (case["id"].as_str(), case["devices"].as_u64()) else {
            return Err(format!("a line has no id or devices: {line}"));
        };
        let devices = u32::try_from(devices).map_err(|_| format!("{id} needs {devices} cards"))?;
        if devices > 1 {
            list.multi.insert(id.to_owned(), devices);
        }
        if let Some(r) = case["retries"].as_u64() {
            if r != LIST_RETRIES {
                let r = u32::try_from(r).map_err(|_| format!("{id} has {r} retries"))?;
                list.own_retries.insert(id.to_owned(), r);
            }
        }
        list.ids.insert(id.to_owned());
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run setting's variable is removed from a plan's run by its prefix (the fault plan's by
    /// its name).
    #[test]
    fn every_run_setting_variable_is_removed_by_its_prefix() {
        for k in runner::config::KEYS {
            assert!(
                k.env.starts_with(SETTING_VAR_PREFIX) || k.env == "ONBOARD_SIM_FAULTS",
                "{} is read from {}, which a plan's run would keep",
                k.key,
                k.env
            );
        }
    }

    #[test]
    fn the_builtin_suite_has_its_multi_card_case() {
        let exe = crate::onboard::build_suite(false).expect("the suite binary builds");
        let work = tempfile::tempdir().unwrap();
        for arch in Arch::ALL {
            let CaseList { ids, multi, .. } =
                list_cases(&Target::suite(exe.clone()), arch, work.path()).unwrap();
            assert_eq!(
                multi.get("MultiCard::vector_add_on_two_cards"),
                Some(&2),
                "{arch}"
            );
            assert!(multi.values().all(|&n| n > 1));
            assert!(multi.keys().all(|id| ids.contains(id)), "{arch}");
        }
    }

    #[test]
    fn a_list_line_without_its_fields_is_an_error_naming_it() {
        let text = "{\"id\":\"A::one\",\"devices\":1,\"retries\":4000000}\n\
                    {\"id\":\"M::two\",\"devices\":2,\"retries\":1}\n";
        let CaseList {
            ids,
            multi,
            own_retries,
        } = parse_list(text).unwrap();
        assert_eq!(ids.len(), 2);
        assert_eq!(multi.into_iter().collect::<Vec<_>>(), [("M::two".to_owned(), 2)]);
        assert_eq!(
            own_retries.into_iter().collect::<Vec<_>>(),
            [("M::two".to_owned(), 1)]
        );
        let err = parse_list("{\"id\":\"A::one\"}\n").unwrap_err();
        assert!(err.contains("A::one"), "{err}");
        assert!(parse_list("A::one  (rt, pooled)\n")
            .unwrap_err()
            .contains("not JSON"));
    }
}
