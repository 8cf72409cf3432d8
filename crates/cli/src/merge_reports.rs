//! `cargo cardguard merge-reports DIR... [--out DIR]` (and `cargo xtask merge-reports`): join partitioned runs' reports into one.
//!
//! Each DIR is a run's report directory (it holds `report.json`). The merged `report.json` and a
//! `junit.xml` regenerated from it are written to `--out` (default `target/onboard/merged` under the
//! workspace root) and the merged summary is printed. The merge rules live in
//! `cardguard_report::merge`; this file only parses the command line and prints.
//!
//! With `--history FILE` the joined runs are also added to a duration history (what a run adds
//! to its own: every passing attempt's duration, every built worker's init time from the DIRs'
//! journals), so the next fleet run's `--partition duration:K/N` shares balance on what every
//! partition measured. A missing FILE starts a fresh history; a garbled one is a warning and a
//! fresh history, as for a run.
//!
//! Exit status: 0 when the reports were merged (whatever their verdicts: the partition jobs carry
//! those), 2 for bad input (a missing directory or report, an unreadable report, a case present in
//! two partitions, runs that disagree on arch, platform or `--flaky-result`), with a one-line error.

use std::path::PathBuf;
use std::process::ExitCode;

use cardguard_report::history::History;
use cardguard_report::{
    merge, read_journal, read_run_dirs, render_summary, write_merged, Event, ReportError, RunReport,
    JOURNAL_JSONL, JUNIT_XML, REPORT_JSON,
};

use crate::workspace::Workspace;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Report directories of the runs to join (each holds a report.json).
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Where to write the merged report.json and junit.xml [default: target/onboard/merged].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Add the joined runs' durations to this duration history (created when missing), for the
    /// next fleet run's --partition duration:K/N.
    #[arg(long, value_name = "FILE")]
    history: Option<PathBuf>,
}

/// `onboard/merged` under the workspace's target directory.
fn default_out(ws: &Workspace) -> PathBuf {
    ws.target_dir.join("onboard").join("merged")
}

/// Runs the command.
pub fn run(ws: &Workspace, args: Args) -> ExitCode {
    let out = args.out.unwrap_or_else(|| default_out(ws));
    let merged = read_run_dirs(&args.dirs).and_then(|sources| merge(&sources));
    let merged = match merged.and_then(|m| write_merged(&out, &m).map(|()| m)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!(
                "merge-reports: failed to {}",
                platform_common::message::error_chain(&e)
            );
            return ExitCode::from(2);
        }
    };
    print!("{}", render_summary(&merged));
    println!(
        "merged {} run(s) into {} ({REPORT_JSON}, {JUNIT_XML})",
        merged.partitions.len(),
        out.display()
    );
    if let Some(path) = &args.history {
        if let Err(e) = add_to_history(path, &args.dirs, &merged) {
            eprintln!(
                "merge-reports: failed to {}",
                platform_common::message::error_chain(&e)
            );
            return ExitCode::from(2);
        }
        println!("added the joined runs to the duration history {}", path.display());
    }
    ExitCode::SUCCESS
}

/// Why the history could not be updated.
#[derive(Debug, thiserror::Error)]
enum HistoryUpdateError {
    #[error("read a journal")]
    Journal(#[source] ReportError),
    #[error("update the history")]
    History(#[source] cardguard_report::history::HistoryError),
}

/// Adds the merged run (its cases, the DIRs' journals) to the history at `path`.
fn add_to_history(
    path: &std::path::Path,
    dirs: &[PathBuf],
    merged: &RunReport,
) -> Result<(), HistoryUpdateError> {
    let mut journal: Vec<Event> = Vec::new();
    for dir in dirs {
        let file = dir.join(JOURNAL_JSONL);
        if file.exists() {
            journal.extend(read_journal(&file).map_err(HistoryUpdateError::Journal)?);
        }
    }
    let (history, warning) = History::load(path);
    if let Some(w) = warning {
        eprintln!(
            "warning: {}; starting a fresh history",
            platform_common::message::error_chain(&w)
        );
    }
    let mut history = history.unwrap_or_default();
    history.record(&merged.cases, &journal);
    history.write(path).map_err(HistoryUpdateError::History)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::testing::repository;
    use cardguard_report::{
        read_report, Attempt, AttemptOutcome, DriverReport, FlakyResult, Platform, RunBuilder, RunInfo,
    };

    fn run_dir(root: &Path, run_id: &str, cases: &[&str]) -> PathBuf {
        let mut b = RunBuilder::new(RunInfo {
            arch: platform_common::Arch::A5,
            platform: Platform::Sim,
            driver: DriverReport {
                kind: platform_common::driver::DriverKind::Sim,
                library: None,
            },
            devices: vec![0],
            devices_physical: std::collections::BTreeMap::new(),
            run_id: run_id.into(),
            started_at: "2024-05-01T12:00:00.000Z".into(),
        });
        for id in cases {
            b.add_case(id, id.split("::").next().unwrap(), "rt").unwrap();
            let attempt = Attempt {
                device: Some(0),
                pid: Some(1),
                outcome: AttemptOutcome::Passed,
                duration_ms: 3,
                started_ms: 0,
                error: None,
                output: Default::default(),
            };
            b.push_attempt(id, attempt).unwrap();
        }
        let dir = root.join(run_id);
        cardguard_report::write_run_files(&dir, &b.finish(10, FlakyResult::Pass)).unwrap();
        dir
    }

    fn args(dirs: Vec<PathBuf>, out: &Path) -> Args {
        Args {
            dirs,
            out: Some(out.to_owned()),
            history: None,
        }
    }

    #[test]
    fn merges_two_runs_into_out() {
        let tmp = tempfile::tempdir().unwrap();
        let a = run_dir(tmp.path(), "p1", &["A::x", "A::y"]);
        let b = run_dir(tmp.path(), "p2", &["B::z"]);
        let out = tmp.path().join("merged");
        assert_eq!(run(&repository(), args(vec![a, b], &out)), ExitCode::SUCCESS);
        let merged = read_report(&out.join(REPORT_JSON)).unwrap();
        assert_eq!(merged.summary.total, 3);
        assert_eq!(merged.summary.passed, 3);
        assert!(out.join(JUNIT_XML).is_file());
    }

    #[test]
    fn history_gets_every_partitions_durations() {
        let tmp = tempfile::tempdir().unwrap();
        let a = run_dir(tmp.path(), "p1", &["A::x", "A::y"]);
        let b = run_dir(tmp.path(), "p2", &["B::z"]);
        let out = tmp.path().join("merged");
        let path = tmp.path().join("history.json");
        let mut with_history = args(vec![a.clone(), b.clone()], &out);
        with_history.history = Some(path.clone());
        assert_eq!(run(&repository(), with_history), ExitCode::SUCCESS);
        let h = History::read(&path).unwrap().expect("a history");
        assert_eq!(h.runs, 1);
        let ids: Vec<&str> = h.cases.keys().map(String::as_str).collect();
        assert_eq!(ids, ["A::x", "A::y", "B::z"]);
        assert!(h.cases.values().all(|c| c.ms == [3]), "{h:?}");

        // A garbled history is replaced by a fresh one holding this merge.
        std::fs::write(&path, "{ not a history").unwrap();
        let mut again = args(vec![a, b], &out);
        again.history = Some(path.clone());
        assert_eq!(run(&repository(), again), ExitCode::SUCCESS);
        let h = History::read(&path).unwrap().expect("a history");
        assert_eq!((h.runs, h.cases.len()), (1, 3));
    }

    #[test]
    fn bad_input_is_exit_2_and_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let a = run_dir(tmp.path(), "p1", &["A::x"]);
        let dup = run_dir(tmp.path(), "p2", &["A::x"]);
        let out = tmp.path().join("merged");
        assert_eq!(
            run(&repository(), args(vec![a.clone(), dup], &out)),
            ExitCode::from(2)
        );
        assert_eq!(
            run(&repository(), args(vec![a, tmp.path().join("missing")], &out)),
            ExitCode::from(2)
        );
        assert!(!out.exists());
    }
}
