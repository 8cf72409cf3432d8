//! [`ENTRY`]: this crate's facts, device runner and naive worker as one value, for callers that
//! pick the arch at run time (the runner, `cargo xtask sim-probe`, `libsim_acl.so`, the shared
//! tests). It adds nothing: every entry point is defined in its own file.

use platform_common::runner_base::{ArchEntry, RawWorker};

use crate::facts::FACTS;
use crate::registers::CardRegisters;
use crate::runner::DeviceRunner;

/// a2a3's entry points.
pub const ENTRY: ArchEntry = ArchEntry {
    facts: FACTS,
    init_runner: DeviceRunner::init_boxed,
    open_raw_worker: RawWorker::open::<CardRegisters>,
};
