//! The protocol's messages: JSON lines on the lane's private channel, assignments one way and
//! events (streamed back per case) the other, and the lane's command line and exit codes.
//!
//! This file owns the messages, their encoding and [`LaneOut`], the lane's writer. It never acts on
//! a message. A lane gets whole classes (or several) per assignment and streams one `started` and
//! one `finished` line per case, so the dispatcher pays no round trip per case. `started` and
//! `finished` carry the number of the output mark the lane wrote just before them
//! ([`super::mark`]), which splits the lane's stdout and stderr between the cases.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, PoisonError};

use platform_common::health::HealthEvent;
use serde::{Deserialize, Serialize};

use platform_common::driver::DriverCall;
use platform_common::DeviceId;

use crate::report::model::{AttemptOutcome, ErrorReport, FixturePart, WorkerAction};

/// The lane's exit code when its card cannot be recovered in-process: the remaining assigned
/// cases went to the poison sink (if it had one) and a fresh process is needed.
pub const EXIT_NEEDS_FRESH_PROCESS: i32 = 75;

/// A lane's exit code for bad arguments or environment (as the dispatcher's usage errors).
pub const EXIT_USAGE: i32 = 2;

/// The command-line flag that makes the suite binary a lane.
pub const LANE_FLAG: &str = "--lane";

/// The hidden flag that makes a lane a preflight lane: it builds a worker on its card, probes it,
/// closes it and exits (0 when both passed), taking no work. The dispatcher starts one on a card
/// whose health record says quarantined, before the card gets work.
pub const PREFLIGHT_FLAG: &str = "--preflight";

/// The hidden flag that lets a lane honour its test-only hooks (`crate::lane::ENV_PAUSE`,
/// `crate::lane::ENV_EXIT`). The dispatcher passes it on to its lanes only when it was given the
/// flag itself (tests do), so a stray hook variable never parks a production lane.
pub const TEST_HOOKS_FLAG: &str = "--test-hooks";

/// Environment variable naming the poison sink a lane appends to (absent for a fresh lane).
pub const ENV_POISON_SINK: &str = "ONBOARD_POISON_SINK";

/// Dispatcher to lane: one line each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ToLane {
    /// Run these cases, in order (one class or several; ids are `Class::case`).
    Run {
        /// The assignment's number, for logs.
        batch: u64,
        /// The cases.
        cases: Vec<String>,
    },
    /// Where is the lane's card thread now? Answered with [`FromLane::Where`] by the lane's
    /// channel reader (not the card thread, which may be stuck). The dispatcher asks before it
    /// ends a lane for a case timeout.
    Where,
    /// A multi-card lane's block is done: give up the further cards (close their workers, end
    /// their threads) and go on as a regular lane of the own card, a pooled class's kept worker
    /// there becoming the pooled one. Answered with [`FromLane::Released`] once the further cards
    /// are no longer driven; only sent to a lane that holds nothing.
    Release,
}

/// Lane to dispatcher: one line each, written as they happen (`{"t":"started","c":{...}}`).
///
/// The tag comes first and the fields in a map of their own: decoding then reads each field
/// straight into its place, where a tag among the fields makes serde buffer the whole line first
/// (two lines per case: at 100,000 cases, much of the time of the dispatcher's channel threads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", content = "c", rename_all = "snake_case")]
pub enum FromLane {
    /// The lane holds its lease and reads assignments.
    Ready {
        /// Its pid.
        pid: u32,
    },
    /// A case is about to run (its worker is ready).
    Started {
        /// `Class::case`.
        case: String,
        /// The output mark written just before this line (0: none): the lane's output after it
        /// belongs to the case.
        #[serde(default)]
        mark: u64,
    },
    /// A case ended.
    Finished {
        /// `Class::case`.
        case: String,
        /// Passed or failed (never crashed or timed out: the dispatcher sees those).
        outcome: AttemptOutcome,
        /// Wall time in microseconds.
        duration_us: u64,
        /// Why it failed.
        error: Option<ErrorReport>,
        /// The output mark written just before this line (0: none): the lane's output before it
        /// belongs to the case.
        #[serde(default)]
        mark: u64,
    },
    /// Building a chip worker on card `device` starts (an init, including closing the worker of
    /// another runtime first): the dispatcher bounds it by `--init-timeout`.
    InitStarted {
        /// The card.
        device: DeviceId,
        /// The runtime being built.
        runtime: String,
    },
    /// That init succeeded (a failed one is [`FromLane::InitFailed`]).
    InitDone {
        /// The card.
        device: DeviceId,
    },
    /// A health event of the lane's card (from its runners' state machines).
    Health {
        /// The event.
        event: HealthEvent,
        /// When it happened: the lane's `CLOCK_MONOTONIC` in nanoseconds (one clock with the
        /// dispatcher's, see [`crate::clock`]).
        #[serde(default)]
        mono_ns: u64,
    },
    /// Initialising a worker failed: a health event of card `device` (which, in a multi-card
    /// lane, need not be the lane's own card), not an attempt of any case.
    InitFailed {
        /// The card whose worker failed to init.
        device: DeviceId,
        /// The runtime whose worker failed to init.
        runtime: String,
        /// Why.
        error: ErrorReport,
    },
    /// A chip worker's lifecycle step on card `device` (built, retired after a device-runtime
    /// error, or closed), for the journal.
    Worker {
        /// The card.
        device: DeviceId,
        /// The worker's runtime.
        runtime: String,
        /// What happened to it.
        action: WorkerAction,
    },
    /// A class fixture's setup ran for a case on card `device` (for the journal): built, or
    /// failed with `error`.
    Fixture {
        /// The card.
        device: DeviceId,
        /// The class.
        class: String,
        /// Host data (once per lane) or device resources (once per worker).
        part: FixturePart,
        /// The case it ran for.
        case: String,
        /// Why it failed; `None` when it was built.
        error: Option<String>,
    },
    /// The answer to [`ToLane::Where`]: the lane's breadcrumb as read then.
    Where {
        /// The running case (`Class::case`), if one is running.
        case: Option<String>,
        /// The driver call in flight, if one is (serialised with CANN's name).
        in_call: Option<DriverCall>,
        /// How long that call had been in flight, in ms.
        since_ms: Option<u64>,
        /// Case launches the running case had started (the one in flight included; 0: none).
        launch: u64,
        /// Launches the running case makes, when known.
        launches: Option<u64>,
    },
    /// The lane no longer drives its further cards ([`ToLane::Release`]): it is a lane of its
    /// own card.
    Released,
    /// The card cannot be recovered in-process; the lane writes the sink and exits with
    /// [`EXIT_NEEDS_FRESH_PROCESS`].
    Escalating {
        /// Why.
        reason: String,
        /// Cases it wrote to the sink.
        cases: usize,
    },
}

impl FromLane {
    /// The output mark this message carries (`started` and `finished`; 0 for none).
    pub fn mark(&self) -> u64 {
        match self {
            FromLane::Started { mark, .. } | FromLane::Finished { mark, .. } => *mark,
            _ => 0,
        }
    }

    /// Encodes the message as one line (with its newline) into `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        out.push(b'\n');
        Ok(())
    }
}

impl ToLane {
    /// Encodes the message as one line (with its newline).
    pub fn to_line(&self) -> serde_json::Result<Vec<u8>> {
        let mut v = serde_json::to_vec(self)?;
        v.push(b'\n');
        Ok(v)
    }
}

/// Writes lane messages to the lane's channel: one `write` per message, so a line is never split
/// by a crash between two writes of it. Writers [`shared`](LaneOut::shared) between the lane's
/// threads take turns (a lock around each message), so two lines never interleave.
#[derive(Debug)]
pub struct LaneOut {
    buf: Vec<u8>,
    chan: Arc<Mutex<UnixStream>>,
}

impl LaneOut {
    /// A writer on the lane's end of its channel.
    pub fn new(chan: UnixStream) -> Self {
        Self {
            buf: Vec::new(),
            chan: Arc::new(Mutex::new(chan)),
        }
    }

    /// Another writer on the same channel (for another thread of the lane).
    pub fn shared(&self) -> Self {
        Self {
            buf: Vec::new(),
            chan: Arc::clone(&self.chan),
        }
    }

    /// Another descriptor of the channel (for reading it on another thread).
    pub fn try_clone_stream(&self) -> std::io::Result<UnixStream> {
        self.chan
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .try_clone()
    }

    /// Sends one message. A closed channel (dispatcher gone) is reported to the caller.
    pub fn send(&mut self, msg: &FromLane) -> std::io::Result<()> {
        self.buf.clear();
        msg.encode_into(&mut self.buf).map_err(std::io::Error::other)?;
        let mut chan = self.chan.lock().unwrap_or_else(PoisonError::into_inner);
        chan.write_all(&self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::FailureClass;

    #[test]
    fn messages_round_trip_as_single_lines() {
        let m = ToLane::Run {
            batch: 3,
            cases: vec!["A::x".into(), "A::y".into()],
        };
        let line = m.to_line().unwrap();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(serde_json::from_slice::<ToLane>(&line).unwrap(), m);
        let f = FromLane::Finished {
            case: "A::x".into(),
            outcome: AttemptOutcome::Failed,
            duration_us: 12,
            error: Some(ErrorReport::new(FailureClass::Result, "mismatch\nat 3")),
            mark: 4,
        };
        let mut out = Vec::new();
        f.encode_into(&mut out).unwrap();
        assert_eq!(
            out.iter().filter(|b| **b == b'\n').count(),
            1,
            "newlines in text are escaped"
        );
        assert_eq!(serde_json::from_slice::<FromLane>(&out).unwrap(), f);
        assert_eq!(f.mark(), 4);
        // A line without a mark (a lane that writes none) decodes with mark 0.
        let old: FromLane = serde_json::from_str(r#"{"t":"started","c":{"case":"A::x"}}"#).unwrap();
        assert_eq!(old.mark(), 0);
        // The breadcrumb's question and answer.
        let q = ToLane::Where.to_line().unwrap();
        assert_eq!(serde_json::from_slice::<ToLane>(&q).unwrap(), ToLane::Where);
        // A multi-card lane's release and its answer.
        let r = ToLane::Release.to_line().unwrap();
        assert_eq!(String::from_utf8_lossy(&r), "{\"t\":\"release\"}\n");
        let mut out = Vec::new();
        FromLane::Released.encode_into(&mut out).unwrap();
        assert_eq!(
            serde_json::from_slice::<FromLane>(&out).unwrap(),
            FromLane::Released
        );
        let w = FromLane::Where {
            case: Some("A::x".into()),
            in_call: Some(DriverCall::LaunchAicore),
            since_ms: Some(10_000),
            launch: 3,
            launches: Some(5),
        };
        let mut out = Vec::new();
        w.encode_into(&mut out).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.contains(r#""in_call":"rtKernelLaunchWithHandleV2""#),
            "{text}"
        );
        assert_eq!(serde_json::from_slice::<FromLane>(&out).unwrap(), w);
    }
}
