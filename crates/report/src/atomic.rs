//! Replacing a report file atomically: written to a sibling temporary file of an unpredictable
//! name ([`TEMP_PREFIX`]...[`TEMP_SUFFIX`]) and renamed over the file, so a reader never sees half
//! a file and a symlink in the file's place is replaced, never followed.
//!
//! This file owns the temporary files' names and the replacement. It never decides what a file
//! holds (the writers do) and never removes a file it did not create.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::error::ReportError;

/// The prefix of the temporary files the report writers create (then rename into place).
pub const TEMP_PREFIX: &str = ".cardguard-";

/// The suffix of those temporary files.
pub const TEMP_SUFFIX: &str = ".tmp";

/// Writes `bytes` to a sibling temporary file with an unpredictable name (created exclusively by
/// `tempfile`, so never through a symlink) and renames it over `path` (a rename replaces a
/// symlink at `path`, never follows it). The temporary file is removed when anything fails.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// As [`write_atomic`], the bytes written by `render` through a 1 MiB buffer.
pub fn write_atomic_with(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), ReportError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
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
}
