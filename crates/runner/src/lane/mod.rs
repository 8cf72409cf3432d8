//! The lane: the worker process bound to one card (a re-exec of the suite binary with
//! [`crate::protocol::LANE_FLAG`]).
//!
//! It reads assignments and writes JSON-line events on its private channel ([`crate::protocol`]),
//! keeps the pool, heals it, and leaves through [`crate::protocol::EXIT_NEEDS_FRESH_PROCESS`] when
//! the card cannot be recovered in-process. It holds the card's lease and its channel, both handed
//! down by the dispatcher, and exits when its channel ends, so a dead dispatcher never leaves lanes
//! holding cards. Its stdout and stderr are not the protocol's: the dispatcher captures them per
//! case.
//!
//! - `session`: the lane's state and main loop: sends each case to its kind's code, applies the
//!   escalation decisions; `run_case`: a pooled or standalone case (its fixture, its attempt
//!   judged, the heal applied); `multi`: a multi-card case, one thread per card, a pooled class's
//!   workers kept for its next one (`kept`).
//! - `case_index`: the lane's suite with its cases found by id in constant time.
//! - `heal`: step 3 and 4's decisions (keep or retire the pooled worker, escalate or go on), pure
//!   functions with table tests;
//! - `post_check`: the post-case health check applied to an attempt (`--health-check`);
//! - `escalate`: the poison-sink records of an escalation (which selectors a fresh process re-runs).
//! - `card_thread`: the thread driving each further card of a multi-card lane (one card, one
//!   thread: the lane's own card is driven from its main thread).
//! - `start`: [`main`], the lane's setup from its command line and environment.
//! - `preflight`: a preflight lane's check of a card whose health record said quarantined (init,
//!   close, probe; no work).
//! - `input`: the channel's reader thread.
//! - `stamp`: health events stamped on the run's clock when they happen;
//! - `output`: the output marks that split the lane's stdout and stderr between its cases;
//!   `c_stdio`: the C library's buffers flushed before each mark (the lane's one FFI call).
//! - `hooks`: test-only pause, exit and misbehaviour points (honoured only with the hidden
//!   [`crate::protocol::TEST_HOOKS_FLAG`]).

mod c_stdio;
mod card_thread;
mod case_index;
pub mod escalate;
pub mod heal;
mod hooks;
mod input;
mod kept;
mod multi;
mod output;
mod post_check;
pub mod preflight;
mod run_case;
#[cfg(all(test, feature = "sim"))]
mod sdma_check_tests;
mod session;
mod stamp;
mod start;

pub use heal::HealthCheck;
pub use hooks::{
    Point, ENV_CLOCK_STEP, ENV_EXIT, ENV_FLOOD, ENV_NOISE, ENV_ORPHAN, ENV_PAUSE, ENV_PAUSE_TIMES,
};
pub use input::EXIT_ORPHANED;
pub use start::{main, LaneConfig};
