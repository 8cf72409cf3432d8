//! One capture pipe of a lane (its stdout or its stderr) as its watcher reads it: read in chunks,
//! split at the lane's output marks ([`crate::protocol::MarkScanner`]), held until the message of
//! its mark has been forwarded, then released, so a case's output reaches the event loop between
//! its `started` and its `finished`.
//!
//! This file owns one pipe's reading and holding. It never forwards anything itself and never
//! reads the lane's channel (the watcher does, `lane_watch`).

use std::collections::VecDeque;
use std::os::fd::OwnedFd;

use rustix::io::Errno;

use crate::dispatch::state::{LaneId, Stream};
use crate::protocol::{MarkScanner, Piece};

/// The most output bytes of one pipe held for a message not yet read (see `lane_watch`).
pub const HOLD_LIMIT: usize = 256 * 1024;

/// One capture pipe of the lane.
#[derive(Debug)]
pub struct Pipe {
    /// Which stream it is.
    pub stream: Stream,
    /// Its read end (non-blocking), until it closes.
    pub fd: Option<OwnedFd>,
    scanner: MarkScanner,
    /// Scanned pieces not yet forwarded.
    queue: VecDeque<Piece>,
    /// The number of the last mark passed: the segment the next bytes belong to.
    seg: u64,
    /// The highest mark scanned.
    pub seen: u64,
    /// Output bytes in `queue`.
    pub held: usize,
    /// Whether the pipe is polled. A pipe whose last read gave nothing but marks is quiet: it is
    /// read when a message needs its mark, and every little while besides, but not polled, so a
    /// lane that prints nothing costs no wake-up per mark; the first output bytes read make it
    /// polled again.
    pub eager: bool,
}

/// What one read of a pipe gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// Bytes (or an interrupted read: try again).
    Data,
    /// Nothing for now.
    Empty,
    /// End of file, or an error: the pipe is closed.
    Closed,
}

impl Pipe {
    /// The pipe `fd` of the lane's `stream`, its marks written with `nonce`.
    pub fn new(stream: Stream, fd: OwnedFd, nonce: &str) -> Self {
        Self {
            stream,
            fd: Some(fd),
            scanner: MarkScanner::new(nonce),
            queue: VecDeque::new(),
            seg: 0,
            seen: 0,
            held: 0,
            eager: true,
        }
    }

    /// One read into its queue, through `buf`; `lane` names it in a log line.
    pub fn read(&mut self, buf: &mut [u8], lane: LaneId) -> Read {
        let Some(fd) = &self.fd else { return Read::Closed };
        let mut pieces = Vec::new();
        let got = match rustix::io::read(fd, &mut *buf) {
            Ok(0) => {
                self.scanner.finish(&mut pieces);
                self.fd = None;
                Read::Closed
            }
            Ok(n) => {
                self.scanner.push(&buf[..n], &mut pieces);
                Read::Data
            }
            Err(Errno::AGAIN) => Read::Empty,
            Err(Errno::INTR) => Read::Data,
            Err(e) => {
                tracing::debug!(
                    lane,
                    stream = self.stream.name(),
                    "cannot read the lane's output: {e}"
                );
                self.fd = None;
                Read::Closed
            }
        };
        let mut bytes = false;
        for p in pieces {
            match &p {
                Piece::Mark(k) => self.seen = self.seen.max(*k),
                Piece::Bytes(b) => {
                    self.held += b.len();
                    bytes = true;
                }
            }
            self.queue.push_back(p);
        }
        if got == Read::Data {
            self.eager = bytes;
        }
        got
    }

    /// The held output that may go now that the message of mark `released` was forwarded
    /// (`all`: everything, at the end); `None` when there is none.
    pub fn ready(&mut self, released: u64, all: bool) -> Option<Vec<u8>> {
        let mut bytes = Vec::new();
        while let Some(front) = self.queue.front() {
            match front {
                Piece::Mark(k) => self.seg = self.seg.max(*k),
                Piece::Bytes(_) if all || self.seg <= released => {}
                Piece::Bytes(_) => break,
            }
            if let Some(Piece::Bytes(b)) = self.queue.pop_front() {
                self.held -= b.len();
                bytes.extend_from_slice(&b);
            }
        }
        (!bytes.is_empty()).then_some(bytes)
    }

    /// The lane is gone: whatever the scanner still holds joins the queue, and the pipe closes.
    pub fn finish(&mut self) {
        let mut pieces = Vec::new();
        self.scanner.finish(&mut pieces);
        self.queue.extend(pieces);
        self.fd = None;
    }
}
