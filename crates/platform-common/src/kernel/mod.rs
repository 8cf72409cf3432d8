//! The kernel-blob format and loader shared by both arches.
//!
//! A blob is a shared object built from a C++ source under `kernels/` against
//! `kernels/include/cardguard/kernel.h` (C ABI, version [`ABI_VERSION`]), by the `kernel-build`
//! crate (from this crate's `build.rs` and `cargo xtask build-kernels`) into `<out>/<arch>/<name>.so`;
//! [`load_named`] / [`load_builtin`] find a blob by name and check its arch; `loader` opens blobs
//! and runs their blocks (the only `unsafe` here; [`KernelBlob::run_block`] is an `unsafe fn` whose
//! caller vouches for the buffer addresses and lengths it passes, which the kernels check their
//! sizes against). This module never decides when a kernel is reaped: the [`Waiter`] the caller
//! passes does.

mod blobs;
mod loader;

pub use blobs::{
    blob_dir, blob_path, built_blob_dir, installed_blob_dir, load_builtin, load_named, INSTALLED_KERNEL_DIR,
    KERNEL_DIR_ENV,
};
pub use loader::{KernelBlob, KernelError, KernelMeta, WaitOutcome, Waiter, ABI_VERSION, KERNEL_BAD_ARGS};
