//! The private protocol between the dispatcher and its lanes.
//!
//! A lane talks to its dispatcher on a channel of its own (a Unix stream socket handed down like
//! its lease), never on its stdout: a lane's stdout and stderr belong to whatever runs in it (a
//! kernel's `printf`, a vendor library's log) and are captured apart, per case.
//!
//! - `messages`: the JSON-line messages both ways, the lane's command line and exit codes;
//! - `channel`: the channel's hand-off (the dispatcher's side and the lane's adoption);
//! - `line`: the bounded line framing ([`MAX_LINE`]);
//! - `mark`: the output marks that split a lane's captured output between its cases.
//!
//! This module never acts on a message (the lane's session and the dispatcher's event loop do).

mod channel;
mod line;
mod mark;
mod messages;

pub use channel::{hand_to, inherited, ChannelError, ENV_PROTOCOL_FD};
pub use line::{LineBuf, LineTooLong, MAX_LINE};
pub use mark::{mark_bytes, new_nonce, MarkScanner, Piece, ENV_OUTPUT_MARK};
pub use messages::{
    FromLane, LaneOut, ToLane, ENV_POISON_SINK, EXIT_NEEDS_FRESH_PROCESS, EXIT_USAGE, LANE_FLAG,
    PREFLIGHT_FLAG, TEST_HOOKS_FLAG,
};
