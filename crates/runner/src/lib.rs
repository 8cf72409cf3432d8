//! cardguard's onboard runner: chip workers, the pool, cases, device lanes, the dispatcher and
//! reports (DESIGN sections 2 "runner", 3 and 5 steps 3 to 8).
//!
//! Data flows one way: case -> dispatcher -> lane -> chip worker -> device runner -> driver, and
//! events flow back up. Where each step of the containment chain lives:
//! - [`case`]: the API a suite declares its classes and cases with; [`suite`]: the built-in suite;
//!   [`bench_suite`]: the benchmark's trivial cases.
//! - [`select`]: which cases a run holds (`--case`, `--runtime`, `--partition`, arch filter) and
//!   the hand-out order.
//! - [`worker`]: `ChipWorker`; [`pool`]: at most one per card, retired on a device-runtime error
//!   (step 3); [`exec`]: one attempt and its classification.
//! - [`lane`]: the per-card worker process, the heal and the rebuild-then-escalate (step 4);
//!   [`sink`]: the poison sink; [`protocol`]: the lane's JSON lines and exit codes.
//! - [`dispatch`]: leases, lanes, the event loop: fresh-process retry, retries, quarantine, one
//!   verdict per case (steps 5 to 8); [`report`]: what a run leaves behind.
//! - [`cli`], [`app`], [`platform`]: the suite binary's surface and the driver chosen at run time.
//!
//! Design choices: lanes are executors and the dispatcher owns all state (nextest's shape); a lane
//! gets whole classes per message and streams results back; classification comes from typed
//! errors, never message text; the dispatcher, not the lanes, writes every report file.

pub mod app;
pub mod bench_suite;
pub mod case;
pub mod cli;
pub mod dispatch;
pub mod exec;
pub mod lane;
pub mod platform;
pub mod pool;
pub mod protocol;
pub mod report;
pub mod select;
pub mod sink;
pub mod suite;
pub mod worker;
