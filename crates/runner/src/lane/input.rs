//! The lane's side of its channel, reading: assignments read on their own thread, so the lane
//! knows every case assigned to it (for the poison sink) and notices at once when the dispatcher
//! is gone.
//!
//! The reader also answers [`ToLane::Where`] at once, from the lane's breadcrumb, on a writer of
//! its own: it is not the card thread, so it answers while that thread is stuck in a driver call.
//!
//! This file owns reading and decoding [`ToLane`] lines, and the breadcrumb's answer. The channel ending while assigned cases
//! are unfinished means the dispatcher died: the lane exits at once (its lease goes with it). The
//! channel ending with nothing pending is the normal end (the dispatcher shut its writing half):
//! the main loop closes its pool and exits.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;

use super::case_index::IndexedSuite;
use crate::clock::mono_ns;
use crate::crumb::Breadcrumb;
use crate::protocol::{FromLane, LaneOut, ToLane};

/// Exit code of a lane whose dispatcher vanished mid-assignment (nobody reads it).
pub const EXIT_ORPHANED: i32 = 3;

/// What the reader hands the main loop.
#[derive(Debug)]
pub enum Input {
    /// An assignment: run these cases.
    Run(Vec<String>),
    /// Give up the further cards ([`ToLane::Release`]).
    Release,
    /// The channel ended with nothing pending: close down.
    Closed,
}

/// Assigned cases not yet finished, shared by the reader and the main loop.
#[derive(Debug, Clone, Default)]
pub struct Pending(Arc<AtomicUsize>);

impl Pending {
    /// One assigned case is done (call before reporting it, so the dispatcher never closes the channel
    /// while the count is stale).
    pub fn done(&self, n: usize) {
        self.0.fetch_sub(n, Ordering::SeqCst);
    }

    fn add(&self, n: usize) {
        self.0.fetch_add(n, Ordering::SeqCst);
    }

    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the reader answers [`ToLane::Where`] with: the lane's breadcrumb, the lane's case table
/// (the breadcrumb names a case by its index in it) and a writer of the reader's own.
#[derive(Debug)]
pub struct Answers {
    /// The card thread's breadcrumb.
    pub crumb: Arc<Breadcrumb>,
    /// The lane's suite, which names the case at the breadcrumb's position.
    pub suite: Arc<IndexedSuite>,
    /// A writer shared with the lane's main thread.
    pub out: LaneOut,
}

impl Answers {
    /// The breadcrumb as the answer to [`ToLane::Where`].
    fn where_now(&self) -> FromLane {
        let c = self.crumb.read();
        let now = mono_ns();
        FromLane::Where {
            case: c.case.and_then(|i| self.suite.id_at(i)),
            in_call: c.in_call.map(|(call, _)| call),
            since_ms: c.in_call.map(|(_, since)| now.saturating_sub(since) / 1_000_000),
            launch: c.launch,
            launches: c.launches,
        }
    }
}

/// Starts the reader thread on (a clone of) `chan`, the lane's end of its channel; it answers
/// [`ToLane::Where`] with `answers`.
pub fn spawn_reader(pending: Pending, chan: &LaneOut, mut answers: Answers) -> Receiver<Input> {
    let chan: UnixStream = chan.try_clone_stream().unwrap_or_else(|e| {
        eprintln!("error: cannot read the lane's channel: {e}");
        std::process::exit(EXIT_ORPHANED)
    });
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("lane-channel".into())
        .spawn(move || {
            for line in BufReader::new(chan).lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<ToLane>(&line) {
                    Ok(ToLane::Run { cases, .. }) => {
                        pending.add(cases.len());
                        if tx.send(Input::Run(cases)).is_err() {
                            return;
                        }
                    }
                    Ok(ToLane::Release) => {
                        if tx.send(Input::Release).is_err() {
                            return;
                        }
                    }
                    Ok(ToLane::Where) => {
                        let answer = answers.where_now();
                        if let Err(e) = answers.out.send(&answer) {
                            tracing::debug!("cannot answer the dispatcher's question: {e}");
                        }
                    }
                    Err(e) => tracing::warn!("ignoring a malformed assignment line: {e}"),
                }
            }
            if pending.get() > 0 {
                // Not through `tracing`: the lane's stderr is a pipe to the dispatcher, which is
                // gone, and a log line that cannot be written must not stop this thread (it would
                // panic reporting it, and the lane would never exit). The line is for a lane run
                // by hand.
                let _ = writeln!(
                    std::io::stderr(),
                    "the channel closed with {} case(s) pending: the dispatcher is gone; exiting",
                    pending.get()
                );
                std::process::exit(EXIT_ORPHANED);
            }
            let _ = tx.send(Input::Closed);
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the channel reader: {e}");
        std::process::exit(EXIT_ORPHANED);
    }
    rx
}
