//! A lane's channel as its watcher reads it: the dispatcher's end of the lane's socket, read in
//! bounded lines ([`MAX_LINE`]) and decoded; a malformed line is skipped with a warning, a torn
//! last line (the lane died mid-write) is dropped, and a line past the bound closes the channel
//! (the watcher then reports the lane for ending, and reads no more of it).
//!
//! This file owns reading and decoding the channel. It never forwards a message (the watcher does,
//! in order with the lane's output, `lane_watch`).

use std::os::unix::net::UnixStream;

use rustix::io::Errno;
use rustix::net::{recv, RecvFlags};

use platform_common::DeviceId;

use crate::dispatch::state::LaneId;
use crate::protocol::{FromLane, LineBuf, LineTooLong, MAX_LINE};

/// The dispatcher's end of one lane's channel, while it is open.
#[derive(Debug)]
pub struct Chan {
    sock: Option<UnixStream>,
    lines: LineBuf,
    /// The lane and its card, for log lines.
    lane: LaneId,
    device: DeviceId,
}

/// What one read of the channel gave.
#[derive(Debug, Default)]
pub struct Got {
    /// The messages decoded, in order.
    pub msgs: Vec<FromLane>,
    /// A line passed the bound: the lane broke its protocol (the channel is closed now).
    pub too_long: Option<LineTooLong>,
}

impl Chan {
    /// Lane `lane`'s channel `sock`, the lane on card `device`.
    pub fn new(sock: UnixStream, lane: LaneId, device: DeviceId) -> Self {
        Self {
            sock: Some(sock),
            lines: LineBuf::new(MAX_LINE),
            lane,
            device,
        }
    }

    /// Its socket while it is open (to poll).
    pub fn sock(&self) -> Option<&UnixStream> {
        self.sock.as_ref()
    }

    /// One read through `buf` (non-blocking): the complete lines decoded.
    pub fn read(&mut self, buf: &mut [u8]) -> Got {
        let mut got = Got::default();
        let Some(sock) = &self.sock else { return got };
        let n = match recv(sock, &mut *buf, RecvFlags::DONTWAIT) {
            Ok(0) => {
                self.closed();
                return got;
            }
            Ok(n) => n,
            Err(Errno::AGAIN | Errno::INTR) => return got,
            Err(e) => {
                tracing::debug!(lane = self.lane, "the lane's channel failed: {e}");
                self.closed();
                return got;
            }
        };
        let mut lines = Vec::new();
        let pushed = self.lines.push(&buf[..n], &mut lines);
        for line in lines {
            match serde_json::from_slice::<FromLane>(&line) {
                Ok(msg) => got.msgs.push(msg),
                Err(e) => tracing::warn!(
                    lane = self.lane,
                    device = self.device,
                    "ignoring a malformed lane line: {e}"
                ),
            }
        }
        if let Err(e) = pushed {
            got.too_long = Some(e);
            self.sock = None;
        }
        got
    }

    fn closed(&mut self) {
        if self.lines.partial() {
            // A torn last line: the lane died mid-write.
            tracing::debug!(
                lane = self.lane,
                device = self.device,
                "ignoring a torn line from a dying lane"
            );
        }
        self.sock = None;
    }
}
