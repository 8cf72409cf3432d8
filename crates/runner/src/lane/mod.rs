//! The lane: the worker process bound to one card (a re-exec of the suite binary with
//! [`crate::protocol::LANE_FLAG`]).
//!
//! It reads assignments on stdin and writes JSON-line events on stdout ([`crate::protocol`]), keeps
//! the pool, heals it, and leaves through [`crate::protocol::EXIT_NEEDS_FRESH_PROCESS`] when the
//! card cannot be recovered in-process. It holds the card's lease handed down by the dispatcher
//! and exits when its stdin closes, so a dead dispatcher never leaves lanes holding cards.
//!
//! - `session`: the lane's main loop: runs cases, applies the heal and escalation decisions.
//! - `heal`: step 3 and 4's decisions (keep or retire the pooled worker, escalate or go on), pure
//!   functions with table tests;
//! - `escalate`: the poison-sink records of an escalation (which selectors a fresh process re-runs).
//! - `card_thread`: the thread driving each further card of a multi-card lane (one card, one
//!   thread: the lane's own card is driven from its main thread).
//! - `start`: [`main`], the lane's setup from its command line and environment.
//! - `input`: the stdin reader thread.
//! - `hooks`: test-only pause and exit points (honoured only with the hidden
//!   [`crate::protocol::TEST_HOOKS_FLAG`]).

mod card_thread;
pub mod escalate;
pub mod heal;
mod hooks;
mod input;
mod session;
mod start;

pub use hooks::{Point, ENV_EXIT, ENV_PAUSE};
pub use input::EXIT_ORPHANED;
pub use start::{main, LaneConfig};
