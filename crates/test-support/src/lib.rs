//! cardguard's shared test code (`publish = false`, a dev-dependency only): nothing here is
//! product API, and no product crate depends on it (`cargo tree -e normal -p runner` does not
//! list it).
//!
//! - [`bench`](mod@bench): [`SimBench`], a simulated machine of one arch for one test, and the workload every
//!   measurement runs; [`SimProcess`], an in-process simulator or a copy of `libsim_acl.so`.
//! - [`measure`]: the seed's measurements (raw driver, guarded runner, soft reset, force-reset
//!   recovery, compute in a fresh process) as data; they never assert.
//! - [`helper`]: the "other process" of the cross-process rows (the `sim-helper` binary).
//! - [`suites`]: the arch crates' integration tests, written once for both arches; they assert
//!   and panic. [`arch_runner_tests!`] writes their `#[test]` functions in an arch crate.
//! - [`sdma_measure`]: the SDMA measurements of issue 22 (stream failure modes, the handoff, the
//!   wedged engine's probes, the warm-up fault), as data.
//! - [`containment`]: the measurements through `libsim_acl.so`, as views without timings.
//! - [`locate`]: building, finding and copying `libsim_acl.so` for tests; [`bins`]: this crate's
//!   helper binaries (`sim-helper`, `sim-agent`, `probe-suite`), built on first use;
//!   [`cargo_build`]: how.
//! - [`acl_fixtures`]: shared objects that are not CANN, for the `acl` driver's load tests.
//! - [`probe_suite`]: cases that exercise the runner's public authoring API from outside it, run
//!   by the `probe-suite` binary ([`bins::probe_suite`]) in the runner's process tests.
//! - [`report_fixture`]: a realistic run's events and report (every outcome, a card's whole
//!   health story), for the report crate's tests and the runner's.
//! - [`real_headers`]: CANN's real ACL headers out of the torch-npu wheel `.ci/run` downloads,
//!   for the conformance tests.
//! - [`entry`]: the arch crate's `ENTRY` of an `Arch` (the one place this crate names the arch
//!   crates).
//!
//! Design choices: every setting (sim root, lock directory, timeouts) is passed in, none is read
//! from or written to the environment (the hardware suite reads the card number,
//! `ONBOARD_TEST_DEVICE`, and nothing else); every `$crate` path of the macro is this crate, whose
//! dependencies (`platform-common`, the arch crates, `sim-acl`) are all below it.

pub mod acl_fixtures;
mod arches;
pub mod bench;
pub mod bins;
pub mod cargo_build;
pub mod containment;
pub mod helper;
pub mod locate;
pub mod measure;
pub mod probe_suite;
pub mod real_headers;
pub mod report_fixture;
pub mod sdma_measure;
pub mod suites;

pub use arches::entry;
pub use bench::{SimBench, SimProcess};
