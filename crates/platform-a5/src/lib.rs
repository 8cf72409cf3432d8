//! The a5 (Ascend950) `DeviceRunner` of cardguard.
//!
//! - [`runner`]: [`DeviceRunner`], the shared `platform_common::runner_base::ArchRunner` (on
//!   `DeviceRunnerBase`: the containment chain, fail fast, then force reset at finalize) with
//!   a5's own register mapping.
//! - [`registers`]: one `halResMap` per AICore, at the start of every run.
//! - [`drivers`]: which drivers this build has (features `sim`, default, and `onboard`).
//!
//! Design choices: a5 maps registers per run, so on a poisoned context an unguarded run surfaces
//! `halResMap` rc=62 first; the guard refuses before that. Max block dim 36. The driver is passed
//! in (`Arc<dyn Driver>`), so one build serves sim and real cards.
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

pub mod drivers;
pub mod registers;
pub mod runner;

pub use runner::DeviceRunner;
