//! The event loop's handling of what a lane wrote on its stdout and stderr, and of a lane that broke
//! its protocol.
//!
//! Output arrives in order with the lane's messages (the watcher sees to that), so output read
//! while a case runs is that case's: it is kept in the lane's [`super::capture::Capture`] and
//! becomes the attempt's `stdout` / `stderr` if the attempt fails (`on_lane`, `on_exit`). Output
//! outside any case is kept the same way (for an attempt the watchdog blames) and logged line by
//! line with the lane's card and pid, through `tracing`, so it lands around the progress bars,
//! never inside them: stderr at `warn` (the lane's own warnings), stdout at `info`.
//!
//! A protocol line over its bound ends the lane at once ([`KillReason::ProtocolLine`]); its running
//! case gets a `crashed` attempt naming the reason (`policy::blame`).

use std::time::{Duration, Instant};

use super::capture::Stream;
use super::event_loop::Dispatcher;
use super::kill::{KillReason, Termination};

impl Dispatcher {
    pub(super) fn on_output(&mut self, lane: usize, stream: Stream, bytes: &[u8]) {
        let l = &mut self.lanes[lane];
        let outside = l.running.is_none();
        let lines = l.capture.push(stream, bytes, outside);
        for line in lines {
            self.log_outside(lane, stream, &line);
        }
    }

    /// Logs the partial lines of the output outside a case (at a case's start and at the lane's
    /// exit).
    pub(super) fn flush_outside_lines(&mut self, lane: usize) {
        for (stream, line) in self.lanes[lane].capture.flush_lines() {
            self.log_outside(lane, stream, &line);
        }
    }

    fn log_outside(&self, lane: usize, stream: Stream, line: &str) {
        let l = &self.lanes[lane];
        let device = self.cards[l.card].device;
        let pid = l.proc_.pid;
        match stream {
            Stream::Stderr => tracing::warn!(device, pid, "lane stderr: {line}"),
            Stream::Stdout => tracing::info!(device, pid, "lane stdout: {line}"),
        }
    }

    /// The lane wrote a protocol line over the bound: it is killed at once (unless it is being
    /// ended already).
    pub(super) fn on_line_too_long(&mut self, lane: usize) {
        let l = &mut self.lanes[lane];
        if l.kill.is_none() {
            l.kill = Some(Termination::begin(
                l.proc_.pid,
                KillReason::ProtocolLine,
                Instant::now(),
                Duration::ZERO,
            ));
        }
    }
}
