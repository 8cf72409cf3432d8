//! The lane's output side: its stdout and stderr belong to whatever runs in it (kernels, vendor
//! libraries, its own `tracing` warnings) and go to capture pipes the dispatcher reads; the lane
//! only marks the case boundaries in them.
//!
//! Before each `started` and `finished` message, [`Marks::mark`] flushes every buffer that holds
//! output for fd 1 and fd 2 (Rust's stdout, C's `stdio`) and writes the next mark on both
//! ([`crate::protocol::mark_bytes`], one `write` each, so no other writer splits it); the message
//! then carries the mark's number. A lane started without a nonce ([`ENV_OUTPUT_MARK`] unset)
//! writes no marks.
//!
//! This file owns the marks the lane writes. It never writes a protocol message (the session does).

use std::io::Write;
use std::os::fd::AsFd;

use super::c_stdio;
use crate::protocol::{mark_bytes, ENV_OUTPUT_MARK};

/// The lane's output marks.
#[derive(Debug, Default)]
pub struct Marks {
    nonce: Option<String>,
    last: u64,
}

impl Marks {
    /// The marks of this lane's nonce ([`ENV_OUTPUT_MARK`]), if the dispatcher gave one.
    pub fn from_env() -> Self {
        Self {
            nonce: std::env::var(ENV_OUTPUT_MARK).ok().filter(|n| !n.is_empty()),
            last: 0,
        }
    }

    /// Flushes what is buffered for fd 1 and fd 2 and writes the next mark on both; returns its
    /// number (0: no marks, the lane has no nonce).
    pub fn mark(&mut self) -> u64 {
        let mut out = std::io::stdout().lock();
        let _ = out.flush();
        c_stdio::flush_all();
        let Some(nonce) = &self.nonce else { return 0 };
        self.last += 1;
        let bytes = mark_bytes(nonce, self.last);
        // Straight to the descriptors (Rust's stdout buffer is empty and locked): one write each.
        let _ = rustix::io::write(out.as_fd(), &bytes);
        let err = std::io::stderr().lock();
        let _ = rustix::io::write(err.as_fd(), &bytes);
        self.last
    }
}
