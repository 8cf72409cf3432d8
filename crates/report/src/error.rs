//! Errors of writing, reading and merging reports. Messages are lowercase and read after
//! "failed to ...", each naming the file or the case at fault.

use std::path::PathBuf;

/// A report could not be written, read or merged.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or directory could not be read or written.
    #[error("{action} {}", path.display())]
    Io {
        /// What was being done (`write`, `read`, `create`, ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file (or journal line) did not parse, or a value did not serialize.
    #[error("parse {}{}", path.display(), line.map(|l| format!(" line {l}")).unwrap_or_default())]
    Json {
        /// The file.
        path: PathBuf,
        /// The 1-based line, for the journal.
        line: Option<usize>,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The JUnit XML could not be serialized.
    #[error("serialize junit.xml")]
    Junit(#[source] quick_junit::SerializeError),
    /// Two merged reports both hold the same case.
    #[error("merge reports: case {id} appears in both {first} and {second}")]
    DuplicateCase {
        /// The case id.
        id: String,
        /// The first report holding it.
        first: String,
        /// The second.
        second: String,
    },
    /// Two merged reports disagree on a setting that must be the same across partitions.
    #[error("merge reports: {field} differs: {first_value} in {first} but {second_value} in {second}")]
    Mismatch {
        /// The setting (`arch`, `platform`, `flaky_result`, `run_id`).
        field: &'static str,
        /// The first report.
        first: String,
        /// Its value.
        first_value: String,
        /// The disagreeing report.
        second: String,
        /// Its value.
        second_value: String,
    },
    /// Two merged reports carry the same run id.
    #[error("merge reports: run {run_id} appears in both {first} and {second}")]
    DuplicateRun {
        /// The run id.
        run_id: String,
        /// The first report holding it.
        first: String,
        /// The second.
        second: String,
    },
    /// A directory given to merge does not exist.
    #[error("merge reports: no such directory: {}", .0.display())]
    NoSuchDir(PathBuf),
    /// A directory given to merge holds a journal and a report of different runs.
    #[error("merge reports: {} holds the report of run {report_run} but the journal of run {journal_run}", dir.display())]
    MixedRuns {
        /// The directory.
        dir: PathBuf,
        /// The run id in its `report.json`.
        report_run: String,
        /// The run id in its `journal.jsonl`.
        journal_run: String,
    },
    /// A directory given to merge holds no `report.json`.
    #[error("merge reports: {} holds no report.json", .0.display())]
    MissingReport(PathBuf),
    /// The builder was fed an inconsistent event.
    #[error(transparent)]
    Model(#[from] super::model::ModelError),
    /// Nothing to merge.
    #[error("merge reports: no report given")]
    NothingToMerge,
}

impl ReportError {
    /// An I/O error while doing `action` on `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ReportError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
