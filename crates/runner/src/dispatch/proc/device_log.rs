//! One lane's private device-log directory (its `ASCEND_PROCESS_LOG_PATH`) as its watcher reads
//! it: what the runtime appended to its log files since the last read, at each case boundary and
//! at the lane's exit, so an attempt's device log reaches the event loop between its `started`
//! and its `finished` (as its stdout does).
//!
//! CANN's runtime writes its host-side logs (and the device-side logs it receives) as
//! `plog-<pid>_<time>.log` / `device-<pid>_<time>.log` files under that directory, in `debug/`
//! and `run/` subdirectories (CANN log reference, "Log Overview" and "Viewing Logs":
//! hiascend.com/document/detail/en/canncommercial/850/maintenref/logreference/logreference_0001.html).
//! The reader takes every `*.log` file under the directory, at any depth, in path order, and reads
//! each from where it stopped last time; a file that shrank (rotated) is read again from its
//! start. At most [`READ_LIMIT`] bytes are read per file and boundary: the attempt keeps its last
//! [`crate::report::model::CAPTURE_LIMIT`] bytes anyway.
//!
//! This file owns the directory: made (0700) before the lane starts, read, and removed when the
//! lane has exited. It never decides whether an attempt keeps its log (the state machine does).

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The variable CANN's runtime takes its log directory from.
pub const ENV_PROCESS_LOG_PATH: &str = "ASCEND_PROCESS_LOG_PATH";

/// The most bytes read of one file at one boundary (the earlier ones are skipped).
const READ_LIMIT: u64 = 256 * 1024;

/// A lane's device-log directory and how far each file in it has been read.
#[derive(Debug)]
pub struct DeviceLogDir {
    root: PathBuf,
    read: BTreeMap<PathBuf, u64>,
}

impl DeviceLogDir {
    /// Makes the directory `root` (mode 0700; a left-over one is emptied first).
    pub fn create(root: PathBuf) -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        if root.exists() {
            fs::remove_dir_all(&root)?;
        }
        fs::DirBuilder::new().mode(0o700).create(&root)?;
        Ok(Self {
            root,
            read: BTreeMap::new(),
        })
    }

    /// Its path, for the lane's [`ENV_PROCESS_LOG_PATH`].
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// What was appended to the log files since the last call, file after file in path order
    /// (empty when nothing was). A file that cannot be read is skipped (it is tried again next
    /// time).
    pub fn read_new(&mut self) -> Vec<u8> {
        let mut files = Vec::new();
        collect(&self.root, &mut files, 0);
        files.sort();
        let mut out = Vec::new();
        for f in files {
            let done = self.read.get(&f).copied().unwrap_or(0);
            if let Some(end) = read_from(&f, done, &mut out) {
                self.read.insert(f, end);
            }
        }
        out
    }
}

impl Drop for DeviceLogDir {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.root) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(dir = %self.root.display(), "cannot remove a lane's device-log directory: {e}");
            }
        }
    }
}

/// The `*.log` files under `dir` (at most 4 levels down; symlinks are not followed).
fn collect(dir: &Path, files: &mut Vec<PathBuf>, depth: u32) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let Ok(ty) = e.file_type() else { continue };
        let p = e.path();
        if ty.is_dir() && depth < 4 {
            collect(&p, files, depth + 1);
        } else if ty.is_file() && p.extension().is_some_and(|x| x == "log") {
            files.push(p);
        }
    }
}

/// Appends `file`'s bytes from `done` on to `out` (a shrunk file from its start; at most
/// [`READ_LIMIT`], the last ones); the offset read up to, or `None` when it cannot be read.
fn read_from(file: &Path, done: u64, out: &mut Vec<u8>) -> Option<u64> {
    let mut f = fs::File::open(file).ok()?;
    let len = f.metadata().ok()?.len();
    let from = if len < done { 0 } else { done };
    if len == from {
        return Some(len);
    }
    let start = from.max(len.saturating_sub(READ_LIMIT));
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut buf = Vec::new();
    f.take(len - start).read_to_end(&mut buf).ok()?;
    out.extend_from_slice(&buf);
    Some(start + buf.len() as u64)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn append(p: &Path, text: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut f = fs::OpenOptions::new().create(true).append(true).open(p).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn each_read_gives_what_was_appended_since_the_last_in_path_order() {
        let tmp = tempfile::tempdir().unwrap();
        let mut d = DeviceLogDir::create(tmp.path().join("lane0")).unwrap();
        assert!(d.read_new().is_empty(), "a fresh directory has nothing");
        let plog = d.path().join("debug/plog/plog-7_20261203.log");
        let dev = d.path().join("debug/device-0/device-7_20261203.log");
        append(&plog, "[ERROR] RUNTIME(7,lane):a\n");
        append(&dev, "[ERROR] DRV(7,lane):b\n");
        append(&d.path().join("debug/plog/notes.txt"), "not a log\n");
        assert_eq!(
            String::from_utf8(d.read_new()).unwrap(),
            "[ERROR] DRV(7,lane):b\n[ERROR] RUNTIME(7,lane):a\n"
        );
        assert!(d.read_new().is_empty(), "nothing new: nothing again");
        append(&plog, "[ERROR] RUNTIME(7,lane):c\n");
        assert_eq!(
            String::from_utf8(d.read_new()).unwrap(),
            "[ERROR] RUNTIME(7,lane):c\n"
        );
        // A rotated (shrunk) file is read from its start.
        fs::write(&plog, "new\n").unwrap();
        assert_eq!(String::from_utf8(d.read_new()).unwrap(), "new\n");
    }

    #[test]
    fn a_huge_append_gives_its_last_bytes_and_the_directory_goes_with_the_reader() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("lane1");
        let mut d = DeviceLogDir::create(root.clone()).unwrap();
        let plog = d.path().join("debug/plog/plog-1_0.log");
        append(&plog, &"x".repeat(READ_LIMIT as usize + 10));
        append(&plog, "END\n");
        let got = d.read_new();
        assert_eq!(got.len() as u64, READ_LIMIT);
        assert!(got.ends_with(b"END\n"));
        drop(d);
        assert!(!root.exists(), "the directory is removed with its reader");
    }
}
