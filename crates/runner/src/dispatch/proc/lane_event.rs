//! What the process layer's threads send its event loop: a lane's watcher (its messages, output
//! and exit, in the order they happened in the lane), the stack capture of a hung lane, and the
//! signal thread.
//!
//! This file owns that channel's vocabulary. It never interprets an event (the event loop turns
//! each into the state machine's [`crate::dispatch::state::Event`]).

use super::stacks::StackError;
use crate::dispatch::state::{LaneId, Stream};
use crate::protocol::FromLane;
use crate::report::model::{Interruption, LaneStatus};

/// One report of a lane's watcher (or of the stack capture, or of the signal thread), in the order
/// it happened in the lane: a case's output comes after its `started` message and before its
/// `finished` one.
#[derive(Debug)]
pub enum LaneEvent {
    /// One decoded message.
    Msg(LaneId, FromLane),
    /// Bytes the lane wrote on its stdout or stderr (marks removed).
    Output(LaneId, Stream, Vec<u8>),
    /// The lane broke its protocol (a line over [`crate::protocol::MAX_LINE`]); nothing more is read
    /// from its channel.
    LineTooLong(LaneId),
    /// The stack tool finished on a hung lane (its stacks, or why there are none).
    Stacks(LaneId, Result<String, StackError>),
    /// The lane process exited and was reaped (its group killed, its output drained).
    Exited(LaneId, LaneStatus),
    /// SIGINT or SIGTERM reached the dispatcher (`signals`): end the run.
    Interrupted(Interruption),
}
