//! `libsim_acl.so`: the CANN C ABI that cardguard's `acl` driver calls, with the simulated card
//! behind it, so the driver's whole FFI path runs on a machine without a card.
//!
//! - `exports_acl`, `exports_rt`, `exports_hal`: the `acl*`, `rt*` and `hal*` symbols of
//!   `platform-common/cann/cardguard_cann.h`, each checked at compile time against the generated
//!   `PFN_*` type of its declaration.
//! - `exports_ext`: cardguard's optional `cgSim*` extensions (launch origin and argument roles;
//!   starting a run with a fault plan).
//! - `abi`: the shared rules of every export: no panic crosses the ABI, results become raw codes.
//! - `state`: the process-global [`platform_common::sim::SimDriver`] and its settings (the arch's
//!   facts from its arch crate, `ONBOARD_SIM_ARCH` picking which).
//! - `settings`: the variables it reads, from the process environment or a file beside the
//!   library (`libsim_acl.so.env`), which wins.
//! - `blob`: kernel binaries received as bytes, loaded from a memory file.
//! - [`settings`] is public (rlib) so that tests can give a copy of the library its own settings
//!   file; building, finding and loading copies of the `.so` for tests is `cardguard-test-support`'s
//!   (`locate`), and so are the seed's measurements through it (`containment`).
//!
//! Design choices: one process-global driver, as CANN has one runtime per process (a copy of the
//! library under another file name is another "process": tests use this to run several in one
//! test binary); like CANN's, its current device is kept per thread (`aclrtSetDevice` selects the
//! calling thread's), so a caller that drives two cards from one thread fails here as it would
//! on a card; no lease crosses the C ABI, as none crosses CANN's: the caller's type system
//! holds it (`AclDriver::reset_device_force` takes `&DeviceLease`). This crate never decides what a
//! code means; the simulator returns it and the export passes it on.

mod abi;
mod blob;
mod exports_acl;
mod exports_ext;
mod exports_hal;
mod exports_rt;
pub mod settings;
mod state;
