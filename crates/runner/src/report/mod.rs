//! Reports of a run: `report.json`, `junit.xml`, `journal.jsonl`, `timeline.svg`, the console's
//! progress bars and closing summary, and the join of partitioned runs.
//!
//! This module owns how a run is recorded and shown, and its report directory ([`ReportDir`]:
//! held for the run, cleared of an earlier run's files, never written through a symlink). It never decides a verdict's inputs (the
//! dispatcher does) and never runs a case. As in nextest, every writer is independent and fed by the
//! same data: the [`Event`]s as they happen and the finished [`RunReport`], whose case outcomes and
//! summary are derived from the stored attempts ([`verdict`]). [`Reporter`] fans events out to the
//! journal, the progress bars and the [`RunBuilder`], and writes the files at the end.

pub mod console;
pub mod dir;
pub mod error;
pub mod journal;
pub mod json;
pub mod junit;
pub mod merge;
pub mod model;
pub mod reporter;
pub mod timeline;
pub mod timeline_rows;

pub use console::{render_summary, Progress};
pub use dir::{ReportDir, ReportDirError};
pub use error::ReportError;
pub use journal::{journal_run_id, read_journal, Journal, JOURNAL_JSONL};
pub use json::{read_report, write_report, REPORT_JSON};
pub use junit::{to_junit_string, write_junit, JUNIT_XML};
pub use merge::{merge, read_run_dirs, write_merged, MergeSource};
pub use model::{
    rfc3339_utc, verdict, Attempt, AttemptOutcome, CardEvent, CaseReport, DriverReport, ErrorReport, Event,
    FlakyResult, HealthRecord, Interruption, LaneStatus, ModelError, Outcome, PartitionReport, Platform,
    RunBuilder, RunInfo, RunReport, RunnerEvent, RunnerEventKind, Summary, WorkerAction,
};
pub use reporter::{write_run_files, write_run_files_timed, ReportPaths, Reporter, WriteTimes};
pub use timeline::{write_timeline, TIMELINE_SVG};
