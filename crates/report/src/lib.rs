//! cardguard's reports: what a run leaves behind and what a tool reads, merges and shows, linked
//! without the runner (as nextest keeps its machine-readable formats in `nextest-metadata`).
//!
//! - [`model`]: the schema of `report.json` ([`RunReport`]), the journal's public event vocabulary
//!   ([`Event`]), the fold from events to the report ([`RunBuilder`]) and the verdict rule
//!   ([`verdict`]: store the attempts, derive the outcome);
//! - [`json`]: `report.json` written and read back; [`journal`]: `journal.jsonl`, appended one
//!   whole line per event and read back; [`junit`]: `junit.xml`; [`timeline`]: `timeline.svg`,
//!   the run's picture (one row per card); [`run_files`]: a finished run's three files written at
//!   once; [`atomic`]: how every file is replaced (never half written, never through a symlink);
//! - [`merge`](mod@merge): partitioned runs joined into one report (`cargo cardguard merge-reports`);
//! - [`history`]: the duration history per suite and arch (what `--order smart` and
//!   `--partition duration:K/N` plan from), written by a run and by `merge-reports --history`;
//! - [`summary`]: the closing summary for people, and a card's health story;
//! - [`error`]: [`ReportError`], what failed and on which file.
//!
//! Design choices: the writers are independent and fed by the same data (the finished report, or
//! the events as they happen), so a tool that read a `report.json` renders the same JUnit,
//! timeline and summary the run did; the picture and the summary live here, not in the runner,
//! because they are pure functions of a report. What only a live run has stays in the runner: the
//! progress bars, the report directory held for the run, the reporter that fans events out.

pub mod atomic;
pub mod error;
pub mod history;
pub mod journal;
pub mod json;
pub mod junit;
pub mod merge;
pub mod model;
pub mod run_files;
pub mod summary;
pub mod timeline;
mod timeline_rows;

pub use atomic::{write_atomic, write_atomic_with, TEMP_PREFIX, TEMP_SUFFIX};
pub use error::ReportError;
pub use journal::{journal_run_id, read_journal, Journal, JOURNAL_JSONL};
pub use json::{read_report, write_report, REPORT_JSON};
pub use junit::{to_junit_string, write_junit, JUNIT_XML};
pub use merge::{merge, read_run_dirs, write_merged, MergeSource};
pub use model::{
    rfc3339_utc, verdict, Attempt, AttemptOutcome, CardEvent, CaseReport, DriverReport, ErrorReport, Event,
    FlakyResult, HealthRecord, Interruption, LaneStatus, ModelError, Outcome, PartitionReport, Platform,
    RunBuilder, RunInfo, RunReport, RunnerEvent, RunnerEventKind, Summary, UnfiredFault, WorkerAction,
};
pub use run_files::{write_run_files, write_run_files_timed, ReportPaths, WriteTimes};
pub use summary::{health_step, health_story, render_summary, short_code};
pub use timeline::{write_timeline, TIMELINE_SVG};
