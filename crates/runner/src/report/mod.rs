//! Reports of a run, as the runner writes them while it goes: `journal.jsonl` event by event, then
//! `report.json`, `junit.xml` and `timeline.svg`, the console's progress bars and closing summary.
//!
//! The report model, its files, the summary, the picture and the merge are the `cardguard-report`
//! crate's (what tools link without the runner); they are re-exported here, so
//! `crate::report::...` names them as before. This module adds what only a live run has: the
//! progress bars ([`console`]), the report directory held for the run ([`ReportDir`]: held, cleared
//! of an earlier run's files, never written through a symlink) and the [`Reporter`], which fans
//! the dispatcher's [`Event`]s out to the journal, the bars and the [`RunBuilder`] and writes the
//! files at the end. It never decides a verdict's inputs (the dispatcher does) and never runs a
//! case.

pub mod console;
pub mod dir;
pub mod reporter;

pub use cardguard_report::{
    journal_run_id, merge, model, read_journal, read_report, read_run_dirs, render_summary, rfc3339_utc,
    timeline, to_junit_string, verdict, write_junit, write_merged, write_report, write_run_files,
    write_run_files_timed, write_timeline, Attempt, AttemptOutcome, CardEvent, CaseReport, DriverReport,
    ErrorReport, Event, FlakyResult, HealthRecord, Interruption, Journal, LaneStatus, MergeSource,
    ModelError, Outcome, PartitionReport, Platform, ReportError, ReportPaths, RunBuilder, RunInfo, RunReport,
    RunnerEvent, RunnerEventKind, Summary, WorkerAction, WriteTimes, JOURNAL_JSONL, JUNIT_XML, REPORT_JSON,
    TIMELINE_SVG,
};
pub use console::Progress;
pub use dir::{ReportDir, ReportDirError};
pub use reporter::Reporter;
