//! The case API: how a suite declares its classes and cases (the public authoring API: the
//! built-in suite in `crate::suite` and a suite in its own crate use exactly this).
//!
//! The runner reads these declarations and never changes them: the dispatcher selects and orders
//! classes (and skips what cannot run), a lane runs their cases, and the report names them by
//! [`ClassSpec::case_id`].
//!
//! - `kind`: [`Kind`] (pooled or standalone), [`ArchFilter`]; [`Runtime`] (the pool key) is
//!   `crate::runtime`'s, re-exported;
//! - `body`: [`Body`]: a host-code function of the case context, a compute generator with goldens
//!   built on it, or no device work;
//! - `ctx`: [`CaseCtx`], the case context, the only door to the device from a body (buffers,
//!   launches, seed and RNG, fixtures, comparisons), every call through the worker's device
//!   runner;
//! - `spec`: [`CaseSpec`] and its builder; `class`: [`ClassSpec`]; `suite`: [`Suite`] and its
//!   validation;
//! - `settings`: per-case and per-class timeout, retries, expected failure, skip conditions and
//!   tags ([`Settings`], [`Expected`], [`RunInfo`]);
//! - `fixture`: class fixtures ([`Fixture`]: host data once per lane, device resources once per
//!   worker);
//! - `failure`: [`CaseFailure`], a body's typed failure.
//!
//! This module owns the declarations, their validation and what a body can do; it never runs a
//! case (the case executor, `crate::exec`, does) and depends on nothing of the built-in suite
//! (kernel cases and their check are `cardguard-reference`'s).
//!
//! Below it: the chip worker ([`crate::worker`], which a case context drives) and the pool key
//! ([`crate::runtime`]); above it, never imported here: the executor, the lane, the built-in
//! suite.

mod body;
mod class;
mod ctx;
mod failure;
mod fixture;
mod kind;
mod settings;
mod spec;
mod suite;

pub use body::{Body, Generator, HostFn, Tolerance, Workload};
pub use class::ClassSpec;
pub use failure::{run_error_report, CaseFailure};
pub use fixture::{ClassFixture, DeviceSetup, Fixture, FixtureData, HostSetup, SetupError, SetupInfo};
pub use kind::{ArchFilter, Kind};
pub use settings::{valid_tag, Expectation, Expected, RunInfo, Settings, SkipIf, SkipTest};
pub use spec::{stable_hash, CaseSpec};
pub use suite::{valid_kernel_name, valid_name, Suite, SuiteError, MIN_CASE_TIMEOUT};

pub use crate::runtime::Runtime;
pub(crate) use ctx::CtxParts;
pub use ctx::{Arg, CaseCtx, CaseRng, DeviceBuffer, DeviceError};
