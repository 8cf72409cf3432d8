//! What a5 is, as the layers below the runner need it: [`FACTS`].
//!
//! This file is the one home of a5's limits and codes: the device runner's block-dim check, the
//! simulated a5 card and the runner's expectations all read them from here (through
//! `ArchRegisters::FACTS`, [`crate::ENTRY`] or `SimConfig::arch`). It never maps registers
//! ([`crate::registers`] does).

use platform_common::error::codes;
use platform_common::{Arch, ArchFacts};

/// a5 (Ascend950): at most 36 AICore blocks per launch; an op-timeout surfaces as
/// 507000 (`ACL_ERROR_RT_INTERNAL_ERROR`) at the AICPU stream sync: STARS reaped the op; the bounded device drain on a poisoned context returns 507046 (`ACL_ERROR_RT_STREAM_SYNC_TIMEOUT`).
pub const FACTS: ArchFacts = ArchFacts {
    arch: Arch::A5,
    max_block_dim: 36,
    op_timeout: codes::RT_INTERNAL_ERROR,
    drain_error: codes::RT_STREAM_SYNC_TIMEOUT,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facts_are_the_seeds_measurements() {
        assert_eq!(FACTS.name(), "a5");
        assert_eq!(FACTS.max_block_dim(), 36);
        assert_eq!(FACTS.op_timeout_code().raw, 507000);
        assert_eq!(FACTS.drain_error_code().raw, 507046);
    }
}
