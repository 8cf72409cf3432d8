//! The simulated card (feature `sim`): a real [`crate::driver::Driver`] that behaves as the
//! measured a5 and a2a3 cards did (DESIGN section 4).
//!
//! What it owns: per-card state shared by every process (a JSON file per card under
//! [`SimConfig::root`], replaced whole by a rename under a lock file of its own: reset
//! generation, installed faults, the run's counters), per-process contexts in a [`SimDriver`]
//! value (streams with worker threads, memory that is real host memory within the card's
//! capacity, registered kernel blobs run on simulated AICore threads, the sticky error), the
//! op-execute reaper, and the fault plan ([`FaultPlan`]) with its grammar.
//!
//! Bounds: a buffer argument must point into a live allocation (else the launch fails 100000);
//! the kernel gets each buffer's bytes to the end of its allocation and refuses sizes that do not
//! fit (`CG_KERNEL_BAD_ARGS`), which fails the op with 507015 and poisons the context, the
//! faithful model of an out-of-bounds AICore access on a card. What the driver was asked is
//! counted per call ([`SimStats::calls_of`]).
//!
//! What it never does: it never decides what a fault means to a test run (the runner does), never
//! takes a lease (force reset is handed one), and never changes the process environment.
//!
//! Files: `config.rs` (settings), `plan.rs` / `plan_parse.rs` / `plan_error.rs` (fault plans:
//! types, grammar, errors), `card_file.rs` (shared card state, [`start_run`]), `record_file.rs`
//! (its atomic rewrite), `driver.rs` (the call rules), `launch.rs` (a launch's arguments, counting
//! and fate), `reset.rs` (a force reset's verdict), `context.rs` (per-process context and sticky
//! codes), `stream.rs` (queues, sync, error state), `aicore.rs` (blocks and the reaper),
//! `memory.rs` (device memory), `host_faults.rs` (`crash`, `stall`), `stats.rs`, `current.rs` (whose
//! current device), `sdma.rs` (the SDMA engine's rules), `sdma_op.rs` (a queued SDMA copy),
//! `driver_sdma.rs` (the calls that meet it: SDMA copy, stream failure mode, forced destroy, force
//! reset, `aclFinalize`), `plog.rs` (the simulated device log under `ASCEND_PROCESS_LOG_PATH`) and
//! `plog_driver.rs` (the in-process simulator writing it).

mod aicore;
mod card_file;
mod config;
mod context;
mod current;
mod driver;
mod driver_sdma;
mod error;
mod host_faults;
mod launch;
mod memory;
mod plan;
mod plan_error;
mod plan_parse;
mod plog;
mod plog_driver;
mod record_file;
mod reset;
mod sdma;
mod sdma_op;
mod stats;
mod stream;

pub use card_file::{card_state, start_run, start_run_mapped, CardCounters, CardState, SdmaWedge};
pub use config::{
    root_is_temp_fallback, SimConfig, DEFAULT_CARDS, DEFAULT_CARD_MEMORY, ENV_SIM_CARDS, ENV_SIM_ROOT,
};
pub use context::sticky_code;
pub use driver::{CurrentDevice, SimDriver};
pub use error::SimError;
pub use plan::{CardSel, Fault, FaultPlan, FaultRule};
pub use plan_error::{FaultPlanError, PlanErrorKind};
pub use plan_parse::ENV_SIM_FAULTS;
pub use plog::{Plog, ENV_PROCESS_LOG_PATH};
pub use plog_driver::PlogDriver;
pub use stats::{CallCounts, SimStats};
