//! Where kernel sources are and what the files built are called.
//!
//! This file owns the source layout (`kernels/*.cpp`, the ABI header under `kernels/include`), the
//! rule for a kernel's name (its file stem, `[a-z0-9_]+`) and the blob file name. It never
//! compiles anything.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::error::BuildError;

/// The file extension of a blob (`<name>.so`). A loader finds blobs by this name.
pub const BLOB_EXTENSION: &str = "so";

/// The extension of a kernel source.
pub const SOURCE_EXTENSION: &str = "cpp";

/// The `kernels/` directory of this checkout: the built-in kernels' sources.
pub fn builtin_kernels_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().nth(2).unwrap_or(manifest).join("kernels")
}

/// `kernels/include`: the kernel ABI header (`cardguard/kernel.h`) and its helpers, which every
/// kernel, built-in or a suite's own, includes.
pub fn abi_include_dir() -> PathBuf {
    builtin_kernels_dir().join("include")
}

/// The kernel sources in `dir` (`*.cpp`, not recursive, no hidden files), sorted by name.
pub fn kernel_sources(dir: &Path) -> Result<Vec<PathBuf>, BuildError> {
    let read_err = |source| BuildError::ReadSources {
        dir: dir.to_owned(),
        source,
    };
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_err)? {
        let path = entry.map_err(read_err)?.path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."));
        if !hidden && path.is_file() && path.extension() == Some(OsStr::new(SOURCE_EXTENSION)) {
            sources.push(path);
        }
    }
    sources.sort();
    Ok(sources)
}

/// A source's kernel name: its file stem, when it is `[a-z0-9_]+`.
pub(crate) fn kernel_name(source: &Path) -> Option<&str> {
    let stem = source.file_stem()?.to_str()?;
    valid_name(stem).then_some(stem)
}

/// Whether `name` may name a kernel or an arch: `[a-z0-9_]+` (it becomes a file or directory name
/// and, for an arch, a C string literal).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The blob of kernel `name` in an arch's directory `dir`.
pub(crate) fn blob_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.{BLOB_EXTENSION}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_lowercase_stems() {
        assert_eq!(kernel_name(Path::new("/k/vector_add.cpp")), Some("vector_add"));
        assert_eq!(kernel_name(Path::new("/k/Vector-Add.cpp")), None);
        assert_eq!(kernel_name(Path::new("/k/.cpp")), None);
        assert!(valid_name("a2a3") && !valid_name("a\"5") && !valid_name(""));
    }

    #[test]
    fn the_builtin_kernels_and_their_header_are_in_this_checkout() {
        assert!(abi_include_dir().join("cardguard").join("kernel.h").is_file());
        let sources = kernel_sources(&builtin_kernels_dir()).unwrap();
        assert!(sources.iter().any(|s| s.ends_with("noop.cpp")), "{sources:?}");
    }
}
