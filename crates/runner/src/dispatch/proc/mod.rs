//! The dispatcher's process layer: everything that holds a process, a pipe, a thread or the
//! clock. It turns OS events into the state machine's events and carries out its actions.
//!
//! - `run`: [`run()`], one run from its plan to its report;
//! - `event_loop`: the loop (reports in, state events out, the journal batched), `actions`:
//!   carrying out the state's actions;
//! - `spawn`: starting lanes from the binary the run started with, with retries; `lane_proc`: one
//!   lane process (its channel, capture pipes, leases; what a lane is started as,
//!   [`LaneCommand`]); `lane_watch`: the thread per lane that reads its channel and output in
//!   order and watches its exit (`exit_signal`), its channel (`lane_chan`) and one capture pipe
//!   of it (`lane_pipe`), and its private device-log directory (`device_log`);
//!   `lane_event`: what those threads report;
//! - `kill`: signalling a lane's process group; `live`: the live lanes' process groups, for the
//!   signal thread's last-resort kill; `signals`: SIGINT / SIGTERM to the dispatcher, fed into the
//!   loop;
//! - `stacks`: the stack tool (`eu-stack`, `gdb`) for a hung case's diagnosis, found and run
//!   bounded; `peak_rss`: a process's peak RSS, for the figures `--stats-out` writes.
//!
//! It never decides anything: every decision is the state machine's (through the policy).

mod actions;
mod device_log;
mod event_loop;
mod exit_signal;
mod kill;
mod lane_chan;
mod lane_event;
mod lane_pipe;
mod lane_proc;
mod lane_watch;
mod live;
mod peak_rss;
mod run;
mod signals;
mod spawn;
mod stacks;

pub use lane_proc::{LaneCommand, LaneStyle, FOREIGN_DEVICE_FLAG, FOREIGN_PREFLIGHT_FLAG};
pub use lane_watch::EXIT_DRAIN_GRACE;
pub use peak_rss::peak_rss_kib;
pub use run::{run, DispatchError, DispatchStats, RunOutcome, RunPlan};
pub use spawn::ENV_SPAWN_EAGAIN;
pub use stacks::{default_search_path as default_stack_tool_path, ENV_STACK_TOOL_PATH, STACK_BOUND};
