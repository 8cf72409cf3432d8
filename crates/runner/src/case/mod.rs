//! The case API: how a suite declares its classes and cases (the public authoring API: the
//! built-in suite in `crate::suite` and a suite in its own crate use exactly this).
//!
//! The runner reads these declarations and never changes them: the dispatcher selects and orders
//! classes (and skips what cannot run), a lane runs their cases, and the report names them by
//! [`ClassSpec::case_id`].
//!
//! - `runtime`: [`Runtime`] (the pool key), [`Kind`] (pooled or standalone), [`ArchFilter`];
//! - `body`: [`Body`]: a host-code function of the case context ([`CaseCtx`], the only door to the
//!   device), a compute generator with goldens built on it, or no device work;
//! - `spec`: [`CaseSpec`] and its builder; `class`: [`ClassSpec`]; `suite`: [`Suite`] and its
//!   validation;
//! - `settings`: per-case and per-class timeout, retries, expected failure, skip conditions and
//!   tags ([`Settings`], [`Expected`], [`RunInfo`]);
//! - `fixture`: class fixtures ([`Fixture`]: host data once per lane, device resources once per
//!   worker);
//! - `failure`: [`CaseFailure`], a body's typed failure.
//!
//! This module owns the declarations and their validation; it never runs anything (the case
//! executor, `crate::exec`, does).

mod body;
mod class;
mod failure;
mod fixture;
mod runtime;
mod settings;
mod spec;
mod suite;

pub use body::{Body, Generator, HostFn, Tolerance, Workload};
pub use class::ClassSpec;
pub use failure::{run_error_report, CaseFailure};
pub use fixture::{ClassFixture, DeviceSetup, Fixture, FixtureData, HostSetup, SetupError, SetupInfo};
pub use runtime::{ArchFilter, Kind, Runtime};
pub use settings::{valid_tag, Expectation, Expected, RunInfo, Settings, SkipIf, SkipTest};
pub use spec::{stable_hash, CaseSpec};
pub use suite::{valid_kernel_name, valid_name, Suite, SuiteError, MIN_CASE_TIMEOUT};

pub use crate::exec::{Arg, CaseCtx, CaseRng, DeviceBuffer, DeviceError};
