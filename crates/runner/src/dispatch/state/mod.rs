//! The dispatcher's state machine (issue 19 item 1): all of a run's state (its cases and queue,
//! its cards and their strikes, its lanes' logical state, the attempts) in a value,
//! [`DispatchState`], that owns no process, pipe, clock or file. Events in, actions out:
//! [`DispatchState::handle`] takes an [`Event`] (a lane's message or exit, a signal, time
//! passing, an action's outcome) and the time, and returns the [`Action`]s that follow. The
//! process layer (`dispatch::proc`) only turns OS events into events and carries out actions.
//!
//! - `machine`: the state's fields, the routing of events, the end-of-event checks, the queries;
//! - `event`: the vocabulary ([`Event`], [`Action`]);
//! - `card`, `lane`, `case`, `work`, `capture`, `diagnosis`, `ending`, `retry_wait`: the data
//!   (cards and their strikes, lanes, the cases and queue, a lane's output, a hung case's
//!   diagnosis, a lane's end, a retry waiting for a good card);
//! - `messages`, `attempts`, `exits`, `handout`, `placement`, `reserve`, `timers`, `hung`, `health`,
//!   `interrupt`, `abandon`, `output`: the handling, by subject; every decision is a call into
//!   [`crate::dispatch::policy`].
//!
//! Its tests drive whole runs through it as tables of events in and actions out, with no
//! process (`tests`).

mod abandon;
mod attempts;
mod capture;
mod card;
mod case;
mod diagnosis;
mod ending;
mod event;
mod exits;
mod handout;
mod health;
mod hung;
mod interrupt;
mod lane;
mod machine;
mod messages;
mod output;
mod placement;
mod plan_queues;
mod planned;
mod reserve;
mod retry_wait;
mod timers;
mod unit;
mod work;

#[cfg(test)]
mod tests;

pub use capture::Stream;
pub use card::{CardSeed, Strikes};
pub use case::CaseState;
pub use ending::Ending;
pub use event::{Action, Event, LaneId, LaneSignal, NotSpawned};
pub use machine::{DispatchState, Settings};
pub use planned::Estimates;
pub use unit::Unit;
pub use work::Work;
