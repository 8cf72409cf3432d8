//! [`ENTRY`]: everything that makes this crate's arch differ, as one value, for callers that
//! pick the arch at run time (through the registry crate `cardguard-arches`: the runner,
//! `cargo xtask`, `libsim_acl.so`, the C++ host API, the shared tests): the facts, the device
//! runner and naive worker with a5's register mapping, the CANN compiler's AICore target and the
//! SDMA choice. The drivers (simulated a5 card, CANN) are platform-common's, bound to [`FACTS`]
//! through the entry. It adds nothing: every entry point is defined in its own file.

use platform_common::runner_base::{ArchEntry, RawWorker};

use crate::facts::FACTS;
use crate::registers::CoreRegisters;
use crate::runner::DeviceRunner;

/// a5's entry points.
pub const ENTRY: ArchEntry = ArchEntry {
    facts: FACTS,
    init_runner: DeviceRunner::init_boxed,
    open_raw_worker: RawWorker::open::<CoreRegisters>,
    // `--cce-aicore-arch` of a5's AICore binaries.
    aicore_arch: "dav-c310-vec",
    // Its register mapping on the CANN driver: its own HAL calls and symbols.
    hal: crate::hal::HAL,
    // a5's workers take no SDMA option.
    sdma_workers: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_is_this_arch() {
        assert_eq!(ENTRY.facts, FACTS);
        assert_eq!(ENTRY.aicore_arch, "dav-c310-vec");
    }

    #[cfg(feature = "sim")]
    #[test]
    fn the_simulated_card_is_this_arch() {
        assert_eq!(ENTRY.sim_config("/nonexistent-sim-root").arch, FACTS);
    }
}
