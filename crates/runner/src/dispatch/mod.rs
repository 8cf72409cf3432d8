//! The dispatcher: the parent process of a run.
//!
//! It takes every card's lease first and holds them for the whole run, starts the simulated run on
//! those cards (plan installed, counters zeroed), starts one lane per card, hands out classes
//! dynamically, watches time, reads the poison sink, retries, respawns, quarantines, merges one
//! verdict per case and writes the reports (DESIGN section 5, steps 5 to 8).
//!
//! - `run`: [`run()`], one run from its plan to its report;
//! - `skip`: the skip decision (a skip condition that holds, more cards than the run has, a kernel
//!   without a binary for the platform);
//! - `leases`: `--devices` / `--device-num`;
//! - `work`: the cases' bookkeeping and the queue;
//! - `policy`: every decision of steps 5 to 8, as pure functions with table tests;
//! - `card_wait`: `--wait-for-cards`, waiting in the host-wide queue for busy cards;
//! - `event_loop`, `lanes`, `on_lane`, `on_exit`, `on_output`, `on_signal`, `state`: the loop
//!   that owns the lane processes and the clock and applies the policy's decisions;
//! - `card_memory`: cards that remember their health (preflights, quarantines recorded beside
//!   the card's lock);
//! - `spawn`: starting lanes from the binary the run started with, with retries;
//! - `lane_proc`: one lane process (its channel, capture pipes, leases);
//! - `lane_watch`: the thread per lane that reads its channel and output in order and watches
//!   its exit;
//! - `capture`: a lane's output as the event loop keeps it per attempt;
//! - `kill`: SIGTERM, grace, SIGKILL of a lane's process group;
//! - `diagnose`: a hung case's diagnosis before its lane is ended (the lane's breadcrumb, the
//!   native stacks); `stacks`: the stack tool (`eu-stack`, `gdb`), found and run bounded;
//! - `live`: the live lanes' process groups, for the signal thread's last-resort kill;
//! - `signals`: SIGINT / SIGTERM to the dispatcher, fed into the event loop (`on_interrupt`);
//! - `peak_rss`: a process's peak RSS, for the figures `--stats-out` writes.
//!
//! It never runs a case itself.

mod capture;
mod card_memory;
mod card_wait;
mod diagnose;
mod event_loop;
mod kill;
mod lane_proc;
mod lane_watch;
mod lanes;
mod leases;
mod live;
mod on_exit;
mod on_lane;
mod on_output;
mod on_signal;
mod peak_rss;
pub mod policy;
mod run;
mod signals;
mod skip;
mod spawn;
mod stacks;
mod state;
mod work;

pub use card_wait::{take_cards, CardRequest, WaitError};
pub use lane_proc::LaneCommand;
pub use lane_watch::EXIT_DRAIN_GRACE;
pub use leases::{
    take as take_leases, AutoCount, BadDeviceList, DeviceSpec, TakeError, Want, MAX_RANGE_CARDS,
};
pub use peak_rss::peak_rss_kib;
pub use policy::{Isolation, BATCHES_IN_FLIGHT, KILL_GRACE, MAX_INFRA_KILLS, MAX_LANE_DEATHS};
pub use run::{run, DispatchError, RunOutcome, RunPlan};
pub use spawn::ENV_SPAWN_EAGAIN;
pub use stacks::{default_search_path as default_stack_tool_path, ENV_STACK_TOOL_PATH, STACK_BOUND};
pub use state::DispatchStats;
