//! The kernel-blob format and loader shared by both arches.
//!
//! A blob is a shared object built from a C++ source under `kernels/` against
//! `kernels/include/cardguard/kernel.h` (C ABI, version [`ABI_VERSION`]), by the `kernel-build`
//! crate (from this crate's `build.rs` and `cargo xtask build-kernels`) into `<out>/<arch>/<name>.so`;
//! [`load_named`] / [`load_builtin`] find a blob by name and check its arch; [`KernelRegistry`]
//! looks a kernel up per platform and arch (host blobs for simulated cards, device binaries from a
//! manifest or `<name>.o` for real ones) in a run's kernel dirs; `loader` opens blobs
//! and runs their blocks (the only `unsafe` here; [`KernelBlob::run_block`] is an `unsafe fn` whose
//! caller vouches for the buffer addresses and lengths it passes, which the kernels check their
//! sizes against). This module never decides when a kernel is reaped: the [`Waiter`] the caller
//! passes does.

mod blobs;
mod loader;
mod registry;

pub use blobs::{
    blob_dir, blob_path, built_blob_dir, built_blob_root, installed_blob_dir, installed_blob_root,
    load_builtin, load_named, INSTALLED_KERNEL_DIR, KERNEL_DIR_ENV,
};
pub use loader::{KernelBlob, KernelError, KernelMeta, WaitOutcome, Waiter, ABI_VERSION, KERNEL_BAD_ARGS};
pub use registry::{
    BinaryKind, Found, KernelRegistry, Lookup, ManifestMeta, DEVICE_BINARY_EXTENSION, MANIFEST,
};
