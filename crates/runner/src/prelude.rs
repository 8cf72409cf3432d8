//! Everything a suite author needs, in one `use runner::prelude::*;`: the declarations
//! ([`Suite`], [`ClassSpec`], [`CaseSpec`], [`Runtime`], [`Fixture`], settings), the case context
//! and its types ([`CaseCtx`], [`Arg`], [`DeviceBuffer`], [`CaseFailure`]), the arch, failure
//! class and code names ([`codes`]: CANN's codes, e.g. `codes::RT_AICORE_EXCEPTION`), and
//! [`rand::Rng`] for the case's seeded RNG. It only re-exports.

pub use crate::case::{
    Arg, CaseCtx, CaseFailure, CaseRng, CaseSpec, ClassSpec, DeviceBuffer, DeviceError, Expected, Fixture,
    RunInfo, Runtime, SetupError, SetupInfo, Suite,
};
pub use crate::report::model::Platform;
pub use cardguard_reference::{allclose, SplitMix64};
pub use platform_common::error::codes;
pub use platform_common::{Arch, Code, FailureClass};
pub use rand::Rng;
