//! Suite archives: one `.tar.zst` with a suite binary, its kernel blobs, `libsim_acl.so` and a
//! manifest, so a card host runs the matrix with no Rust toolchain and no checkout.
//!
//! Layout (under one top directory, `<binary>-<arch>/`):
//!
//! ```text
//! cardguard-archive.json     the manifest (first member): arch, suite, git revision, profile,
//!                            and the SHA-256 and size of every other member
//! <binary>                   the suite binary (dispatcher and lane)
//! kernels/<arch>/<name>.so   its kernel blobs, found beside the binary at run time
//! lib/libsim_acl.so          the CANN C ABI over the simulated card (for ONBOARD_ACL_LIB)
//! ```
//!
//! - [`manifest`]: the manifest's format and the checksum both sides use;
//! - [`write`](mod@write): writing an archive (`cargo xtask archive` gathers the files);
//! - [`unpack`](mod@unpack): unpacking one and checking every member, a bad one named.
//!
//! The format lives here, apart from the runner, so the tools that pack a suite link no runner;
//! the suite binary's side (`--archive FILE`: unpack, check, exec the archived binary; finding
//! kernels beside an unpacked binary) is the runner's `archive` module. This crate never builds a
//! binary and never runs one.

pub mod manifest;
pub mod unpack;
pub mod write;

pub use manifest::{
    sha256_file, sha256_hex, Manifest, Member, SuiteInfo, FORMAT, KERNELS_DIR, MANIFEST_NAME, SIM_ACL_LIB,
};
pub use unpack::{unpack, ArchiveError, MemberProblem, Unpacked};
pub use write::{write_archive, SourceFile, WriteError};

#[cfg(test)]
mod tests;
