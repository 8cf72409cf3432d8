//! What a lane wrote on its stdout and stderr, and a lane that broke its protocol.
//!
//! Output arrives in order with the lane's messages (its watcher sees to that), so output read
//! while a case runs is that case's: it is kept in the lane's [`super::capture::Capture`] and
//! becomes the attempt's `stdout` / `stderr` if the attempt fails (`messages`, `exits`). Output
//! outside any case is kept the same way (for an attempt the watchdog blames) and logged line by
//! line with the lane's card and pid, through `tracing`, so it lands around the progress bars,
//! never inside them: stderr at `warn` (the lane's own warnings), stdout at `info`.
//!
//! A protocol line over its bound ends the lane at once ([`KillReason::ProtocolLine`]); its running
//! case gets a `crashed` attempt naming the reason (`policy::blame`). This file owns those two.

use std::time::Duration;

use super::capture::Stream;
use super::event::LaneId;
use super::machine::DispatchState;
use crate::dispatch::policy::KillReason;

impl DispatchState {
    pub(super) fn on_output(&mut self, lane: LaneId, stream: Stream, bytes: &[u8]) {
        let l = &mut self.lanes[lane];
        let outside = l.running.is_none();
        let lines = l.capture.push(stream, bytes, outside);
        for line in lines {
            self.log_outside(lane, stream, &line);
        }
    }

    /// Logs the partial lines of the output outside a case (at a case's start and at the lane's
    /// exit).
    pub(super) fn flush_outside_lines(&mut self, lane: LaneId) {
        for (stream, line) in self.lanes[lane].capture.flush_lines() {
            self.log_outside(lane, stream, &line);
        }
    }

    fn log_outside(&self, lane: LaneId, stream: Stream, line: &str) {
        let l = &self.lanes[lane];
        let device = self.cards[l.card].device;
        let pid = l.pid;
        match stream {
            Stream::Stderr => tracing::warn!(device, pid, "lane stderr: {line}"),
            Stream::Stdout | Stream::DeviceLog => tracing::info!(device, pid, "lane stdout: {line}"),
        }
    }

    /// The lane wrote a protocol line over the bound: it is killed at once (unless it is being
    /// ended already).
    pub(super) fn on_line_too_long(&mut self, lane: LaneId) {
        if self.lanes[lane].kill.is_none() {
            self.end_lane(lane, KillReason::ProtocolLine, Duration::ZERO);
        }
    }
}
