//! The reporter: one place the dispatcher sends every [`Event`] to, fanning it out to the journal,
//! the live progress bars and the report builder, and writing the report files at the end.
//!
//! This module owns the report directory's files for one run (`journal.jsonl` while the run goes;
//! `report.json`, `junit.xml` and `timeline.svg` at the end). It never decides an outcome or a
//! retry: it records what the dispatcher tells it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cardguard_report::model::{Event, FlakyResult, RunBuilder, RunInfo, RunReport};
use cardguard_report::{write_run_files_timed, Journal, ReportError, WriteTimes, JOURNAL_JSONL};

use super::console::Progress;
use crate::clock;

/// Receives a run's events and writes its reports.
#[derive(Debug)]
pub struct Reporter {
    dir: PathBuf,
    /// When the run started, on the run's one clock (`CLOCK_MONOTONIC`, see [`crate::clock`]).
    started_mono_ns: u64,
    journal: Journal,
    progress: Progress,
    /// Whether the bars are drawn.
    progress_shown: bool,
    builder: RunBuilder,
    times: WriteTimes,
    /// Journal lines not yet written, when batching ([`Reporter::batch_journal`]).
    pending: Option<Vec<u8>>,
}

/// A batch of journal lines is written once it holds this many bytes, whatever comes next.
const BATCH_BYTES: usize = 64 * 1024;

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
            progress_shown: !progress.is_hidden(),
            progress,
            builder: RunBuilder::new(info),
            times: WriteTimes::default(),
            pending: None,
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

    /// The run's clock start: the `CLOCK_MONOTONIC` reading (ns) every `at_ms` counts from.
    pub fn clock_start_ns(&self) -> u64 {
        self.started_mono_ns
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

    /// Adds `count` selected cases `(id, class, runtime)` (before the run starts); the progress
    /// bar grows once, by their number.
    pub fn add_cases<'a, Id: AsRef<str>>(
        &mut self,
        count: usize,
        cases: impl IntoIterator<Item = (Id, &'a str, &'a str)>,
    ) -> Result<(), ReportError> {
        let mut n = 0;
        let mut added = Ok(());
        self.builder.reserve(count);
        for (id, class, runtime) in cases {
            added = self
                .builder
                .add_case(id.as_ref(), class, runtime)
                .map_err(ReportError::from);
            if added.is_err() {
                break;
            }
            n += 1;
        }
        self.progress.grow(n);
        added
    }

    /// Records an event: appended to the journal, shown on the bars, folded into the report. The
    /// journal line is written first, so a rejected event (an unknown case) is still on record.
    pub fn event(&mut self, event: &Event) -> Result<(), ReportError> {
        let t = Instant::now();
        let journaled = match &mut self.pending {
            None => self.journal.append(event),
            Some(buf) => match self.journal.encode(event, buf) {
                Ok(()) if buf.len() >= BATCH_BYTES => self.flush_lines(),
                other => other,
            },
        };
        self.times.journal += t.elapsed();
        // Hidden bars (`--no-progress`, no terminal) show nothing: they are not kept up to date
        // (their messages and counts cost a fifth of the event loop at 100,000 cases).
        if self.progress_shown {
            self.progress.on_event(event);
        }
        self.builder.apply(event)?;
        journaled
    }

    /// From now on journal lines are written in batches: each event's line is encoded as it
    /// happens and the batch is written by [`flush_journal`](Self::flush_journal) (the event loop
    /// calls it before it waits for anything, so every line is on disk before the run can block)
    /// or once it holds 64 KiB. A burst of events then costs one `write`, not one per event; a
    /// dispatcher killed outright (SIGKILL, a second signal) loses at most the lines of the burst
    /// it was handling.
    pub fn batch_journal(&mut self) {
        self.pending.get_or_insert_with(Vec::new);
    }

    /// Writes the journal lines batched so far (nothing when not batching).
    pub fn flush_journal(&mut self) -> Result<(), ReportError> {
        let t = Instant::now();
        let written = self.flush_lines();
        self.times.journal += t.elapsed();
        written
    }

    fn flush_lines(&mut self) -> Result<(), ReportError> {
        let Some(buf) = &mut self.pending else {
            return Ok(());
        };
        let written = self.journal.write_lines(buf);
        buf.clear();
        written
    }

    /// Ends the run: appends `run_finished`, derives the verdicts, writes `report.json`,
    /// `junit.xml` and `timeline.svg`, clears the bars and returns the report. Print
    /// [`render_summary`](cardguard_report::render_summary) of it for the closing summary.
    pub fn finish(self, flaky_result: FlakyResult) -> Result<RunReport, ReportError> {
        let (report, written) = self.finish_keeping_report(flaky_result);
        written.map(|()| report)
    }

    /// As [`finish`](Self::finish), but the report (derived from the events, whatever became of
    /// the files) comes back even when writing a file failed, with that failure beside it: the
    /// run's verdicts stand on their own.
    pub fn finish_keeping_report(self, flaky_result: FlakyResult) -> (RunReport, Result<(), ReportError>) {
        let (report, written, _) = self.finish_timed(flaky_result);
        (report, written)
    }

    /// As [`finish_keeping_report`](Self::finish_keeping_report), with the time each report file
    /// took to write.
    pub fn finish_timed(
        mut self,
        flaky_result: FlakyResult,
    ) -> (RunReport, Result<(), ReportError>, WriteTimes) {
        let duration_ms = self.elapsed_ms();
        let t = Instant::now();
        let batched = self.flush_lines();
        self.times.journal += t.elapsed();
        let report = self.builder.finish(duration_ms, flaky_result);
        let t = Instant::now();
        let journaled = self
            .journal
            .append(&Event::RunFinished {
                at_ms: duration_ms,
                summary: report.summary,
            })
            .and(batched);
        self.times.journal += t.elapsed();
        self.progress.finish();
        let mut times = self.times;
        let written = write_run_files_timed(&self.dir, &report, &mut times)
            .map(|_| ())
            .and(journaled);
        (report, written, times)
    }
}
