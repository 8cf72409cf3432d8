//! `report.json`: writing a finished [`RunReport`] and reading one back.
//!
//! This module owns the file's bytes (pretty JSON, replaced atomically by a rename so a reader never
//! sees half a report). It never derives or changes what the report says.

use std::fs;
use std::path::Path;

use crate::atomic::write_atomic_with;
use crate::error::ReportError;
use crate::model::RunReport;

/// The report's file name inside a report directory.
pub const REPORT_JSON: &str = "report.json";

/// Renders the report as pretty JSON (with a final newline).
pub fn to_json(report: &RunReport) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(report)?;
    s.push('\n');
    Ok(s)
}

/// Writes `report` to `path`, replacing it atomically: rendered straight into the file through a
/// buffer, never held whole in memory.
pub fn write_report(path: &Path, report: &RunReport) -> Result<(), ReportError> {
    write_atomic_with(path, |w| {
        serde_json::to_writer_pretty(&mut *w, report).map_err(std::io::Error::from)?;
        w.write_all(b"\n")
    })
}

/// Reads a `report.json`.
pub fn read_report(path: &Path) -> Result<RunReport, ReportError> {
    let text = fs::read_to_string(path).map_err(|e| ReportError::io("read", path, e))?;
    serde_json::from_str(&text).map_err(|source| ReportError::Json {
        path: path.to_owned(),
        line: None,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_report_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_report(&dir.path().join("report.json")).unwrap_err();
        assert!(err.to_string().starts_with("read "), "{err}");
        assert!(err.to_string().ends_with("report.json"), "{err}");
    }
}
