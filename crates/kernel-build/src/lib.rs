//! Builds cardguard kernel blobs: C++ sources compiled with the [`cc`] crate (compiler discovery,
//! `CXX`/`CXXFLAGS`, parallel compiles under cargo's jobserver) into one shared object per kernel
//! and arch, `<out>/<arch>/<name>.so`.
//!
//! - [`sources`]: where the built-in kernels and the kernel ABI header are (`kernels/`,
//!   `kernels/include`), which files are kernels, and the names of the files built.
//! - [`kernel_build`]: [`KernelBuild`], "build these sources for these arches into this dir", and
//!   the [`BuiltBlob`]s it returns.
//! - `messages`: what the compiler printed, collected per source from `cc`'s message logger.
//! - [`error`]: [`BuildError`], each failure typed by the step that failed.
//!
//! Users: `platform-common`'s `build.rs` (the built-in kernels of both arches, on every build),
//! `cargo xtask build-kernels` (the same, on demand), and a suite crate's `build.rs` building its
//! own kernels against the same ABI header. Design choices: `cc` owns finding and invoking the
//! compiler; this crate owns the blob layout, the `CG_ARCH` define, linking the objects into a
//! shared object and installing it atomically (link to a temporary name, then rename, so a
//! process that has a blob loaded never sees it rewritten in place). It never loads a blob.

pub mod error;
pub mod kernel_build;
mod messages;
pub mod sources;

pub use error::BuildError;
pub use kernel_build::{BuiltBlob, KernelBuild};
pub use sources::{abi_include_dir, builtin_kernels_dir, kernel_sources, BLOB_EXTENSION, SOURCE_EXTENSION};
