//! a2a3 as the shared tests see it: its runner and what the seed measured on it. The tests
//! themselves are written once, for both arches, in `cardguard_test_support::suites`;
//! the arch's expectations live here, so a difference between the arches is visible in one place.

use cardguard_test_support::suites::ArchUnderTest;
use platform_common::driver::DriverCall;
use platform_common::error::codes;
use platform_common::DriverError;

/// a2a3 under test.
pub const UNDER_TEST: ArchUnderTest = ArchUnderTest {
    entry: platform_a2a3::ENTRY,
    // The op-timeout as a2a3 reports it: 507018 at the AICPU stream sync.
    op_timeout: DriverError::new(
        DriverCall::SynchronizeStreamWithTimeout,
        codes::RT_AICPU_EXCEPTION,
    ),
    // Where an unguarded a2a3 run on the poisoned context fails first: `aclrtMalloc` of the
    // run's first device buffer (the seed's "rtMalloc failed: 507899 (ChipCallable buffer)");
    // registers were mapped once at init, so nothing fails before it.
    cascade_surface: DriverError::new(DriverCall::Malloc, codes::RT_DRV_INTERNAL_ERROR),
    // The bounded drain on a poisoned a2a3 context.
    drain_error: codes::RT_AICORE_EXCEPTION,
    // The smallest block dim over the a2a3 limit of 24.
    over_limit_block_dim: 25,
};
