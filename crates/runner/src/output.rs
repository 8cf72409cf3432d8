//! The suite binary's own lines on stdout and stderr (the case list, the summary, one-line
//! errors): a closed pipe never panics and never changes the exit status.
//!
//! Rust starts a program with SIGPIPE ignored, so a write to a closed pipe (`--list | head -1`)
//! fails with `EPIPE` instead of killing the process, and `println!` would then panic (exit 101).
//! Every line goes through [`out`] or [`err`], which drop a failed write: there is nobody left
//! to tell. Log lines go through `tracing` (with its own write errors silenced, see `app`).
//! This file never decides what is printed.

use std::fmt::Display;
use std::io::Write;

/// Writes `line` and a newline to stdout; a failed write (a closed pipe) is dropped.
pub fn out(line: impl Display) {
    let mut s = std::io::stdout().lock();
    let _ = writeln!(s, "{line}").and_then(|()| s.flush());
}

/// Writes `line` and a newline to stderr; a failed write (a closed pipe) is dropped.
pub fn err(line: impl Display) {
    let mut s = std::io::stderr().lock();
    let _ = writeln!(s, "{line}").and_then(|()| s.flush());
}
