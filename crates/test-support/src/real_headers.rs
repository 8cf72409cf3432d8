//! CANN's real ACL headers, for the conformance tests: read out of the `torch-npu` wheel that
//! `.ci/run` downloads (PyPI; the wheel ships `torch_npu/include/acl/acl_rt.h`, `acl_base.h` and
//! `error_codes/rt_error_codes.h`). Nothing of them is committed: the headers' licence does not
//! let this project vendor them, so tests read them where the wheel puts them.
//!
//! Where the wheel is looked for, first hit wins:
//! 1. [`ENV_WHEEL`], a path to the `.whl` file;
//! 2. `<target>/cann-wheel/torch_npu-*.whl` (what `.ci/run` downloads, [`WHEEL_DIR`]).
//!
//! [`acl_include_dir`] extracts `torch_npu/include/acl/**` once into
//! `<target>/cann-wheel/include/acl/` (atomically: concurrent test processes each see a
//! complete tree) and returns `<target>/cann-wheel/include`, the directory to pass as `-I`
//! (`#include "acl/acl_rt.h"`). Without a wheel it returns [`HeadersError::Absent`], whose text
//! a test prints to say plainly that it did not run; with [`ENV_REQUIRE`] set (as `.ci/run` sets
//! it) a test must fail instead (`require_or_skip`).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::cargo_build::target_dir;

/// A path to the torch-npu wheel, overriding the search under the target directory.
pub const ENV_WHEEL: &str = "CARDGUARD_ACL_WHEEL";
/// Set (to anything non-empty) where the real headers must be present: a conformance test then
/// fails without them instead of saying it did not run. `.ci/run` sets it.
pub const ENV_REQUIRE: &str = "CARDGUARD_REQUIRE_REAL_HEADERS";
/// The directory under the target directory that `.ci/run` downloads the wheel into.
pub const WHEEL_DIR: &str = "cann-wheel";
/// The pinned wheel `.ci/run` downloads (its headers are what the tests were checked against).
pub const WHEEL_PIN: &str = "torch-npu==2.14.0";

/// The headers cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum HeadersError {
    /// No wheel where one is looked for.
    #[error(
        "no torch-npu wheel: set {ENV_WHEEL} or download one into {0} \
         (`python3 -m pip download --no-deps --only-binary :all: {WHEEL_PIN} -d {0}`, as .ci/run does)"
    )]
    Absent(PathBuf),
    /// The wheel is there but cannot be read.
    #[error("cannot read the headers out of {path}: {reason}")]
    Unreadable {
        /// The wheel.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The target directory is unknown.
    #[error(transparent)]
    Locate(#[from] crate::cargo_build::LocateError),
}

/// The include directory holding `acl/acl_rt.h`, `acl/acl_base.h` and
/// `acl/error_codes/rt_error_codes.h` from the real wheel.
pub fn acl_include_dir() -> Result<PathBuf, HeadersError> {
    let base = target_dir()?.join(WHEEL_DIR);
    let wheel = find_wheel(&base)?;
    let include = base.join("include");
    if include.join("acl").join("acl_rt.h").is_file() {
        return Ok(include);
    }
    extract(&wheel, &base, &include)?;
    Ok(include)
}

/// The real `rt_error_codes.h`.
pub fn rt_error_codes_header() -> Result<PathBuf, HeadersError> {
    Ok(acl_include_dir()?
        .join("acl")
        .join("error_codes")
        .join("rt_error_codes.h"))
}

/// Whether a missing header must fail the test ([`ENV_REQUIRE`] set).
pub fn required() -> bool {
    std::env::var_os(ENV_REQUIRE).is_some_and(|v| !v.is_empty())
}

/// The include dir, or `None` after printing that the test did not run; panics instead when
/// [`required`]. A test calls it first: `let Some(dir) = require_or_skip("...") else { return };`.
pub fn require_or_skip(test: &str) -> Option<PathBuf> {
    match acl_include_dir() {
        Ok(dir) => Some(dir),
        Err(e) if required() => panic!("{test}: the real ACL headers are required ({ENV_REQUIRE}): {e}"),
        Err(e) => {
            eprintln!("{test}: DID NOT RUN against the real ACL headers: {e}");
            None
        }
    }
}

fn find_wheel(base: &Path) -> Result<PathBuf, HeadersError> {
    if let Some(p) = std::env::var_os(ENV_WHEEL).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(HeadersError::Absent(p))
        };
    }
    let mut wheels: Vec<PathBuf> = fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("torch_npu-") && n.ends_with(".whl"))
        })
        .collect();
    wheels.sort();
    wheels.pop().ok_or_else(|| HeadersError::Absent(base.to_owned()))
}

/// Extracts the wheel's `torch_npu/include/acl/` into a fresh directory beside `include`, then
/// renames it into place (a concurrent extraction that won leaves its own complete tree).
fn extract(wheel: &Path, base: &Path, include: &Path) -> Result<(), HeadersError> {
    let bad = |reason: String| HeadersError::Unreadable {
        path: wheel.to_owned(),
        reason,
    };
    let file = fs::File::open(wheel).map_err(|e| bad(e.to_string()))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(e.to_string()))?;
    let staging = tempfile::Builder::new()
        .prefix("include-")
        .tempdir_in(base)
        .map_err(|e| bad(format!("cannot make a directory in {}: {e}", base.display())))?;
    const PREFIX: &str = "torch_npu/include/acl/";
    let mut found = 0usize;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| bad(e.to_string()))?;
        let Some(name) = entry.enclosed_name() else {
            continue;
        };
        let Some(rel) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        if entry.is_dir() || rel.is_empty() {
            continue;
        }
        let out = staging.path().join("acl").join(rel);
        if let Some(parent) = out.parent() {
            fs::create_dir_all(parent).map_err(|e| bad(e.to_string()))?;
        }
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(|e| bad(e.to_string()))?;
        fs::write(&out, bytes).map_err(|e| bad(e.to_string()))?;
        found += 1;
    }
    if found == 0 {
        return Err(bad(format!("it holds nothing under {PREFIX}")));
    }
    let staged = staging.keep();
    if fs::rename(&staged, include).is_err() {
        // Another process put its tree there first; ours is not needed.
        let _ = fs::remove_dir_all(&staged);
        if !include.join("acl").join("acl_rt.h").is_file() {
            return Err(bad(format!("cannot move the headers into {}", include.display())));
        }
    }
    Ok(())
}
