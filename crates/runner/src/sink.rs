//! The poison sink: how a lane that cannot recover its card in-process tells the dispatcher which
//! selectors it could not run (DESIGN section 5, steps 4 and 5).
//!
//! The dispatcher creates the file exclusively (`O_EXCL`, mode 0600, an unpredictable name from
//! `tempfile`) in the run's private directory ([`SinkDir`], mode 0700, removed with everything
//! in it when the run ends) and names it to the lane in [`ENV_POISON_SINK`]. The lane appends one JSON record per single
//! `O_APPEND` write (never creating the file), so records of concurrent writers never interleave;
//! a failed write warns and never turns a skip into an error. After the lane exits, for any
//! reason, the dispatcher reads the file (skipping malformed lines with a warning), deduplicates the
//! selectors in order and deletes it. Only poison skips enter a sink: legitimate skips never do.
//!
//! This module owns the file format and both ends of the file. It never decides what to re-run.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use platform_common::{Code, DeviceId};
use serde::{Deserialize, Serialize};

pub use crate::protocol::ENV_POISON_SINK;

/// One record: a selector a lane could not run because its card was poisoned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SinkRecord {
    /// What to re-run: `Class::` when none of the class had run yet, else `Class::case`.
    pub selector: String,
    /// The case this record is for (`Class::case`).
    pub case: String,
    /// The case's runtime.
    pub runtime: String,
    /// The card.
    pub device: DeviceId,
    /// The code (with its space) of the error that made the card unrecoverable in-process, if
    /// any.
    pub code: Option<Code>,
    /// Why, for people.
    pub reason: String,
}

/// The run's private directory of sinks: created 0700 under the temp dir with an unpredictable
/// name, removed (with any sink left in it) when dropped.
#[derive(Debug)]
pub struct SinkDir(tempfile::TempDir);

impl SinkDir {
    /// Creates the directory.
    pub fn create() -> io::Result<Self> {
        use std::os::unix::fs::PermissionsExt;
        tempfile::Builder::new()
            .prefix("cardguard-sinks-")
            .permissions(fs::Permissions::from_mode(0o700))
            .tempdir()
            .map(Self)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// The dispatcher's end: a sink it created for one lane.
#[derive(Debug)]
pub struct Sink {
    path: PathBuf,
}

impl Sink {
    /// Creates an empty sink with an unpredictable name in `dir`: exclusively, mode 0600.
    pub fn create(dir: &Path, device: DeviceId) -> io::Result<Self> {
        let (_file, path) = tempfile::Builder::new()
            .prefix(&format!("poison-sink-card{device}-"))
            .suffix(".jsonl")
            .rand_bytes(16)
            .tempfile_in(dir)?
            .keep()
            .map_err(|e| e.error)?;
        Ok(Self { path })
    }

    /// The file, for [`ENV_POISON_SINK`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the records (malformed lines skipped with a warning, and listed), deduplicated by
    /// selector in order, and deletes the file. A missing or unreadable file reads as empty, with
    /// a warning.
    pub fn take(self) -> SinkContents {
        let mut contents = read_records(&self.path);
        if let Err(e) = fs::remove_file(&self.path) {
            if e.kind() != io::ErrorKind::NotFound {
                tracing::warn!(path = %self.path.display(), "cannot delete the poison sink: {e}");
            }
        }
        contents.records = dedupe(std::mem::take(&mut contents.records));
        contents
    }
}

/// What a sink file held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SinkContents {
    /// The records, in file order ([`Sink::take`] deduplicates them by selector).
    pub records: Vec<SinkRecord>,
    /// The 1-based numbers of the lines that were not a record: skipped, each with a warning.
    pub malformed_lines: Vec<usize>,
}

/// Reads a sink file's records, skipping malformed lines with a warning (their numbers are
/// returned too, so the dispatcher can journal them).
pub fn read_records(path: &Path) -> SinkContents {
    let mut out = SinkContents::default();
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            if e.kind() != io::ErrorKind::NotFound {
                tracing::warn!(path = %path.display(), "cannot read the poison sink: {e}");
            }
            return out;
        }
    };
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<SinkRecord>(line) {
            Ok(r) => out.records.push(r),
            Err(e) => {
                tracing::warn!(
                    path = %path.display(),
                    line = i + 1,
                    "skipping a malformed poison-sink line: {e}"
                );
                out.malformed_lines.push(i + 1);
            }
        }
    }
    out
}

/// Keeps the first record of each selector, in order.
pub fn dedupe(records: Vec<SinkRecord>) -> Vec<SinkRecord> {
    let mut seen = std::collections::HashSet::new();
    records
        .into_iter()
        .filter(|r| seen.insert(r.selector.clone()))
        .collect()
}

/// The lane's end: appends records to the sink it was given.
#[derive(Debug)]
pub struct SinkWriter {
    path: PathBuf,
    file: Option<File>,
}

impl SinkWriter {
    /// The sink named in [`ENV_POISON_SINK`], if any (a fresh lane has none).
    pub fn from_env() -> Option<Self> {
        std::env::var_os(ENV_POISON_SINK)
            .filter(|v| !v.is_empty())
            .map(|p| Self::new(PathBuf::from(p)))
    }

    /// A writer for the sink at `path` (opened on first use, never created).
    pub fn new(path: PathBuf) -> Self {
        Self { path, file: None }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record in one `O_APPEND` write. Returns whether it was written; a failure is
    /// a warning, never an error.
    pub fn append(&mut self, record: &SinkRecord) -> bool {
        match self.try_append(record) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(
                    path = %self.path.display(),
                    case = %record.case,
                    "cannot write the poison sink ({e}); the case is not lost: the dispatcher \
                     re-runs what its lane did not finish"
                );
                false
            }
        }
    }

    fn try_append(&mut self, record: &SinkRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        if self.file.is_none() {
            self.file = Some(OpenOptions::new().append(true).open(&self.path)?);
        }
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("sink not open"))?;
        let n = file.write(&line)?;
        if n != line.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("short write: {n} of {} bytes", line.len()),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn rec(sel: &str, case: &str) -> SinkRecord {
        SinkRecord {
            selector: sel.into(),
            case: case.into(),
            runtime: "rt".into(),
            device: 1,
            code: Some(platform_common::error::codes::RT_DRV_INTERNAL_ERROR),
            reason: "poisoned".into(),
        }
    }

    #[test]
    fn created_exclusive_private_and_unpredictable() {
        let dir = tempfile::tempdir().unwrap();
        let a = Sink::create(dir.path(), 0).unwrap();
        let b = Sink::create(dir.path(), 0).unwrap();
        assert_ne!(a.path(), b.path());
        let mode = fs::metadata(a.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(a.take(), SinkContents::default());
    }

    #[test]
    fn the_sink_dir_is_private_and_goes_with_its_sinks() {
        let dir = SinkDir::create().unwrap();
        let path = dir.path().to_owned();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let sink = Sink::create(dir.path(), 3).unwrap();
        assert!(sink.path().starts_with(&path));
        let name = sink.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("poison-sink-card3-") && name.ends_with(".jsonl"),
            "{name}"
        );
        drop(dir);
        assert!(!path.exists(), "removed with the sink left in it");
    }

    #[test]
    fn round_trip_dedupes_in_order_and_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let sink = Sink::create(dir.path(), 1).unwrap();
        let mut w = SinkWriter::new(sink.path().to_owned());
        for r in [rec("B::", "B::x"), rec("A::y", "A::y"), rec("B::", "B::z")] {
            assert!(w.append(&r));
        }
        let path = sink.path().to_owned();
        let got = sink.take();
        assert_eq!(got.records, vec![rec("B::", "B::x"), rec("A::y", "A::y")]);
        assert!(got.malformed_lines.is_empty());
        assert!(!path.exists());
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let sink = Sink::create(dir.path(), 1).unwrap();
        let good = serde_json::to_string(&rec("A::", "A::x")).unwrap();
        let text = format!("{{\"selector\": 3}}\n\ngarbage\n{good}\n{{\"selector\":\"trunc");
        fs::write(sink.path(), text).unwrap();
        let got = sink.take();
        assert_eq!(got.records, vec![rec("A::", "A::x")]);
        assert_eq!(got.malformed_lines, [1, 3, 5], "each skipped line is reported");
    }

    #[test]
    fn a_missing_sink_warns_and_never_errors() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SinkWriter::new(dir.path().join("gone.jsonl"));
        assert!(
            !w.append(&rec("A::", "A::x")),
            "the writer never creates the file"
        );
        assert!(!dir.path().join("gone.jsonl").exists());
    }
}
