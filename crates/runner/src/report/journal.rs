//! `journal.jsonl`: every [`Event`] of a run, one JSON object per line, appended as it happens.
//!
//! This module owns the journal file. Each event is one `write` of one whole line on a file opened
//! with `O_APPEND`, so a line is never interleaved with another and a crash loses at most the line
//! being written. It never buffers, and never reads events it did not write (except in
//! [`read_journal`], for tools and tests).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use super::error::ReportError;
use super::model::Event;

/// The journal's file name inside a report directory.
pub const JOURNAL_JSONL: &str = "journal.jsonl";

/// An open journal. Appending takes `&self`: one `write` per line needs no lock.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
}

impl Journal {
    /// Creates (or truncates) the journal at `path`.
    pub fn create(path: &Path) -> Result<Self, ReportError> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(|e| ReportError::io("create", path, e))?;
        // Reopen in append mode so every write lands at the end even if others append too.
        drop(file);
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| ReportError::io("open", path, e))?;
        Ok(Self {
            file,
            path: path.to_owned(),
        })
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event as one line, in one write, and flushes it to the OS.
    pub fn append(&self, event: &Event) -> Result<(), ReportError> {
        let mut line = serde_json::to_vec(event).map_err(|source| ReportError::Json {
            path: self.path.clone(),
            line: None,
            source,
        })?;
        line.push(b'\n');
        (&self.file)
            .write_all(&line)
            .map_err(|e| ReportError::io("append to", &self.path, e))?;
        (&self.file)
            .flush()
            .map_err(|e| ReportError::io("flush", &self.path, e))
    }
}

/// Reads a journal back, every line an event. A line that does not parse is an error naming it.
pub fn read_journal(path: &Path) -> Result<Vec<Event>, ReportError> {
    let file = File::open(path).map_err(|e| ReportError::io("open", path, e))?;
    let mut events = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| ReportError::io("read", path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let event = serde_json::from_str(&line).map_err(|source| ReportError::Json {
            path: path.to_owned(),
            line: Some(i + 1),
            source,
        })?;
        events.push(event);
    }
    Ok(events)
}
