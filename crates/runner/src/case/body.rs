//! What a case does: a body.
//!
//! - [`Body::Host`]: a Rust function of the case context ([`CaseCtx`]), the general form: it
//!   allocates and copies device buffers, launches the case's kernels, checks what came back.
//! - [`Body::Compute`]: a convenience on top of it: a generator of reference launches
//!   ([`KernelCase`]s: inputs, goldens, tolerances) that the runner runs through the same case
//!   context, each launch checked against its goldens.
//! - [`Body::Trivial`]: no device work at all (the dispatch benchmark's cases).
//!
//! This file owns the declarations; the case executor (`crate::exec`) runs them.

use std::fmt;
use std::sync::Arc;

use platform_common::Arch;

use super::failure::CaseFailure;
use cardguard_reference::KernelCase;

use super::ctx::CaseCtx;

/// Relative and absolute tolerances of a golden comparison (`|got - want| <= atol + rtol * |want|`).
/// A case's tolerance, when set, replaces the ones its generator's [`KernelCase`]s carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f32,
    /// Absolute tolerance.
    pub atol: f32,
}

/// What a generator returns: the launches of one case ([`KernelCase`]s from
/// `crate::suite::reference`: kernel, block dim, host args, expected f32 outputs), run in
/// order on one worker, each checked against its goldens.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workload {
    /// The launches.
    pub launches: Vec<KernelCase>,
}

impl From<KernelCase> for Workload {
    fn from(l: KernelCase) -> Self {
        Self { launches: vec![l] }
    }
}

impl From<Vec<KernelCase>> for Workload {
    fn from(launches: Vec<KernelCase>) -> Self {
        Self { launches }
    }
}

/// An input generator with its golden reference: builds the workload for an arch from a fixed
/// seed. Deterministic: the same (arch, seed) always gives the same workload.
pub type Generator = Arc<dyn Fn(Arch, u64) -> Workload + Send + Sync>;

/// A host-code body: runs on the lane's thread of the card with the case context, the only door
/// to the device. `Ok(())` passes; an error fails the attempt with its class.
pub type HostFn = Arc<dyn Fn(&mut CaseCtx<'_>) -> Result<(), CaseFailure> + Send + Sync>;

/// What a case does.
#[derive(Clone)]
pub enum Body {
    /// A Rust function of the case context.
    Host(HostFn),
    /// Launches from the generator, outputs compared with its goldens (run through the case
    /// context, as a host body would).
    Compute {
        /// Inputs and goldens.
        generator: Generator,
        /// Tolerances replacing the launches' own, when set.
        tolerance: Option<Tolerance>,
    },
    /// No device work: the case passes at once (benchmark of the runner's own cost).
    Trivial,
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Body::Host(_) => f.write_str("Host"),
            Body::Compute { tolerance, .. } => f
                .debug_struct("Compute")
                .field("tolerance", tolerance)
                .finish_non_exhaustive(),
            Body::Trivial => f.write_str("Trivial"),
        }
    }
}

impl Body {
    /// Whether the body touches a device (and so needs a chip worker).
    pub fn needs_device(&self) -> bool {
        !matches!(self, Body::Trivial)
    }

    /// `host`, `compute` or `trivial` (`--list --format json`'s `body`).
    pub fn name(&self) -> &'static str {
        match self {
            Body::Host(_) => "host",
            Body::Compute { .. } => "compute",
            Body::Trivial => "trivial",
        }
    }
}
