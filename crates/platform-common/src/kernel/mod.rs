//! The kernel-blob format, loader and builder shared by both arches.
//!
//! A blob is a shared object built from a C++ source under `kernels/` against
//! `kernels/include/cardguard/kernel.h` (C ABI, version [`ABI_VERSION`]).

use std::path::PathBuf;

use crate::arch::Arch;

/// The ABI version this loader speaks.
pub const ABI_VERSION: u32 = 1;

/// What a blob says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMeta {
    /// Kernel name, e.g. `vector_add`.
    pub name: String,
    /// The arch the blob was built for.
    pub arch: Arch,
    /// The block dim the kernel is written for.
    pub block_dim: u32,
    /// How many u64 arguments it takes.
    pub num_args: u32,
}

/// A loaded kernel blob.
#[derive(Debug)]
pub struct KernelBlob {
    /// Where it was loaded from.
    pub path: PathBuf,
    /// Its metadata.
    pub meta: KernelMeta,
}
