//! What a2a3 is, as the layers below the runner need it: [`FACTS`].
//!
//! This file is the one home of a2a3's limits and codes: the device runner's block-dim check, the
//! simulated a2a3 card and the runner's expectations all read them from here (through
//! `ArchRegisters::FACTS`, [`crate::ENTRY`] or `SimConfig::arch`). It never maps registers
//! ([`crate::registers`] does).

use platform_common::error::codes;
use platform_common::{Arch, ArchFacts};

/// a2a3 (Ascend910): at most 24 AICore blocks per launch; an op-timeout surfaces as
/// 507018 (`ACL_ERROR_RT_AICPU_EXCEPTION`) at the AICPU stream sync; the bounded device drain on a poisoned context returns 507015 (`ACL_ERROR_RT_AICORE_EXCEPTION`), or success on a false negative.
pub const FACTS: ArchFacts = ArchFacts {
    arch: Arch::A2a3,
    max_block_dim: 24,
    op_timeout: codes::RT_AICPU_EXCEPTION,
    drain_error: codes::RT_AICORE_EXCEPTION,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facts_are_the_seeds_measurements() {
        assert_eq!(FACTS.name(), "a2a3");
        assert_eq!(FACTS.max_block_dim(), 24);
        assert_eq!(FACTS.op_timeout_code().raw, 507018);
        assert_eq!(FACTS.drain_error_code().raw, 507015);
    }
}
