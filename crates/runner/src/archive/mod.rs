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
//! The format (the manifest, writing, unpacking with every member checked) is the
//! `cardguard-archive` crate's, re-exported here; this module is the suite binary's side:
//!
//! - `launch`: `--archive FILE`: unpack into a private temp dir, check, exec the archived binary;
//! - `installed`: a binary that runs from an unpacked archive, and the kernel files a suite needs.
//!
//! This module never builds a binary and never decides a verdict.

mod installed;
mod launch;

pub use cardguard_archive::{
    sha256_file, sha256_hex, unpack, write_archive, ArchiveError, Manifest, Member, MemberProblem,
    SourceFile, SuiteInfo, Unpacked, WriteError, FORMAT, KERNELS_DIR, MANIFEST_NAME, SIM_ACL_LIB,
};
pub use installed::{installed_root, kernel_files};
pub use launch::{launch, launch_request, remove_launch_dir, LaunchRequest, ARCHIVE_FLAG};
