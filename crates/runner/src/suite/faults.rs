//! The standalone `AicoreOpTimeout` class (`tensormap_and_ringbuffer`), as the seed's
//! `test_aicore_op_timeout`: the `hang` kernel blocks in the wait API until the card reaps it, the
//! run must fail with the arch's op-timeout code within its liveness bound, and the worker's close
//! (force reset, probe) must return within its own. Standalone: the case gets a worker of its own,
//! built after the lane's pooled worker is closed, so the fault it provokes poisons nothing else.

use platform_common::Arch;

use super::runtimes;
use crate::case::{CaseSpec, ClassSpec, Suite};

/// Blocks of the hanging launch (the `hang` blob is written for one).
const HANG_BLOCKS: u32 = 1;

/// The fault classes of `arch`.
pub fn builtin(arch: Arch) -> Suite {
    let _ = arch;
    Suite::new().class(
        ClassSpec::standalone("AicoreOpTimeout", runtimes::tensormap_and_ringbuffer())
            .case(CaseSpec::expect_op_timeout("hang", "hang", HANG_BLOCKS)),
    )
}
