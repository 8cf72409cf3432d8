//! A small file in the sim root that is replaced whole, never rewritten in place, under a lock
//! file of its own.
//!
//! Why: a record rewritten by truncate-then-write is empty for a moment, and a process killed in
//! that moment (a lane SIGKILLed by the watchdog) leaves an empty file behind. Here a new record
//! is written to a temp file in the same directory, with an unpredictable name (`tempfile`), then
//! renamed over the record (`renameat`, atomic): every reader sees the old record or the new one,
//! whole, whatever moment a writer dies at. A killed writer leaves at most a stray temp file,
//! which [`RecordFile::remove_strays`] removes.
//!
//! The lock: writers serialise on `flock` of a separate lock file (`<name>.lock`, created once,
//! never renamed or deleted). It cannot be the record itself, whose inode changes at every rename:
//! a lock on the old inode would not exclude a writer that opened the new one. Readers take no
//! lock (a rename is atomic for them).
//!
//! Durability: no `fsync`. What must survive is a killed process, not a host crash: the kernel's
//! page cache holds the data and the rename in order for every other process, and a host crash
//! ends the run anyway (the next run installs its plan and zeroes its counters at its start). An
//! `fsync` per launch would cost milliseconds on a disk for nothing the sim promises.
//!
//! Files are opened relative to the checked sim root descriptor and never through a symlink
//! (`lease::private_dir`). This file knows nothing of what a record says (`card_file.rs` does).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{
    flock, fstat, openat, renameat, unlinkat, AtFlags, Dir, FileType, FlockOperation, Mode, OFlags,
};
use rustix::io::Errno;

use super::error::SimError;
use crate::lease::private_dir::{open_private_dir, open_state_file, Refusal};

/// One record file of the sim root and its lock file.
#[derive(Debug)]
pub(crate) struct RecordFile {
    root: OwnedFd,
    root_path: PathBuf,
    lock: File,
    name: String,
    path: PathBuf,
}

/// An exclusive hold of a record's lock file; released when dropped.
#[derive(Debug)]
pub(crate) struct Exclusive<'a>(&'a RecordFile);

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        // Closing the lock file would release it too; an unlock failure leaves nothing to repair.
        let _ = flock(&self.0.lock, FlockOperation::Unlock);
    }
}

impl RecordFile {
    /// The record `name` in the sim root `root` (created 0700 when missing, checked: a directory
    /// of this user, not a symlink), with its lock file (created 0600 once).
    pub(crate) fn open(root: &Path, name: &str) -> Result<Self, SimError> {
        let root_fd = open_private_dir(root, 0o700).map_err(|r| refused(root, r))?;
        let lock_name = format!("{name}.lock");
        let lock =
            open_state_file(&root_fd, &lock_name, 0o600).map_err(|r| refused(&root.join(&lock_name), r))?;
        Ok(Self {
            root: root_fd,
            root_path: root.to_owned(),
            lock,
            name: name.to_owned(),
            path: root.join(name),
        })
    }

    /// The record's path (for messages).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Takes the lock file exclusively (waiting for another writer).
    pub(crate) fn exclusive(&self) -> Result<Exclusive<'_>, SimError> {
        flock(&self.lock, FlockOperation::LockExclusive).map_err(|e| self.io(e.into()))?;
        Ok(Exclusive(self))
    }

    /// The record's bytes as they are now, or `None` when it was never written.
    pub(crate) fn read(&self) -> Result<Option<Vec<u8>>, SimError> {
        let fd = match openat(
            &self.root,
            self.name.as_str(),
            // Non-blocking, so a FIFO planted in its place cannot hang the open.
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(self.refused(e)),
        };
        let st = fstat(&fd).map_err(|e| self.io(e.into()))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(refused(
                &self.path,
                Refusal::Unsafe("is not a regular file".to_owned()),
            ));
        }
        let mut bytes = Vec::new();
        File::from(fd).read_to_end(&mut bytes).map_err(|e| self.io(e))?;
        Ok(Some(bytes))
    }

    /// Replaces the record with `bytes`: a temp file beside it, then a rename over it. Needs the
    /// exclusive hold, so two writers never interleave.
    pub(crate) fn replace(&self, _held: &Exclusive<'_>, bytes: &[u8]) -> Result<(), SimError> {
        let prefix = self.stray_prefix();
        let (file, temp) = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .disable_cleanup(true)
            .make_in(&self.root_path, |p| {
                let name = p.file_name().unwrap_or_default();
                openat(
                    &self.root,
                    name,
                    OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                )
                .map(File::from)
                .map_err(std::io::Error::from)
            })
            .map_err(|e| self.io(e))?
            .into_parts();
        let temp_name = temp.file_name().map(ToOwned::to_owned).unwrap_or_default();
        let written = (&file).write_all(bytes).map_err(|e| self.io(e)).and_then(|()| {
            renameat(&self.root, &temp_name, &self.root, self.name.as_str()).map_err(|e| self.io(e.into()))
        });
        if written.is_err() {
            let _ = unlinkat(&self.root, &temp_name, AtFlags::empty());
        }
        written
    }

    /// Removes the temp files that writers killed before their rename left behind. Needs the
    /// exclusive hold: no live writer has a temp file then.
    pub(crate) fn remove_strays(&self, _held: &Exclusive<'_>) -> Result<usize, SimError> {
        let prefix = self.stray_prefix();
        let mut dir = Dir::read_from(&self.root).map_err(|e| self.io(e.into()))?;
        let mut strays = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| self.io(e.into()))?;
            let name = entry.file_name().to_string_lossy();
            if name.starts_with(&prefix) && name.ends_with(".tmp") {
                strays.push(entry.file_name().to_owned());
            }
        }
        for name in &strays {
            tracing::debug!(record = %self.path.display(), stray = ?name, "removing a killed writer's temp file");
            match unlinkat(&self.root, name.as_c_str(), AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(self.io(e.into())),
            }
        }
        Ok(strays.len())
    }

    /// Temp files are `.<name>.<random>.tmp`.
    fn stray_prefix(&self) -> String {
        format!(".{}.", self.name)
    }

    fn io(&self, source: std::io::Error) -> SimError {
        SimError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn refused(&self, e: Errno) -> SimError {
        refused(&self.path, Refusal::from(e))
    }
}

fn refused(path: &Path, r: Refusal) -> SimError {
    match r {
        Refusal::Io(source) => SimError::Io {
            path: path.to_owned(),
            source,
        },
        Refusal::Unsafe(reason) => SimError::Unsafe {
            path: path.to_owned(),
            reason,
        },
    }
}
