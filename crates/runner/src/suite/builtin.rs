//! The built-in suite of an arch: every class group of this module joined in hand-out order.

use platform_common::Arch;

use super::{attention, dense, elementwise, faults, pipeline, sdma};
use crate::case::Suite;

/// The built-in suite of `arch`.
pub fn builtin(arch: Arch) -> Suite {
    Suite::new()
        .extend(attention::builtin(arch))
        .extend(elementwise::builtin(arch))
        .extend(dense::builtin(arch))
        .extend(pipeline::builtin(arch))
        .extend(sdma::builtin(arch))
        .extend(faults::builtin(arch))
}
