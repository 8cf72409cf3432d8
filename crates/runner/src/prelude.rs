//! Everything a suite author needs, in one `use runner::prelude::*;`: the declarations
//! ([`Suite`], [`ClassSpec`], [`CaseSpec`], [`Runtime`], [`Fixture`], settings), the case context
//! and its types ([`CaseCtx`], [`Arg`], [`DeviceBuffer`], [`CaseFailure`]), a compute case's
//! launches ([`KernelCase`] of [`HostArg`]s, [`Workload`], [`Tolerance`], the byte helpers), the
//! arch, failure
//! class and code names ([`codes`]: CANN's codes, e.g. `codes::RT_AICORE_EXCEPTION`), and
//! [`rand::Rng`] for the case's seeded RNG. It only re-exports.

pub use crate::case::{
    Arg, CaseCtx, CaseFailure, CaseRng, CaseSpec, ClassSpec, DeviceBuffer, DeviceError, Expected, Fixture,
    RunInfo, Runtime, SetupError, SetupInfo, Suite, Tolerance, Workload,
};
pub use crate::report::model::Platform;
pub use cardguard_reference::{
    allclose, bytes_to_f32s, f32s_to_bytes, i32s_to_bytes, HostArg, KernelCase, SplitMix64,
};
pub use platform_common::error::codes;
pub use platform_common::{Arch, Code, FailureClass};
pub use rand::Rng;
pub use std::time::Duration;
