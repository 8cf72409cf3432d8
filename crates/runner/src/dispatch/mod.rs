//! The dispatcher: the parent process of a run.
//!
//! It takes every card's lease first and holds them for the whole run, starts the simulated run on
//! those cards (plan installed, counters zeroed), starts one lane per card, hands out classes
//! dynamically, watches time, reads the poison sink, retries, respawns, quarantines, merges one
//! verdict per case and writes the reports (DESIGN section 5, steps 5 to 8). Its folders are its
//! layers, each depending only on those below it:
//!
//! - `proc`: the process layer ([`run()`], the event loop, lane processes and their watchers,
//!   kills, stacks, signals): it turns OS events into the state machine's events and carries out
//!   its actions;
//! - `state`: the state machine ([`state::DispatchState`]): all of the run's state in a value that
//!   owns no process, pipe, clock or file; events in, actions out;
//! - `policy`: every decision of steps 5 to 8, as pure functions with table tests;
//! - `cards`: taking the run's cards (leases, `--wait-for-cards`) and their health records.
//!
//! It never runs a case itself.

mod cards;
pub mod policy;
mod proc;
pub mod state;

pub use cards::card_wait::{take_cards, CardRequest, WaitError};
pub use cards::leases::{
    take as take_leases, AutoCount, BadDeviceList, DeviceSpec, TakeError, Want, MAX_RANGE_CARDS,
};
pub use policy::{Isolation, BATCHES_IN_FLIGHT, KILL_GRACE, MAX_INFRA_KILLS, MAX_LANE_DEATHS};
pub use proc::{
    default_stack_tool_path, peak_rss_kib, run, DispatchError, DispatchStats, LaneCommand, LaneStyle,
    RunOutcome, RunPlan, ENV_SPAWN_EAGAIN, ENV_STACK_TOOL_PATH, EXIT_DRAIN_GRACE, FOREIGN_DEVICE_FLAG,
    FOREIGN_PREFLIGHT_FLAG, STACK_BOUND,
};
pub use state::Estimates;
