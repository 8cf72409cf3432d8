//! A lane's captured stdout, stderr and device log as the state machine holds them: the output
//! since the last case boundary, each stream cut to its last [`CAPTURE_LIMIT`] bytes, and, outside
//! a case, the complete lines of stdout and stderr to log (the device log is never logged: it is
//! kept for a failed attempt only).
//!
//! Output read between a case's `started` and `finished` belongs to that attempt (the lane's
//! watcher forwards it in that order, see the process layer's `lane_watch`); a failed, crashed or timed-out attempt
//! keeps it ([`Capture::take`]), a passing one drops it. Output outside any case (a worker being
//! built, the lane starting or closing) is kept the same way, for a case the watchdog blames for
//! a silence outside a case, and is logged line by line by the dispatcher, around the progress
//! bars: stderr at `warn` (a lane's own warnings go there), stdout at `info`.
//!
//! The diagnosis of a running attempt the dispatcher ends for its timeout is kept here too, and
//! goes with that attempt's output.
//!
//! This file owns the buffers. It never reads a pipe and never logs (the state machine does, with
//! the lane's card and pid).

use crate::report::model::{AttemptOutput, Diagnostics, CAPTURE_LIMIT};

/// The longest line logged at once: a longer run of bytes without a newline is logged in pieces.
const LOG_LINE_LIMIT: usize = 4096;

/// Which stream of a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// fd 1.
    Stdout,
    /// fd 2.
    Stderr,
    /// What the device runtime logged under the lane's private `ASCEND_PROCESS_LOG_PATH` (read by
    /// the lane's watcher at each case boundary).
    DeviceLog,
}

impl Stream {
    /// The stream's name.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
            Stream::DeviceLog => "device_log",
        }
    }
}

/// The last `limit` bytes of a stream, and how many came before them.
#[derive(Debug, Clone, Default)]
pub struct Tail {
    buf: Vec<u8>,
    total: u64,
}

impl Tail {
    /// Appends bytes, keeping at most about twice the limit in memory.
    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        self.buf.extend_from_slice(bytes);
        if self.buf.len() > 2 * CAPTURE_LIMIT {
            self.buf.drain(..self.buf.len() - CAPTURE_LIMIT);
        }
    }

    /// The kept text (its last [`CAPTURE_LIMIT`] bytes, starting at a character boundary, invalid
    /// UTF-8 replaced) and the number of bytes dropped before it; `None` when nothing was written.
    /// Empties the tail.
    pub fn take(&mut self) -> Option<(String, u64)> {
        let buf = std::mem::take(&mut self.buf);
        let total = std::mem::take(&mut self.total);
        if total == 0 {
            return None;
        }
        let mut start = buf.len().saturating_sub(CAPTURE_LIMIT);
        if start > 0 {
            // Do not begin inside a UTF-8 sequence: skip its continuation bytes (at most 3).
            let skip = buf[start..]
                .iter()
                .take(3)
                .take_while(|b| (**b & 0xC0) == 0x80)
                .count();
            start += skip;
        }
        let kept = &buf[start..];
        let dropped = total - kept.len() as u64;
        Some((String::from_utf8_lossy(kept).into_owned(), dropped))
    }
}

/// Both streams of one lane since the last case boundary, and the partial lines to log.
#[derive(Debug, Default)]
pub struct Capture {
    stdout: Tail,
    stderr: Tail,
    device_log: Tail,
    line_out: Vec<u8>,
    line_err: Vec<u8>,
    /// The diagnosis of the running attempt, taken before the lane was ended for its timeout.
    diagnostics: Option<Diagnostics>,
}

impl Capture {
    /// Keeps the diagnosis of the running attempt (it goes with the attempt's output).
    pub fn set_diagnostics(&mut self, d: Diagnostics) {
        self.diagnostics = Some(d);
    }

    /// Records output. `outside` (no case running): its complete lines are returned, to be
    /// logged.
    pub fn push(&mut self, stream: Stream, bytes: &[u8], outside: bool) -> Vec<String> {
        let (tail, line) = match stream {
            Stream::Stdout => (&mut self.stdout, &mut self.line_out),
            Stream::Stderr => (&mut self.stderr, &mut self.line_err),
            Stream::DeviceLog => {
                self.device_log.push(bytes);
                return Vec::new();
            }
        };
        tail.push(bytes);
        if !outside {
            return Vec::new();
        }
        let mut lines = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                lines.push(text(line));
            } else {
                line.push(b);
                if line.len() >= LOG_LINE_LIMIT {
                    lines.push(text(line));
                }
            }
        }
        lines
    }

    /// A case boundary (a case starts, or the lane ended): the partial lines of the output outside
    /// the case, to be logged, per stream. The captured bytes stay until [`take`](Self::take) or
    /// [`clear`](Self::clear).
    pub fn flush_lines(&mut self) -> Vec<(Stream, String)> {
        let mut out = Vec::new();
        for (stream, line) in [
            (Stream::Stdout, &mut self.line_out),
            (Stream::Stderr, &mut self.line_err),
        ] {
            if !line.is_empty() {
                out.push((stream, text(line)));
            }
        }
        out
    }

    /// The output since the last boundary, for an attempt that failed; empties the capture.
    pub fn take(&mut self) -> AttemptOutput {
        let (stdout, stdout_dropped_bytes) = split(self.stdout.take());
        let (stderr, stderr_dropped_bytes) = split(self.stderr.take());
        let (device_log, device_log_dropped_bytes) = split(self.device_log.take());
        AttemptOutput {
            stdout,
            stdout_dropped_bytes,
            stderr,
            stderr_dropped_bytes,
            device_log,
            device_log_dropped_bytes,
            diagnostics: self.diagnostics.take().map(Box::new),
        }
    }

    /// Forgets the output since the last boundary (a passing attempt keeps none).
    pub fn clear(&mut self) {
        self.stdout = Tail::default();
        self.stderr = Tail::default();
        self.device_log = Tail::default();
        self.diagnostics = None;
    }
}

fn split(t: Option<(String, u64)>) -> (Option<String>, u64) {
    match t {
        Some((text, dropped)) => (Some(text), dropped),
        None => (None, 0),
    }
}

/// A line's text, taken out of `line` (invalid UTF-8 replaced, a trailing `\r` removed).
fn text(line: &mut Vec<u8>) -> String {
    let bytes = std::mem::take(line);
    let s = String::from_utf8_lossy(&bytes);
    s.strip_suffix('\r').unwrap_or(&s).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_keeps_the_last_64_kib_and_counts_the_rest() {
        let mut t = Tail::default();
        assert_eq!(t.take(), None, "nothing written: nothing kept");
        t.push(b"short");
        assert_eq!(t.take(), Some(("short".to_owned(), 0)));
        // 3 x 50 000 bytes: the last 64 KiB are kept.
        for c in [b'a', b'b', b'c'] {
            t.push(&vec![c; 50_000]);
        }
        let (text, dropped) = t.take().unwrap();
        assert_eq!(text.len(), CAPTURE_LIMIT);
        assert_eq!(dropped, 150_000 - CAPTURE_LIMIT as u64);
        assert!(text.ends_with(&"c".repeat(50_000)));
        assert!(text.starts_with('b'));
        assert_eq!(t.take(), None, "taking empties it");
    }

    #[test]
    fn a_cut_never_begins_inside_a_character() {
        let mut t = Tail::default();
        // "é" is two bytes; the cut lands on its second byte, which is skipped and counted.
        let mut bytes = vec![b'x'; 10];
        let body = "é".repeat(CAPTURE_LIMIT / 2);
        bytes.extend_from_slice(body.as_bytes());
        bytes.push(b'!');
        t.push(&bytes);
        let (text, dropped) = t.take().unwrap();
        assert!(text.starts_with('é') && text.ends_with('!'), "{:?}", &text[..8]);
        assert!(!text.contains('\u{FFFD}'));
        assert_eq!(dropped as usize + text.len(), bytes.len());
    }

    #[test]
    fn outside_a_case_complete_lines_are_returned_to_log() {
        let mut c = Capture::default();
        assert!(c.push(Stream::Stderr, b"WARN one\nWARN tw", true) == ["WARN one"]);
        assert_eq!(c.push(Stream::Stderr, b"o\r\nhalf", true), ["WARN two"]);
        assert_eq!(
            c.push(Stream::Stdout, b"junk without newline", true),
            Vec::<String>::new()
        );
        assert_eq!(
            c.flush_lines(),
            [
                (Stream::Stdout, "junk without newline".to_owned()),
                (Stream::Stderr, "half".to_owned())
            ]
        );
        assert!(c.flush_lines().is_empty());
        // The captured bytes are still there for a blamed attempt.
        let out = c.take();
        assert_eq!(out.stdout.as_deref(), Some("junk without newline"));
        assert_eq!(out.stderr.as_deref(), Some("WARN one\nWARN two\r\nhalf"));
        assert!(c.take().is_empty());
    }

    #[test]
    fn inside_a_case_nothing_is_logged_and_clear_forgets() {
        let mut c = Capture::default();
        assert!(c.push(Stream::Stdout, b"case says hi\n", false).is_empty());
        assert!(c.flush_lines().is_empty());
        c.clear();
        assert!(c.take().is_empty());
        // A run of bytes without a newline is logged in pieces, never held whole.
        let long = vec![b'z'; LOG_LINE_LIMIT * 2 + 5];
        let lines = c.push(Stream::Stdout, &long, true);
        assert_eq!(lines.len(), 2);
        assert_eq!(c.flush_lines()[0].1.len(), 5);
    }

    #[test]
    fn the_device_log_is_kept_apart_and_never_logged() {
        let mut c = Capture::default();
        assert!(c
            .push(Stream::DeviceLog, b"[ERROR] RUNTIME(1,x):t\n", true)
            .is_empty());
        assert!(c.flush_lines().is_empty());
        let out = c.take();
        assert_eq!(out.device_log.as_deref(), Some("[ERROR] RUNTIME(1,x):t\n"));
        assert_eq!((out.stdout, out.stderr), (None, None));
        c.push(Stream::DeviceLog, b"passing", false);
        c.clear();
        assert!(c.take().is_empty(), "a passing attempt keeps no device log");
    }
}
