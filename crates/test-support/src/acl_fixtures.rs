//! Test fixtures for the `acl` driver: shared objects that are not CANN, so tests can prove what
//! the driver does with a wrong, partial or foreign library. Used by `platform-common`'s and the
//! runner's tests; nothing in the driver itself calls them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fixture that could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// Writing the C source failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The source file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// No C compiler built it.
    #[error("no C compiler (cc or c++) could build {}", path.display())]
    NoCompiler {
        /// The library it was to build.
        path: PathBuf,
    },
}

/// Compiles the C `source` into the shared object `dir/name` with `cc` (or `c++` as C).
pub fn compile_c_library(dir: &Path, name: &str, source: &str) -> Result<PathBuf, FixtureError> {
    let src = dir.join(format!("{name}.c"));
    let lib = dir.join(name);
    std::fs::write(&src, source).map_err(|e| FixtureError::Write {
        path: src.clone(),
        source: e,
    })?;
    let built = ["cc", "c++"].iter().any(|cc| {
        Command::new(cc)
            .args(["-x", "c", "-shared", "-fPIC", "-o"])
            .arg(&lib)
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success())
    });
    if built {
        Ok(lib)
    } else {
        Err(FixtureError::NoCompiler { path: lib })
    }
}

/// The C library this process has mapped: a real shared object that is not CANN.
pub fn loaded_libc() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find_map(|p| {
            let path = Path::new(p);
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libc.so"))
                .then(|| path.to_owned())
        })
}
