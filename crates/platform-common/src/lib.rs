//! Everything arch-independent below the cardguard runner.
//!
//! - [`driver`]: the `Driver` trait, the narrow slice of the CANN runtime the runners call.
//! - [`error`]: typed errors, the table of codes, classification by type and code.
//! - [`sim`]: the simulated card (feature `sim`), a real `Driver` that behaves as measured cards did.
//! - `acl` (feature `onboard`): the CANN `Driver`, its libraries loaded at run time.
//! - [`lease`]: exclusive, crash-safe per-card leases (`flock`).
//! - [`env`] and [`number`]: how an `ONBOARD_*` variable is read and the one rule for a number.
//! - [`timeouts`]: scheduler < op-execute < stream-sync, with their overrides.
//! - [`kernel`]: the kernel-blob ABI, loader and builder.
//! - [`reference`]: host references, inputs and argument lists of the built-in kernels.
//! - [`health`] and [`runner_base`]: the device runner's state machine and shared half.
//!
//! Design choices: errors are `Copy` values over raw codes, named only when shown; the simulator
//! is always the default so every crate tests without a card; force reset takes a lease by type.

pub mod arch;
pub mod driver;
pub mod env;
pub mod error;
pub mod health;
pub mod kernel;
pub mod lease;
pub mod number;
pub mod reference;
pub mod runner_base;
pub mod timeouts;

#[cfg(feature = "sim")]
pub mod sim;

#[cfg(feature = "onboard")]
pub mod acl;

pub use arch::Arch;
pub use driver::{DeviceId, Driver};
pub use error::{Code, DriverError, FailureClass};
pub use lease::DeviceLease;
