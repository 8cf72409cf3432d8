//! `build-kernels` (`cargo cardguard build-kernels`, `cargo xtask build-kernels`): kernel binaries for simulated cards (host blobs, with the
//! `kernel-build` helper) or for real ones (AICore device binaries, with the CANN compiler).
//!
//! - `command`: the flags and the run of one build;
//! - `cann`: finding the CANN compiler (`ccec`, else `bisheng`) under the CANN install, the
//!   AICore compile of each source and the `manifest.json` of what was built.

mod cann;
mod command;

pub use command::{run, Args};
