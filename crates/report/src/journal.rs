//! `journal.jsonl`: every [`Event`] of a run, one JSON object per line, appended as it happens.
//!
//! This module owns the journal file. Each [`Journal::append`] is one `write` of one whole line on
//! a file opened with `O_APPEND`, so a line is never interleaved with another and a crash loses at
//! most the line being written; [`Journal::write_lines`] appends several whole lines in one write
//! (the runner's reporter batches a burst of events so). It never reads events it did
//! not write (except in [`read_journal`], for tools and tests).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::ReportError;
use crate::model::Event;

/// The journal's file name inside a report directory.
pub const JOURNAL_JSONL: &str = "journal.jsonl";

/// An open journal. Appending takes `&self`: one `write` per line needs no lock.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
}

impl Journal {
    /// Creates the journal at `path`, which must not exist yet (a run clears its report dir
    /// first): created exclusively and never through a symlink, in
    /// append mode so every write lands at the end.
    pub fn create(path: &Path) -> Result<Self, ReportError> {
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)
            .map_err(|e| ReportError::io("create", path, e))?;
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
        let mut line = Vec::new();
        self.encode(event, &mut line)?;
        self.write_lines(&line)
    }

    /// Encodes one event as one line (with its newline) at the end of `buf`, for
    /// [`write_lines`](Self::write_lines).
    pub fn encode(&self, event: &Event, buf: &mut Vec<u8>) -> Result<(), ReportError> {
        serde_json::to_writer(&mut *buf, event).map_err(|source| ReportError::Json {
            path: self.path.clone(),
            line: None,
            source,
        })?;
        buf.push(b'\n');
        Ok(())
    }

    /// Appends whole encoded lines in one write and flushes them to the OS.
    pub fn write_lines(&self, lines: &[u8]) -> Result<(), ReportError> {
        if lines.is_empty() {
            return Ok(());
        }
        (&self.file)
            .write_all(lines)
            .map_err(|e| ReportError::io("append to", &self.path, e))?;
        (&self.file)
            .flush()
            .map_err(|e| ReportError::io("flush", &self.path, e))
    }
}

/// The run id of the journal at `path`: its first event's (`run_started`), if it has one.
pub fn journal_run_id(path: &Path) -> Result<Option<String>, ReportError> {
    let file = File::open(path).map_err(|e| ReportError::io("open", path, e))?;
    let mut first = String::new();
    BufReader::new(file)
        .read_line(&mut first)
        .map_err(|e| ReportError::io("read", path, e))?;
    if first.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str(&first) {
        Ok(Event::RunStarted { run_id, .. }) => Ok(Some(run_id)),
        Ok(_) => Ok(None),
        Err(source) => Err(ReportError::Json {
            path: path.to_owned(),
            line: Some(1),
            source,
        }),
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
