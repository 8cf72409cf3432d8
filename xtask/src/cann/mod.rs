//! `cargo xtask cann-check`: compiles cardguard's CANN declarations against the CANN installed
//! on this host (`ASCEND_HOME_PATH`, and the driver beside it) and prints one line per mismatch.
//!
//! - `header`: what `cardguard_cann.h` declares (read from its text).
//! - `unit`: the C++ unit that includes the real headers and cardguard's and `static_assert`s
//!   that they agree, and the compiler run.
//! - `install`: finding the installed headers.
//! - `command`: the command's output and exit status (0 agree or no CANN here, 1 mismatches,
//!   2 the check could not run).
//!
//! The tests below run the same unit against the ACL headers of the torch-npu wheel (`.ci/run`
//! downloads it); runtime and HAL headers are not in the wheel, which is why a team runs this
//! command once on its card host.

mod command;
mod header;
mod install;
mod unit;

pub use command::{run, Args};

#[cfg(test)]
mod tests;
