//! A finished run's files: `report.json`, `junit.xml` and `timeline.svg` written from one
//! [`RunReport`] into a report directory, each by its own writer at the same time, and how long
//! each took.
//!
//! This file owns the set of files and their names in a directory ([`ReportPaths`]). The journal
//! is written as the run goes ([`Journal`](crate::Journal)), not here; holding the directory for
//! a run and clearing an earlier run's files is the runner's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::ReportError;
use crate::journal::JOURNAL_JSONL;
use crate::json::{write_report, REPORT_JSON};
use crate::junit::{write_junit, JUNIT_XML};
use crate::model::RunReport;
use crate::timeline::{write_timeline, TIMELINE_SVG};

/// The paths of a report directory's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportPaths {
    /// `report.json`.
    pub report: PathBuf,
    /// `junit.xml`.
    pub junit: PathBuf,
    /// `journal.jsonl`.
    pub journal: PathBuf,
    /// `timeline.svg`.
    pub timeline: PathBuf,
}

impl ReportPaths {
    /// The files inside `dir`.
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            report: dir.join(REPORT_JSON),
            junit: dir.join(JUNIT_XML),
            journal: dir.join(JOURNAL_JSONL),
            timeline: dir.join(TIMELINE_SVG),
        }
    }
}

/// How long writing each report file took (`--stats-out`, `cargo xtask bench scale`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteTimes {
    /// Every journal line of the run, added up (each appended as its event happened).
    pub journal: Duration,
    /// `report.json` (rendering and writing).
    pub report: Duration,
    /// `junit.xml`.
    pub junit: Duration,
    /// `timeline.svg`.
    pub timeline: Duration,
    /// `report.json`, `junit.xml` and `timeline.svg` from start to end (they are written at the
    /// same time, each on its own thread).
    pub files: Duration,
}

impl WriteTimes {
    /// The wall time the reports cost: the journal's lines and the three files.
    pub fn total(&self) -> Duration {
        self.journal + self.files
    }
}

/// Writes `report.json`, `junit.xml` and `timeline.svg` of a finished run into `dir`.
pub fn write_run_files(dir: &Path, report: &RunReport) -> Result<ReportPaths, ReportError> {
    write_run_files_timed(dir, report, &mut WriteTimes::default())
}

/// As [`write_run_files`], adding the time each file took to `times`.
pub fn write_run_files_timed(
    dir: &Path,
    report: &RunReport,
    times: &mut WriteTimes,
) -> Result<ReportPaths, ReportError> {
    std::fs::create_dir_all(dir).map_err(|e| ReportError::io("create", dir, e))?;
    let paths = ReportPaths::in_dir(dir);
    let timed = |write: fn(&Path, &RunReport) -> Result<(), ReportError>, path: &Path| {
        let t = Instant::now();
        let written = write(path, report);
        (written, t.elapsed())
    };
    // Three independent writers of the same report: each on its own thread, so a large run's
    // files take as long as the slowest of them, not their sum.
    let t = Instant::now();
    let ((json, json_t), (junit, junit_t), (timeline, timeline_t)) = std::thread::scope(|s| {
        let junit = s.spawn(|| timed(write_junit, &paths.junit));
        let timeline = s.spawn(|| timed(write_timeline, &paths.timeline));
        let json = timed(write_report, &paths.report);
        let join = |h: std::thread::ScopedJoinHandle<'_, (Result<(), ReportError>, Duration)>,
                    path: &Path| {
            h.join().unwrap_or_else(|_| {
                let e = std::io::Error::other("its writer panicked");
                (Err(ReportError::io("write", path, e)), Duration::ZERO)
            })
        };
        (json, join(junit, &paths.junit), join(timeline, &paths.timeline))
    });
    times.files += t.elapsed();
    times.report += json_t;
    times.junit += junit_t;
    times.timeline += timeline_t;
    json.and(junit).and(timeline)?;
    Ok(paths)
}
