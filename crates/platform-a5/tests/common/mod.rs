//! a5 as the shared tests see it: its runner and what the seed measured on it. The tests
//! themselves are written once, for both arches, in `cardguard_test_support::suites`;
//! the arch's expectations live here, so a difference between the arches is visible in one place.

use cardguard_test_support::suites::ArchUnderTest;
use platform_common::driver::DriverCall;
use platform_common::error::codes;
use platform_common::DriverError;

/// a5 under test.
pub const UNDER_TEST: ArchUnderTest = ArchUnderTest {
    entry: platform_a5::ENTRY,
    // The op-timeout as a5 reports it: 507000 at the AICPU stream sync (STARS reaped the op).
    op_timeout: DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR),
    // Where an unguarded a5 run on the poisoned context fails first: register mapping, rc=62.
    cascade_surface: DriverError::new(DriverCall::HalResMap, codes::HAL_NO_PROCESS),
    // The bounded drain on a poisoned a5 context.
    drain_error: codes::RT_STREAM_SYNC_TIMEOUT,
    // The smallest block dim over the a5 limit of 36.
    over_limit_block_dim: 37,
};
