//! Everything arch-independent below the cardguard runner.
//!
//! - [`arch`]: [`Arch`], the shared name of an arch, and [`ArchFacts`], the shape of the facts an
//!   arch crate states about its arch (their values live in the arch crates, never here).
//! - [`driver`]: the `Driver` trait, the narrow slice of the CANN runtime the runners call (its
//!   calls are named by `DriverCall`, in `call`).
//! - [`error`]: typed errors, the table of codes, classification by type and code;
//!   [`fault_kind`]: a fault in an operator's words (`op-timeout (507000 at stream sync)`).
//! - [`sim`]: the simulated card (feature `sim`), a real `Driver` that behaves as measured cards did.
//! - `acl` (feature `onboard`): the CANN `Driver`, its libraries loaded at run time.
//! - [`drivers`]: the drivers this build compiles in (features `sim` and `onboard`, gated there
//!   only), reached through an arch's `ArchEntry` (`sim_config`, `onboard_driver`).
//! - [`lease`]: exclusive, crash-safe per-card leases (`flock`).
//! - [`visible`]: a card's logical id and its physical (driver-visible) id under
//!   `ASCEND_RT_VISIBLE_DEVICES`.
//! - [`env`] and [`number`]: how an `ONBOARD_*` variable is read and the one rule for a number;
//!   [`message`]: an error (and its causes) on one line, as every cardguard binary prints it.
//! - [`sdma`]: the SDMA engine's facts as measured upstream (48 CP-process streams, the handoff
//!   wait before the one force reset, the remote-event timeout, the 64-byte SDMA probe).
//! - [`timeouts`]: scheduler < op-execute < stream-sync, with their overrides.
//! - [`kernel`]: the kernel-blob ABI and loader (the blobs are built by `build.rs` with the
//!   `kernel-build` crate).
//! - [`health`] and [`runner_base`]: the device runner's state machine and shared half, the one
//!   `ArchRunner` the arch crates instantiate, and the seed's naive `RawWorker`.
//!
//! Design choices: errors are `Copy` values over raw codes, named only when shown; the simulator
//! is always the default so every crate tests without a card; force reset takes a lease by type;
//! no product code here is test code (the test kit, fixtures and helper processes are in
//! `cardguard-test-support`) and no host reference math (the built-in suite's, in the runner).
//! This crate never depends on an arch crate: what differs between arches reaches it as data
//! ([`ArchFacts`], `ArchRegisters`).

pub mod arch;
pub mod arch_hal;
mod call;
pub mod code_table;
mod device_id;
pub mod driver;
pub mod drivers;
pub mod env;
pub mod error;
pub mod fault_kind;
pub mod health;
pub mod kernel;
pub mod lease;
pub mod message;
pub mod number;
pub mod runner_base;
pub mod runtime_message;
pub mod sdma;
pub mod timeouts;
pub mod visible;

#[cfg(feature = "sim")]
pub mod sim;

#[cfg(feature = "onboard")]
pub mod acl;

pub use arch::{Arch, ArchFacts};
pub use driver::{DeviceId, Driver};
pub use error::{Code, DriverError, FailureClass};
pub use lease::DeviceLease;
