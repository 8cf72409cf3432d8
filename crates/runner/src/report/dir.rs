//! The report directory of one run: held exclusively for the run, cleared of an earlier run's
//! files before it starts, and never written through a symlink.
//!
//! A run takes an exclusive `flock` on a lock file in the directory ([`LOCK_FILE`], opened with
//! `O_NOFOLLOW`; it records the holder's pid and run id), so a second run on the same directory
//! is refused naming the holder instead of interleaving one journal. Once held, the files a run
//! writes ([`OWN_FILES`], and temporary files of [`TEMP_PREFIX`]) are removed, so a re-run never
//! leaves an old `report.json` beside a new journal; any other file is the user's and stays. A
//! name of [`OWN_FILES`] that is not a regular file (a symlink, a directory) is refused, never
//! followed or removed. The lock file is removed when the run lets go of the directory; a run
//! that takes the lock checks that the path still names the inode it locked, so a lock file
//! removed between its open and its lock is never trusted.
//!
//! This file owns the directory's exclusion and clearing. It never writes a report (the writers
//! do, each file opened `O_NOFOLLOW` or created under a `tempfile` name and renamed).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{flock, FlockOperation};

use cardguard_report::{
    ReportError, JOURNAL_JSONL, JUNIT_XML, REPORT_JSON, TEMP_PREFIX, TEMP_SUFFIX, TIMELINE_SVG,
};

/// The lock file's name inside a report directory (removed when the run ends).
pub const LOCK_FILE: &str = ".cardguard.lock";

/// The files a run writes into its report directory (and removes before it starts).
pub const OWN_FILES: [&str; 4] = [REPORT_JSON, JUNIT_XML, JOURNAL_JSONL, TIMELINE_SVG];

/// The report directory cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum ReportDirError {
    /// Another run holds it.
    #[error("report dir {} is in use by {holder} (lock file {})", dir.display(), dir.join(LOCK_FILE).display())]
    Held {
        /// The directory.
        dir: PathBuf,
        /// Who holds it, as its lock file says.
        holder: String,
    },
    /// A name the run writes is taken by something that is not a regular file.
    #[error("report dir {}: {name} is {what}; refusing to follow or remove it", dir.display())]
    NotAFile {
        /// The directory.
        dir: PathBuf,
        /// The name.
        name: &'static str,
        /// What it is (`a symlink`, `a directory`, ...).
        what: &'static str,
    },
    /// The directory or its lock file cannot be created, locked or cleared.
    #[error(transparent)]
    Io(#[from] ReportError),
}

/// A report directory held by this run (released, and its lock file removed, on drop).
#[derive(Debug)]
pub struct ReportDir {
    path: PathBuf,
    lock: File,
    /// Whether this run created the directory (then it is removed again if the run leaves it
    /// empty, e.g. when the run was refused its cards).
    created: bool,
}

impl ReportDir {
    /// Creates `dir` if missing and takes its lock for `run_id`. The run clears it with
    /// [`clear`](Self::clear) once it starts (a run refused before that, e.g. for a held card,
    /// leaves an earlier run's reports alone).
    pub fn open(dir: &Path, run_id: &str) -> Result<Self, ReportDirError> {
        let created = !dir.exists();
        std::fs::create_dir_all(dir).map_err(|e| ReportError::io("create", dir, e))?;
        let lock = lock(dir)?;
        let mut held = Self {
            path: dir.to_owned(),
            lock,
            created,
        };
        held.write_holder(run_id)?;
        Ok(held)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_holder(&mut self, run_id: &str) -> Result<(), ReportError> {
        let path = self.path.join(LOCK_FILE);
        let record = format!("pid={}\nrun_id={run_id}\n", std::process::id());
        self.lock
            .set_len(0)
            .and_then(|()| self.lock.seek(SeekFrom::Start(0)))
            .and_then(|_| self.lock.write_all(record.as_bytes()))
            .map_err(|e| ReportError::io("write", path, e))
    }

    /// Removes [`OWN_FILES`] and stale temporary files; refuses a name of [`OWN_FILES`] that is
    /// not a regular file.
    pub fn clear(&self) -> Result<(), ReportDirError> {
        for name in OWN_FILES {
            let path = self.path.join(name);
            let meta = match std::fs::symlink_metadata(&path) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(ReportError::io("inspect", path, e).into()),
            };
            let ft = meta.file_type();
            if !ft.is_file() {
                let what = if ft.is_symlink() {
                    "a symlink"
                } else if ft.is_dir() {
                    "a directory"
                } else {
                    "not a regular file"
                };
                return Err(ReportDirError::NotAFile {
                    dir: self.path.clone(),
                    name,
                    what,
                });
            }
            remove(&path)?;
        }
        let entries = std::fs::read_dir(&self.path).map_err(|e| ReportError::io("read", &self.path, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let temp = name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX);
            if temp && entry.file_type().is_ok_and(|t| t.is_file()) {
                remove(&entry.path())?;
            }
        }
        Ok(())
    }
}

impl Drop for ReportDir {
    /// Removes the lock file while it is still held, then releases it: a run that opened the
    /// file before it went sees that its path no longer names what it locked, and retries.
    fn drop(&mut self) {
        let path = self.path.join(LOCK_FILE);
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::debug!(path = %path.display(), "cannot remove the report dir's lock file: {e}");
        }
        if self.created {
            // Only when empty: a run that wrote its reports keeps them.
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

fn remove(path: &Path) -> Result<(), ReportError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ReportError::io("remove", path, e)),
    }
}

/// Opens and locks `dir`'s lock file, retrying while the path names another inode than the one
/// locked (the holder before removed it as it ended).
fn lock(dir: &Path) -> Result<File, ReportDirError> {
    let path = dir.join(LOCK_FILE);
    loop {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o644)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .map_err(|e| ReportError::io("open", &path, e))?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(ReportDirError::Held {
                    dir: dir.to_owned(),
                    holder: holder(&text),
                });
            }
            Err(e) => return Err(ReportError::io("lock", &path, e.into()).into()),
        }
        let locked = file
            .metadata()
            .map_err(|e| ReportError::io("inspect", &path, e))?;
        match std::fs::symlink_metadata(&path) {
            Ok(now) if now.dev() == locked.dev() && now.ino() == locked.ino() => return Ok(file),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ReportError::io("inspect", &path, e).into()),
        }
    }
}

/// The holder as its lock file's record says: `run R (pid P)`.
fn holder(record: &str) -> String {
    let field = |key: &str| {
        record
            .lines()
            .find_map(|l| l.strip_prefix(key).map(str::trim))
            .filter(|v| !v.is_empty())
    };
    match (field("run_id="), field("pid=")) {
        (Some(run), Some(pid)) => format!("run {run} (pid {pid})"),
        (Some(run), None) => format!("run {run}"),
        (None, Some(pid)) => format!("pid {pid}"),
        (None, None) => "another run (its lock record is empty)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_naming_the_first() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("r");
        let first = ReportDir::open(&dir, "run-a").unwrap();
        let err = ReportDir::open(&dir, "run-b").unwrap_err();
        assert!(
            matches!(&err, ReportDirError::Held { holder, .. } if holder.contains("run run-a")),
            "{err}"
        );
        assert!(err.to_string().contains(&std::process::id().to_string()), "{err}");
        drop(first);
        assert!(
            !dir.exists(),
            "the dir it created and left empty goes with its holder"
        );
        std::fs::create_dir(&dir).unwrap();
        let first = ReportDir::open(&dir, "run-a").unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        drop(first);
        assert!(
            !dir.join(LOCK_FILE).exists(),
            "the lock file goes with its holder"
        );
        assert!(dir.join("notes.txt").is_file(), "a dir it did not create stays");
        let _again = ReportDir::open(&dir, "run-b").expect("free once the first let go");
        assert!(dir.join(LOCK_FILE).is_file());
    }

    #[test]
    fn an_earlier_runs_files_go_and_the_users_stay() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for name in OWN_FILES
            .iter()
            .copied()
            .chain([".cardguard-x1y2.tmp", "notes.txt"])
        {
            std::fs::write(dir.join(name), "old").unwrap();
        }
        std::fs::create_dir(dir.join(".cardguard-dir.tmp")).unwrap();
        let held = ReportDir::open(dir, "run").unwrap();
        held.clear().unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [".cardguard-dir.tmp", LOCK_FILE, "notes.txt"]);
    }

    #[test]
    fn a_symlink_or_directory_in_a_reports_place_is_refused_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        let dir = tmp.path().join("r");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&target, dir.join(JOURNAL_JSONL)).unwrap();
        let held = ReportDir::open(&dir, "run").unwrap();
        let err = held.clear().unwrap_err();
        assert!(
            matches!(
                err,
                ReportDirError::NotAFile {
                    name: JOURNAL_JSONL,
                    what: "a symlink",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert!(dir.join(JOURNAL_JSONL).is_symlink(), "left alone");
        std::fs::remove_file(dir.join(JOURNAL_JSONL)).unwrap();
        std::fs::create_dir(dir.join(REPORT_JSON)).unwrap();
        let err = held.clear().unwrap_err();
        assert!(err.to_string().contains("report.json is a directory"), "{err}");
    }

    #[test]
    fn a_symlinked_lock_file_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        let dir = tmp.path().join("r");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&target, dir.join(LOCK_FILE)).unwrap();
        let err = ReportDir::open(&dir, "run").unwrap_err();
        assert!(err.to_string().starts_with("open "), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn holder_records_read_back() {
        assert_eq!(holder("pid=7\nrun_id=r1\n"), "run r1 (pid 7)");
        assert_eq!(holder("pid=7\n"), "pid 7");
        assert_eq!(holder(""), "another run (its lock record is empty)");
    }
}
