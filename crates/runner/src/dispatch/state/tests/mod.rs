//! Scenario tests of the state machine: whole runs driven through [`super::DispatchState`] as
//! tables of events in and actions out, with no process (issue 19 item 1).
//!
//! - `harness`: the runs, the events, the actions rendered as short lines;
//! - `deaths`: lane deaths in a row quarantine a card; no healthy card left;
//! - `retries`: device errors retried, a poison sink's fresh lane and the retries it takes;
//! - `interrupt`: a signal ends every lane and gives every case a verdict;
//! - `multi`: the multi-card phase, and a lane that dies in it;
//! - `clock`: init timeouts, a hung case's diagnosis and end, the watchdog;
//! - `host`: kills from outside, a lost lease, a lane that cannot start;
//! - `isolation`: `class` and `case` lanes;
//! - `preflight`: a card that remembers a quarantine is checked first;
//! - `hardware`: a hardware fault takes its card out at once, "needs service", and later runs
//!   skip the card.
//! - `planned`: `--order smart`: each card takes its planned units, a card that runs ahead steals.
//! - `placement`: a retry goes to a card holding its runtime, or its own once reset, within an
//!   init's wait; else to the first free card; a quarantine re-places it.

mod clock;
mod deaths;
mod hardware;
mod harness;
mod host;
mod interrupt;
mod isolation;
mod multi;
mod placement;
mod planned;
mod preflight;
mod retries;
