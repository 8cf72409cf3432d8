//! The a2a3 (Ascend910) `DeviceRunner` of cardguard.
//!
//! - [`runner`]: [`DeviceRunner`], the shared `platform_common::runner_base::ArchRunner` (on
//!   `DeviceRunnerBase`: the containment chain, fail fast, then force reset at finalize) with
//!   a2a3's own register mapping.
//! - [`facts`]: [`FACTS`], a2a3's limits and codes (max block dim 24; op-timeout 507018 at the
//!   AICPU stream sync; bounded drain 507015 on a poisoned context): their one home.
//! - [`registers`]: one mapping at init (`halGetDeviceInfoByBuff` for the partial-good mask,
//!   `halMemCtl` for the register window, EACCES retried as upstream does);
//!   a2a3's `ArchRegisters`, used by the device runner and by the seed's naive worker.
//! - [`entry`]: [`ENTRY`], everything that differs for a2a3 as one value (the facts, runner and
//!   naive worker, the CANN compiler's AICore target, the SDMA choice) for callers that pick the
//!   arch at run time; the drivers are platform-common's (`platform_common::drivers`), bound to
//!   [`FACTS`] through it. Features `sim` (default) and `onboard` turn them on.
//!
//! Design choices: a2a3 maps registers once at init, so on a poisoned context an unguarded run
//! surfaces at device malloc (507899); the guard refuses before that. Never more blocks than the
//! partial-good mask allows. The bounded drain can report success on a poisoned
//! a2a3 card (a false negative), so the runner never trusts it: any launch or sync error marks the
//! runner unusable. A runner created with the SDMA option makes one force-reset attempt, not three. The
//! crate's tests are written once for both arches in `cardguard-test-support` and run here with
//! a2a3's expectations (`tests/common`).
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

pub mod entry;
pub mod facts;
pub mod hal;
pub mod registers;
pub mod runner;

pub use entry::ENTRY;
pub use facts::FACTS;
pub use runner::DeviceRunner;
