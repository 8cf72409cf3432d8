//! One measurement of the seed's tables in its own process, on a simulated card of either arch:
//! the other process of the arch crates' cross-process tests. Usage: `sim-helper ARCH MODE
//! SIM_ROOT LOCK_DIR CARD`, with MODE `hang-then-exit`, `hang-then-finalize` or `compute`; exit 0
//! when the measurement came out as the seed says, 1 otherwise (the line on stdout says what
//! happened), 2 on a setup error.

use std::process::ExitCode;

fn main() -> ExitCode {
    cardguard_test_support::helper::helper_main()
}
