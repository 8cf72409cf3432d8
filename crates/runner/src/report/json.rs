//! `report.json`: writing a finished [`RunReport`] and reading one back.
//!
//! This module owns the file's bytes (pretty JSON, replaced atomically by a rename so a reader never
//! sees half a report). It never derives or changes what the report says.

use std::fs;
use std::io::{BufWriter, Write};
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

/// Writes `bytes` to a sibling temporary file with an unpredictable name (created exclusively by
/// `tempfile`, so never through a symlink) and renames it over `path` (a rename replaces a
/// symlink at `path`, never follows it). The temporary file is removed when anything fails.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// As [`write_atomic`], the bytes written by `render` through a 1 MiB buffer.
pub(crate) fn write_atomic_with(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), ReportError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(super::dir::TEMP_PREFIX)
        .suffix(super::dir::TEMP_SUFFIX)
        // As any report file: readable by all, as the umask allows (tempfile's own is 0600).
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| ReportError::io("create a temporary file in", dir, e))?;
    let tmp_path = tmp.path().to_owned();
    let mut buf = BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
    render(&mut buf)
        .and_then(|()| buf.flush())
        .map_err(|e| ReportError::io("write", tmp_path, e))?;
    drop(buf);
    tmp.persist(path)
        .map_err(|e| ReportError::io("write", path, e.error))?;
    Ok(())
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
        let status = fs::read_to_string("/proc/self/status").unwrap();
        let umask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
            .unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode,
            0o666 & !umask,
            "a report is as readable as any file the umask allows"
        );
    }

    #[test]
    fn a_symlink_in_the_reports_place_is_replaced_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        fs::write(&target, "keep").unwrap();
        let path = dir.path().join("report.json");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
        assert!(!path.is_symlink());
        assert_eq!(fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn a_missing_report_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_report(&dir.path().join("report.json")).unwrap_err();
        assert!(err.to_string().starts_with("read "), "{err}");
        assert!(err.to_string().ends_with("report.json"), "{err}");
    }
}
