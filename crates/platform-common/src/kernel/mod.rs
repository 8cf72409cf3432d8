//! The kernel-blob format, loader and builder shared by both arches.
//!
//! A blob is a shared object built from a C++ source under `kernels/` against
//! `kernels/include/cardguard/kernel.h` (C ABI, version [`ABI_VERSION`]). [`loader`] opens blobs and
//! runs their blocks (the only `unsafe` here); it never decides when a kernel is reaped: the
//! [`Waiter`] the caller passes does.

mod loader;

pub use loader::{KernelBlob, KernelError, KernelMeta, WaitOutcome, Waiter, ABI_VERSION};
