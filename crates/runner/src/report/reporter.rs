//! The reporter: one place the dispatcher sends every [`Event`] to, fanning it out to the journal,
//! the live progress bars and the report builder, and writing the report files at the end.
//!
//! This module owns the report directory's files for one run (`journal.jsonl` while the run goes;
//! `report.json`, `junit.xml` and `timeline.svg` at the end). It never decides an outcome or a
//! retry: it records what the dispatcher tells it.

use std::path::{Path, PathBuf};

use super::console::Progress;
use super::error::ReportError;
use super::journal::{Journal, JOURNAL_JSONL};
use super::json::{write_report, REPORT_JSON};
use super::junit::{write_junit, JUNIT_XML};
use super::model::{Event, FlakyResult, RunBuilder, RunInfo, RunReport};
use super::timeline::{write_timeline, TIMELINE_SVG};
use crate::clock;

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

/// Writes `report.json`, `junit.xml` and `timeline.svg` of a finished run into `dir`.
pub fn write_run_files(dir: &Path, report: &RunReport) -> Result<ReportPaths, ReportError> {
    std::fs::create_dir_all(dir).map_err(|e| ReportError::io("create", dir, e))?;
    let paths = ReportPaths::in_dir(dir);
    write_report(&paths.report, report)?;
    write_junit(&paths.junit, report)?;
    write_timeline(&paths.timeline, report)?;
    Ok(paths)
}

/// Receives a run's events and writes its reports.
#[derive(Debug)]
pub struct Reporter {
    dir: PathBuf,
    /// When the run started, on the run's one clock (`CLOCK_MONOTONIC`, see [`crate::clock`]).
    started_mono_ns: u64,
    journal: Journal,
    progress: Progress,
    builder: RunBuilder,
}

impl Reporter {
    /// Creates the report directory and its journal. `show_progress` is false under
    /// `--no-progress`; the bars are hidden anyway when stderr is not a terminal.
    pub fn create(dir: &Path, info: RunInfo, show_progress: bool) -> Result<Self, ReportError> {
        std::fs::create_dir_all(dir).map_err(|e| ReportError::io("create", dir, e))?;
        let journal = Journal::create(&dir.join(JOURNAL_JSONL))?;
        let progress = Progress::new(&info.devices, 0, show_progress);
        Ok(Self {
            dir: dir.to_owned(),
            started_mono_ns: clock::mono_ns(),
            journal,
            progress,
            builder: RunBuilder::new(info),
        })
    }

    /// Milliseconds since the reporter was created: the clock for every event's `at_ms`.
    pub fn elapsed_ms(&self) -> u64 {
        self.run_ms_of_mono(clock::mono_ns())
    }

    /// A monotonic reading (a lane's health event, stamped in the lane) as ms since the run
    /// started, on the same clock as [`elapsed_ms`](Self::elapsed_ms) (0 for a moment before it).
    pub fn run_ms_of_mono(&self, mono_ns: u64) -> u64 {
        clock::run_ms(self.started_mono_ns, mono_ns)
    }

    /// The report directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The run's identity.
    pub fn info(&self) -> &RunInfo {
        self.builder.info()
    }

    /// Adds a selected case (before the run starts). The progress bar's length follows.
    pub fn add_case(&mut self, id: &str, class: &str, runtime: &str) -> Result<(), ReportError> {
        self.builder.add_case(id, class, runtime)?;
        self.progress.grow(1);
        Ok(())
    }

    /// Records an event: appended to the journal, shown on the bars, folded into the report. The
    /// journal line is written first, so a rejected event (an unknown case) is still on record.
    pub fn event(&mut self, event: &Event) -> Result<(), ReportError> {
        let journaled = self.journal.append(event);
        self.progress.on_event(event);
        self.builder.apply(event)?;
        journaled
    }

    /// Ends the run: appends `run_finished`, derives the verdicts, writes `report.json`,
    /// `junit.xml` and `timeline.svg`, clears the bars and returns the report. Print
    /// [`render_summary`](super::console::render_summary) of it for the closing summary.
    pub fn finish(self, flaky_result: FlakyResult) -> Result<RunReport, ReportError> {
        let (report, written) = self.finish_keeping_report(flaky_result);
        written.map(|()| report)
    }

    /// As [`finish`](Self::finish), but the report (derived from the events, whatever became of
    /// the files) comes back even when writing a file failed, with that failure beside it: the
    /// run's verdicts stand on their own.
    pub fn finish_keeping_report(self, flaky_result: FlakyResult) -> (RunReport, Result<(), ReportError>) {
        let duration_ms = self.elapsed_ms();
        let report = self.builder.finish(duration_ms, flaky_result);
        let journaled = self.journal.append(&Event::RunFinished {
            at_ms: duration_ms,
            summary: report.summary,
        });
        self.progress.finish();
        let written = write_run_files(&self.dir, &report).map(|_| ()).and(journaled);
        (report, written)
    }
}
