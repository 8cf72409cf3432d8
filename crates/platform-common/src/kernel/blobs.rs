//! Finding and loading the blobs of one arch by kernel name.
//!
//! Blobs live at `<dir>/<name>.so` where `<dir>` is an arch's blob directory:
//! `$ONBOARD_KERNEL_DIR/<arch>` (e.g. `cargo xtask build-kernels --out DIR`); else
//! `kernels/<arch>` beside the running executable when that directory exists (a suite archive
//! unpacked on a card host, where the build's paths do not exist); else the one this crate's
//! `build.rs` filled (`$OUT_DIR/kernels/<arch>`). Every load checks that the blob's metadata names
//! the kernel and the arch asked for. This module never builds blobs (the `kernel-build` crate
//! does; `build.rs` passes its file extension in as `CARDGUARD_BLOB_EXTENSION`).

use std::path::{Path, PathBuf};

use crate::arch::Arch;

use super::loader::{KernelBlob, KernelError};

/// The environment variable whose value replaces the built blob root (blobs in `<it>/<arch>/`).
pub const KERNEL_DIR_ENV: &str = "ONBOARD_KERNEL_DIR";

/// The root of the blobs this crate's `build.rs` built (`<root>/<arch>/<name>.so`; ignores the
/// environment).
pub fn built_blob_root() -> PathBuf {
    PathBuf::from(env!("CARDGUARD_BUILT_KERNEL_DIR"))
}

/// The blobs this crate's `build.rs` built for `arch` (ignores the environment).
pub fn built_blob_dir(arch: Arch) -> PathBuf {
    built_blob_root().join(arch.name())
}

/// The directory beside an installed executable that holds its blobs (`<it>/<arch>/`).
pub const INSTALLED_KERNEL_DIR: &str = "kernels";

/// `kernels/` beside the running executable (an unpacked suite archive's blobs, as
/// `<it>/<arch>/<name>.so`), when that is a directory.
pub fn installed_blob_root() -> Option<PathBuf> {
    let dir = std::env::current_exe().ok()?.parent()?.join(INSTALLED_KERNEL_DIR);
    dir.is_dir().then_some(dir)
}

/// `kernels/<arch>` beside the running executable, when that is a directory.
pub fn installed_blob_dir(arch: Arch) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.join(INSTALLED_KERNEL_DIR).join(arch.name());
    dir.is_dir().then_some(dir)
}

/// Where `arch`'s blobs are: `$ONBOARD_KERNEL_DIR/<arch>` when that is set and not empty, else
/// [`installed_blob_dir`] when there is one, else [`built_blob_dir`]. This is the one place the
/// blob directory is chosen.
pub fn blob_dir(arch: Arch) -> PathBuf {
    match std::env::var_os(KERNEL_DIR_ENV) {
        Some(root) if !root.is_empty() => PathBuf::from(root).join(arch.name()),
        _ => installed_blob_dir(arch).unwrap_or_else(|| built_blob_dir(arch)),
    }
}

/// The path of kernel `name`'s blob in `dir`.
pub fn blob_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.{}", env!("CARDGUARD_BLOB_EXTENSION")))
}

/// Loads kernel `name` from the blob directory `dir` of `arch`, checking that the blob says it is
/// that kernel, built for that arch.
///
/// Errors: [`KernelError::NotFound`] when there is no such file; [`KernelError::Open`] when it is
/// not a loadable shared object; [`KernelError::Symbol`] / [`KernelError::Meta`] when it is not a
/// blob of this ABI or names another kernel; [`KernelError::WrongArch`] when built for another arch.
pub fn load_named(dir: &Path, arch: Arch, name: &str) -> Result<KernelBlob, KernelError> {
    let path = blob_path(dir, name);
    if !path.is_file() {
        return Err(KernelError::NotFound {
            name: name.to_owned(),
            arch,
            dir: dir.to_owned(),
        });
    }
    let blob = KernelBlob::load(&path)?;
    let meta = blob.meta();
    if meta.name != name {
        return Err(KernelError::Meta {
            path,
            reason: format!("names kernel {:?}, expected {name:?}", meta.name),
        });
    }
    if meta.arch != arch {
        return Err(KernelError::WrongArch {
            path,
            expected: arch,
            found: meta.arch,
        });
    }
    tracing::debug!(kernel = name, %arch, path = %blob.path().display(), "loaded kernel blob");
    Ok(blob)
}

/// Loads kernel `name` for `arch` from [`blob_dir`].
pub fn load_builtin(arch: Arch, name: &str) -> Result<KernelBlob, KernelError> {
    load_named(&blob_dir(arch), arch, name)
}
