//! Why a kernel build failed: one variant per step, each naming what it was working on.
//!
//! Messages are lowercase and read after "failed to build kernels: ". A compile failure carries
//! the compiler's own diagnostics for that source; which variant a failure is follows from the
//! step and from the commands `cc` reported, never from an error's text.

use std::io;
use std::path::PathBuf;

/// A kernel build that did not produce every blob.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// An arch name that cannot name a blob directory and a `CG_ARCH` value (`[a-z0-9_]+`).
    #[error("arch {0:?} is not a valid arch name ([a-z0-9_]+)")]
    BadArch(String),
    /// The build was given no arch.
    #[error("no arch to build for")]
    NoArch,
    /// The source directory could not be listed.
    #[error("cannot list kernel sources in {}: {source}", dir.display())]
    ReadSources {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The build was given no source (or the directory holds no `*.cpp`).
    #[error("no kernel sources (*.cpp) in {}", dir.display())]
    NoSources {
        /// The directory (or `.` when sources were given one by one and none was).
        dir: PathBuf,
    },
    /// A source whose file stem is not a valid kernel name (`[a-z0-9_]+`), or that is missing.
    #[error("kernel source {} is not an existing file named [a-z0-9_]+.cpp", path.display())]
    BadSource {
        /// The source.
        path: PathBuf,
    },
    /// Two sources with one kernel name: their blobs would overwrite each other.
    #[error("kernel sources {} and {} both build kernel {name:?}", first.display(), second.display())]
    DuplicateKernel {
        /// The kernel name.
        name: String,
        /// The first source.
        first: PathBuf,
        /// The second.
        second: PathBuf,
    },
    /// An output or object directory could not be created.
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// `cc` could not find or start a C++ compiler for the target (nothing was compiled).
    #[error("no usable C++ compiler (install one or set CXX): {reason}")]
    Compiler {
        /// `cc`'s account of it.
        reason: String,
    },
    /// The compiler rejected a source.
    #[error("compiling {} for {arch} failed:\n{}", source_file.display(), diagnostics.trim_end())]
    Compile {
        /// The source.
        source_file: PathBuf,
        /// The arch it was compiled for.
        arch: String,
        /// The compiler's diagnostics for that source.
        diagnostics: String,
    },
    /// Linking a compiled object into its shared object failed.
    #[error("linking {} failed ({status}):\n{}", blob.display(), diagnostics.trim_end())]
    Link {
        /// The blob being linked.
        blob: PathBuf,
        /// The linker's exit status, or why it could not start.
        status: String,
        /// The linker's diagnostics.
        diagnostics: String,
    },
    /// A linked blob could not be moved into place.
    #[error("cannot move {} to {}: {source}", from.display(), to.display())]
    Install {
        /// The temporary file.
        from: PathBuf,
        /// The blob path.
        to: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}
