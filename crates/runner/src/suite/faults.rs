//! The standalone `AicoreOpTimeout` class (`tensormap_and_ringbuffer`), as the seed's
//! `test_aicore_op_timeout`, written as a host-code case with an expected failure: the `hang`
//! kernel blocks in the wait API until the card reaps it, the launch must fail with the arch's
//! op-timeout code ([`Expected::OpTimeout`]) within its liveness bound (the stream-sync timeout
//! plus 5 s, checked by the body), and the worker's close (force reset, probe) must return
//! within its own (checked by the lane for an expected device fault in a standalone case).
//! Standalone: the case gets a worker of its own, built after the lane's pooled worker is
//! closed, so the fault it provokes poisons nothing else.

use std::time::Instant;

use platform_common::Arch;

use super::runtimes;
use crate::case::CaseCtx;
use crate::case::{CaseFailure, CaseSpec, ClassSpec, Expected, Suite};
use crate::exec::run_bound;

/// Blocks of the hanging launch (the `hang` blob is written for one).
const HANG_BLOCKS: u32 = 1;

/// The fault classes of `arch`.
pub fn builtin(arch: Arch) -> Suite {
    let _ = arch;
    Suite::new().class(
        ClassSpec::standalone("AicoreOpTimeout", runtimes::tensormap_and_ringbuffer()).case(
            CaseSpec::host("hang", &["hang"], hang).expect_failure(
                "the hang kernel waits until the AICore op-timeout reaps it",
                Expected::OpTimeout,
            ),
        ),
    )
}

/// Launches `hang` and returns its failure, or fails with class `result` when it succeeded or
/// surfaced after the liveness bound.
fn hang(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let start = Instant::now();
    let launched = ctx.launch("hang", HANG_BLOCKS, &[]);
    let ran_for = start.elapsed();
    let Err(e) = launched else {
        return Err(CaseFailure::result("the hang kernel finished: no op-timeout"));
    };
    let bound = run_bound(&ctx.timeouts());
    if ran_for >= bound {
        return Err(CaseFailure::result(format!(
            "the failure surfaced after {} ms, over the liveness bound of {} ms (stream-sync \
             timeout + 5 s): {e}",
            ran_for.as_millis(),
            bound.as_millis()
        )));
    }
    Err(e.into())
}
