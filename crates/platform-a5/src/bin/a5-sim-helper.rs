//! One measurement of the seed's tables in its own process, on the simulated a5 card: the other
//! process of the cross-process tests. Usage: `a5-sim-helper MODE SIM_ROOT LOCK_DIR CARD`, with
//! MODE `hang-then-exit`, `hang-then-finalize` or `compute`; exit 0 when the measurement came out
//! as the seed says, 1 otherwise (the line on stdout says what happened), 2 on a setup error.

use std::process::ExitCode;

fn main() -> ExitCode {
    platform_common::runner_base::testkit::helper_main(
        platform_a5::DeviceRunner::ARCH,
        platform_a5::DeviceRunner::init_boxed,
    )
}
