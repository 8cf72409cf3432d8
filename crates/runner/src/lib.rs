//! cardguard's onboard runner: chip workers, the pool, cases, device lanes, the dispatcher and
//! reports (DESIGN sections 2 "runner", 3 and 5 steps 3 to 8).
//!
//! Data flows one way: case -> dispatcher -> lane -> chip worker -> device runner -> driver, and
//! events flow back up. Where each step of the containment chain lives:
//! - [`case`]: the API a suite declares its classes and cases with, and the case context a body
//!   drives the device through (the same for the built-in suite and a suite in its own crate;
//!   [`prelude`] brings it in with one `use`; it depends on nothing of the built-in suite, and
//!   kernel cases with their check are `cardguard-reference`'s); [`runtime`]: the pool key;
//!   [`suite`]: the built-in suite; [`bench_suite`]: the benchmark's trivial cases.
//! - [`select`]: which cases a run holds (`--case`, `--runtime`, `--partition`, arch filter) and
//!   the hand-out order ([`partition`]: the shares of `--partition`, by hash or by duration;
//!   [`suggest`]: the nearest names when a selector matches nothing);
//!   [`rerun`]: `--rerun-failed`, the cases an earlier run did not pass.
//! - [`worker`]: `ChipWorker`; [`pool`]: at most one per card; [`exec`]: one attempt (the case
//!   context, the only door to the device from a body) and its classification; [`kernels`]: the
//!   run's kernel registry and the cases without a kernel binary for the platform.
//! - [`lane`]: the per-card worker process. Step 3 (pool heal) and step 4 (rebuild-then-escalate)
//!   are decided by `lane::heal` (`after_case`, `after_close`, `after_init_failure`) and
//!   `lane::escalate` (`sink_records`), applied by the lane's session; [`sink`]: the poison sink;
//!   [`protocol`]: the lane's private channel (JSON lines, bounded), its output marks and exit
//!   codes.
//! - [`dispatch`]: leases, lanes, the dispatcher. Steps 5 to 7 are decided by `dispatch::policy`
//!   (`sink_rerun`, `lane_exit`, `strikes`, `blame`, `retry`, `quarantine`, `watchdog`, `plan`,
//!   `handout`), applied by the state machine `dispatch::state` (events in, actions out, no
//!   process), whose actions `dispatch::proc` carries out; step 8 is [`report::verdict`] and
//!   `RunReport::exit_code`; [`report`]: what a run leaves behind (the model, the files and the
//!   merge are the `cardguard-report` crate's, re-exported there; the runner adds the progress
//!   bars, the report directory held for the run and the reporter).
//! - [`cli`], [`app`], [`lane_command`], [`platform`]: the suite binary's surface and the driver chosen at run time;
//!   [`cli_reference`]: its flags as Markdown (`--cli-reference`, for docs/reference/cli.md);
//!   [`config`]: the config file's profiles and overrides, and which source of a setting wins;
//!   [`settings`]: the settings' value types and parsers, below `cli`, `config`, `dispatch` and
//!   `lane`;
//!   [`list`]: `--list`, plain or JSON Lines; [`stress`]: `--stress-count` and
//!   `--stress-duration`, the selection run again and again on the same cards;
//!   [`history`]: the duration history per suite and arch (the format is `cardguard-report`'s); [`order`]: `--order` and `--history`,
//!   the history's place, the estimates a planned run uses and the run added at its end;
//!   [`archive`]: suite archives for card hosts (`--archive FILE`; the format is
//!   `cardguard-archive`'s);
//!   [`output`]: its own lines, safe on a closed pipe.
//!   [`clock`]: the one monotonic clock of a run's events;
//!   [`crumb`]: a lane's breadcrumb (what its card thread is doing), for a hung case's diagnosis.
//!
//! Imports point one way inside the crate too: no circle between files nor between folders (the
//! tidy test's rule). Design choices: lanes are executors and the dispatcher owns all state
//! (nextest's shape); a lane
//! gets whole classes per message and streams results back; classification comes from typed
//! errors, never message text; the dispatcher, not the lanes, writes every report file.

pub mod app;
pub mod archive;
pub mod bench_suite;
pub mod case;
pub mod cli;
pub mod cli_reference;
pub mod clock;
pub mod config;
pub mod crumb;
pub mod dispatch;
pub mod exec;
pub use cardguard_report::history;
pub mod kernels;
pub mod lane;
pub mod lane_command;
pub mod list;
pub mod order;
pub mod output;
pub mod partition;
pub mod platform;
pub mod pool;
pub mod prelude;
pub mod protocol;
pub mod report;
pub mod rerun;
pub mod runtime;
pub mod select;
pub mod settings;
pub mod sink;
pub mod stress;
pub mod suggest;
pub mod suite;
pub mod worker;
