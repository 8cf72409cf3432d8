//! `report.json`: writing a finished [`RunReport`] and reading one back.
//!
//! This module owns the file's bytes (pretty JSON, replaced atomically by a rename so a reader never
//! sees half a report). It never derives or changes what the report says.

use std::fs;
use std::path::Path;

use super::error::ReportError;
use super::model::RunReport;

/// The report's file name inside a report directory.
pub const REPORT_JSON: &str = "report.json";

/// Renders the report as pretty JSON (with a final newline).
pub fn to_json(report: &RunReport) -> Result<String, serde_json::Error> {
    let mut s = serde_json::to_string_pretty(report)?;
    s.push('\n');
    Ok(s)
}

/// Writes `report` to `path`, replacing it atomically.
pub fn write_report(path: &Path, report: &RunReport) -> Result<(), ReportError> {
    let text = to_json(report).map_err(|source| ReportError::Json {
        path: path.to_owned(),
        line: None,
        source,
    })?;
    write_atomic(path, text.as_bytes())
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

/// Writes `bytes` to a sibling temporary file and renames it over `path`.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    fs::write(&tmp, bytes).map_err(|e| ReportError::io("write", &tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        ReportError::io("write", path, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_missing_report_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_report(&dir.path().join("report.json")).unwrap_err();
        assert!(err.to_string().starts_with("read "), "{err}");
        assert!(err.to_string().ends_with("report.json"), "{err}");
    }
}
