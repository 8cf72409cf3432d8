//! The a2a3 (Ascend910) `DeviceRunner` of cardguard.
//!
//! - [`runner`]: [`DeviceRunner`], the shared `platform_common::runner_base::ArchRunner` (on
//!   `DeviceRunnerBase`: the containment chain, fail fast, then force reset at finalize) with
//!   a2a3's own register mapping.
//! - [`registers`]: one `halMemCtl` at init: the register window and the partial-good mask.
//! - [`drivers`]: which drivers this build has (features `sim`, default, and `onboard`).
//!
//! Design choices: a2a3 maps registers once at init, so on a poisoned context an unguarded run
//! surfaces at device malloc (507899); the guard refuses before that. Max block dim 24, and never
//! more than the partial-good mask allows. The bounded drain can report success on a poisoned
//! a2a3 card (a false negative), so the runner never trusts it: any launch or sync error marks the
//! runner unusable. A runner created with the SDMA option makes one force-reset attempt, not three.
//!
//! A force reset needs the card's lease, by type: finalize takes `&DeviceLease`, and there is no
//! other way to reach `aclrtResetDeviceForce`. This does not compile:
//!
//! ```compile_fail,E0061
//! use platform_a2a3::DeviceRunner;
//! fn close(runner: DeviceRunner) {
//!     let _ = runner.finalize(); // no lease: no reset
//! }
//! ```
//!
//! while the same call with the card's lease does:
//!
//! ```no_run
//! use platform_a2a3::DeviceRunner;
//! use platform_common::DeviceLease;
//! fn close(runner: DeviceRunner, lease: &DeviceLease) {
//!     let _ = runner.finalize(lease);
//! }
//! ```

pub mod drivers;
pub mod registers;
pub mod runner;

pub use runner::DeviceRunner;
