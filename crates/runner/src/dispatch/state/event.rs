//! The state machine's vocabulary: the [`Event`]s the process layer feeds it and the [`Action`]s
//! it answers with (nextest's dispatcher shape: internal events in, responses out).
//!
//! Events are what happened: a lane's message, its output, its exit with its facts (the poison
//! sink's contents already read), a signal to the run, time passing, and the outcome of an action
//! that can fail (a spawn, an assignment whose card's lease no longer holds). Actions are what to
//! do: start a lane, send it a line, close its channel, signal it, capture its stacks, record a
//! journal event, remember or forget a card's health, finish.
//!
//! This file owns those two types. It never decides anything (the state machine does) and never
//! carries an action out (the process layer does).

use std::fmt;

use platform_common::lease::LeaseError;

use super::capture::Stream;
use crate::dispatch::policy::LaneKind;
use crate::protocol::{FromLane, ToLane};
use crate::report::model::{Event as Journal, HealthRecord, Interruption, LaneStatus};
use crate::sink::SinkContents;

/// A lane's serial number within a run, given by the state machine when it asks for the lane.
pub type LaneId = usize;

/// Something that happened, for [`super::DispatchState::handle`].
#[derive(Debug)]
pub enum Event {
    /// The run starts: preflights of the cards that remember a quarantine, then a lane per
    /// healthy card while work is queued.
    Begin,
    /// A lane asked for by [`Action::Spawn`] runs, as process `pid`.
    Spawned {
        /// The lane.
        lane: LaneId,
        /// Its pid (also its process group's id).
        pid: u32,
    },
    /// A lane asked for by [`Action::Spawn`] could not be started.
    NotSpawned {
        /// The lane.
        lane: LaneId,
        /// Why.
        why: NotSpawned,
    },
    /// An assignment ([`Action::Send`] of a [`ToLane::Run`]) was not sent: the lease of the
    /// lane's card no longer excludes others.
    NotSent {
        /// The lane.
        lane: LaneId,
        /// The assignment.
        msg: ToLane,
        /// What happened to the lease.
        lost: LeaseError,
    },
    /// A lane's message.
    Message(LaneId, FromLane),
    /// Bytes a lane wrote on its stdout or stderr (between its messages, in order).
    Output(LaneId, Stream, Vec<u8>),
    /// A lane broke its protocol (a line over its bound); nothing more is read of its channel.
    LineTooLong(LaneId),
    /// The stack tool finished on a hung lane: its stacks, or why there are none.
    Stacks(LaneId, Result<String, String>),
    /// A lane process exited and was reaped.
    Exited {
        /// The lane.
        lane: LaneId,
        /// How it ended.
        status: LaneStatus,
        /// Its poison sink, read and deleted (none when it had none).
        sink: Option<SinkContents>,
    },
    /// SIGINT or SIGTERM reached the run.
    Interrupted(Interruption),
    /// Time passed: a deadline the state machine gave ([`super::DispatchState::next_deadline`])
    /// may be due.
    Tick,
}

/// Why a lane could not be started.
#[derive(Debug)]
pub enum NotSpawned {
    /// The lease of card `card` (an index of the run's cards) no longer excludes others.
    LeaseLost {
        /// The card.
        card: usize,
        /// What happened to its lease.
        lost: LeaseError,
    },
    /// Every try to start the process failed.
    Failed {
        /// The last try's error.
        error: std::io::Error,
        /// Tries made.
        tries: u32,
    },
}

/// A signal for a lane's process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneSignal {
    /// SIGTERM: end, cleanly if you can.
    Term,
    /// SIGKILL.
    Kill,
}

/// Something to do, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start lane `lane` on `cards` (indices of the run's cards, its own first; more for a
    /// multi-card lane) as a lane of `kind`: a regular lane gets a poison sink, a preflight lane
    /// only probes its card. Answered with [`Event::Spawned`] or [`Event::NotSpawned`].
    Spawn {
        /// The lane.
        lane: LaneId,
        /// Its cards.
        cards: Vec<usize>,
        /// What it is.
        kind: LaneKind,
    },
    /// Send `msg` down lane `lane`'s channel. An assignment ([`ToLane::Run`]) is sent only while
    /// the lease of the lane's card holds; else answered with [`Event::NotSent`].
    Send {
        /// The lane.
        lane: LaneId,
        /// The line.
        msg: ToLane,
    },
    /// Shut the writing half of lane `lane`'s channel: it finishes what it has, closes its
    /// workers and exits. `done`: its work is done (its peak RSS is read first, for the figures).
    Close {
        /// The lane.
        lane: LaneId,
        /// Whether its work is done.
        done: bool,
    },
    /// Signal lane `lane`'s process group.
    Signal {
        /// The lane.
        lane: LaneId,
        /// Which signal.
        signal: LaneSignal,
    },
    /// Capture the native stacks of lane `lane` (it is hung); answered with [`Event::Stacks`].
    CaptureStacks {
        /// The lane.
        lane: LaneId,
    },
    /// Record a journal event (the reports are folded from them).
    Record(Journal),
    /// Write card `card`'s health record beside its lock: quarantined (or needing service) by this
    /// run for `reason`, with its health events of the run.
    Remember {
        /// The card (an index of the run's cards).
        card: usize,
        /// Quarantined (a preflight next run) or needs service (no run until an operator clears).
        status: platform_common::lease::HealthStatus,
        /// Why.
        reason: String,
        /// Its health events of the run (the last ones).
        events: Vec<HealthRecord>,
        /// The capability that failed: the last of its events that names one, else compute.
        capability: platform_common::health::Capability,
    },
    /// Clear card `card`'s health record (its preflight passed), saying why.
    Forget {
        /// The card (an index of the run's cards).
        card: usize,
        /// Why.
        reason: String,
    },
    /// Every case has its verdict and every lane has exited: the run is over.
    Finish,
}

impl fmt::Display for LaneSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LaneSignal::Term => "SIGTERM",
            LaneSignal::Kill => "SIGKILL",
        })
    }
}
