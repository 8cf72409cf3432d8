//! The a5 (Ascend950) `DeviceRunner` of cardguard.
//!
//! - [`runner`]: [`DeviceRunner`], the shared `platform_common::runner_base::ArchRunner` (on
//!   `DeviceRunnerBase`: the containment chain, fail fast, then force reset at finalize) with
//!   a5's own register mapping.
//! - [`facts`]: [`FACTS`], a5's limits and codes (max block dim 36; op-timeout 507000 at the
//!   AICPU stream sync; bounded drain 507046 on a poisoned context): their one home.
//! - [`registers`]: one `halResMap` per AICore, at the start of every run: a5's `ArchRegisters`,
//!   used by the device runner and by the seed's naive worker (`RawWorker`).
//! - [`entry`]: [`ENTRY`], everything that differs for a5 as one value (the facts, runner and
//!   naive worker, the CANN compiler's AICore target, the SDMA choice) for callers that pick the
//!   arch at run time; the drivers are platform-common's (`platform_common::drivers`), bound to
//!   [`FACTS`] through it. Features `sim` (default) and `onboard` turn them on.
//!
//! Design choices: a5 maps registers per run, so on a poisoned context an unguarded run surfaces
//! `halResMap` rc=62 first; the guard refuses before that. The driver is passed in
//! (`Arc<dyn Driver>`), so one build serves sim and real cards. The crate's tests are written once
//! for both arches in `cardguard-test-support` and run here with a5's expectations
//! (`tests/common`).
//!
//! A force reset needs the card's lease, by type: finalize takes `&DeviceLease`, and there is no
//! other way to reach `aclrtResetDeviceForce`. This does not compile:
//!
//! ```compile_fail,E0061
//! use platform_a5::DeviceRunner;
//! fn close(runner: DeviceRunner) {
//!     let _ = runner.finalize(); // no lease: no reset
//! }
//! ```
//!
//! while the same call with the card's lease does:
//!
//! ```no_run
//! use platform_a5::DeviceRunner;
//! use platform_common::DeviceLease;
//! fn close(runner: DeviceRunner, lease: &DeviceLease) {
//!     let _ = runner.finalize(lease);
//! }
//! ```

pub mod entry;
pub mod facts;
pub mod hal;
pub mod registers;
pub mod runner;

pub use entry::ENTRY;
pub use facts::FACTS;
pub use runner::DeviceRunner;
