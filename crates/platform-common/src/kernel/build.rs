//! Compiling the kernel sources under `kernels/` into blobs: `<out>/<arch>/<name>.so`.
//!
//! One builder serves the crate's `build.rs` (which includes this file with `#[path]`, so every
//! `cargo build` / `cargo test` has blobs without a manual step) and `cargo xtask build-kernels`
//! (through the library as `kernel::build`). It therefore uses `std` only, and its error type
//! implements `Display`/`Error` by hand rather than through `thiserror`, which a build script here
//! does not depend on.
//!
//! It owns the compiler command line and atomic installation of blobs (compile to a temporary
//! name, then rename, so a process that has a blob loaded never sees it rewritten in place). It
//! never loads blobs and never reads the environment by itself: [`Compiler::from_env`] is the one
//! place that turns `CXX` into a default.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The arch names a blob can be built for (the spelling of `Arch::name`).
pub const ARCH_NAMES: [&str; 2] = ["a5", "a2a3"];

/// The file extension of a blob.
pub const BLOB_EXTENSION: &str = "so";

/// The extension of a kernel source.
pub const SOURCE_EXTENSION: &str = "cpp";

/// Flags every kernel is compiled with (before `-I`, `-D` and the files).
pub const CXX_FLAGS: [&str; 6] = ["-O2", "-fPIC", "-shared", "-std=c++17", "-Wall", "-Wextra"];

/// The `kernels/` directory of this checkout (sources, and `include/` for the ABI header).
pub fn default_source_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().nth(2).unwrap_or(manifest).join("kernels")
}

/// The C++ compiler to run: a program and any leading arguments (as in `CXX="ccache g++"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiler {
    /// The program.
    pub program: OsString,
    /// Arguments placed before the kernel flags.
    pub args: Vec<OsString>,
}

impl Compiler {
    /// A compiler from a command line, split on whitespace; `None` when it is blank.
    pub fn from_command_line(line: &str) -> Option<Self> {
        let mut words = line.split_whitespace().map(OsString::from);
        let program = words.next()?;
        Some(Self {
            program,
            args: words.collect(),
        })
    }

    /// `CXX` when set and not blank; else the first of `c++`, `g++`, `clang++` that runs; else
    /// `c++` (whose spawn failure then names it).
    pub fn from_env() -> Self {
        if let Some(c) = std::env::var("CXX")
            .ok()
            .and_then(|v| Self::from_command_line(&v))
        {
            return c;
        }
        let runs = |p: &str| {
            Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        let program = ["c++", "g++", "clang++"]
            .into_iter()
            .find(|p| runs(p))
            .unwrap_or("c++");
        Self {
            program: program.into(),
            args: Vec::new(),
        }
    }

    fn display(&self) -> String {
        let mut s = self.program.to_string_lossy().into_owned();
        for a in &self.args {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }
}

/// What to build and where.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The directory holding `*.cpp` kernels and `include/`.
    pub source_dir: PathBuf,
    /// Blobs go to `<out_dir>/<arch>/<name>.so`.
    pub out_dir: PathBuf,
    /// The compiler.
    pub compiler: Compiler,
    /// How many compilers run at once (at least 1).
    pub jobs: usize,
}

impl BuildOptions {
    /// Options for `source_dir` -> `out_dir` with the compiler from the environment and one job
    /// per available core.
    pub fn new(source_dir: impl Into<PathBuf>, out_dir: impl Into<PathBuf>) -> Self {
        Self {
            source_dir: source_dir.into(),
            out_dir: out_dir.into(),
            compiler: Compiler::from_env(),
            jobs: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

/// One blob that was built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltBlob {
    /// The arch it was built for.
    pub arch: String,
    /// The kernel name (the source's file stem).
    pub name: String,
    /// Where the blob is.
    pub path: PathBuf,
    /// What the compiler printed on success (warnings), possibly empty.
    pub warnings: String,
}

/// Why a build failed.
#[derive(Debug)]
pub enum BuildError {
    /// An arch that is not one of [`ARCH_NAMES`].
    UnknownArch(String),
    /// The source directory could not be listed.
    ReadSources {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The source directory holds no `*.cpp`.
    NoSources {
        /// The directory.
        dir: PathBuf,
    },
    /// A source whose file stem is not a valid kernel name (`[a-z0-9_]+`).
    BadSourceName {
        /// The source.
        path: PathBuf,
    },
    /// An output directory could not be created.
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The compiler could not be started.
    Spawn {
        /// The compiler command.
        compiler: String,
        /// The I/O error.
        source: io::Error,
    },
    /// The compiler rejected a source.
    Compile {
        /// The source.
        source_file: PathBuf,
        /// The arch it was compiled for.
        arch: String,
        /// The compiler's exit status.
        status: String,
        /// The compiler's diagnostics.
        stderr: String,
    },
    /// A compiled blob could not be moved into place.
    Install {
        /// The temporary file.
        from: PathBuf,
        /// The blob path.
        to: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownArch(a) => write!(f, "unknown arch {a:?} (expected a5 or a2a3)"),
            Self::ReadSources { dir, source } => {
                write!(f, "cannot list kernel sources in {}: {source}", dir.display())
            }
            Self::NoSources { dir } => write!(f, "no kernel sources (*.cpp) in {}", dir.display()),
            Self::BadSourceName { path } => {
                write!(f, "kernel source {} is not named [a-z0-9_]+.cpp", path.display())
            }
            Self::CreateDir { dir, source } => {
                write!(f, "cannot create {}: {source}", dir.display())
            }
            Self::Spawn { compiler, source } => write!(
                f,
                "cannot run the C++ compiler `{compiler}`: {source} (install one or set CXX)"
            ),
            Self::Compile {
                source_file,
                arch,
                status,
                stderr,
            } => write!(
                f,
                "compiling {} for {arch} failed ({status}):\n{}",
                source_file.display(),
                stderr.trim_end()
            ),
            Self::Install { from, to, source } => {
                write!(f, "cannot move {} to {}: {source}", from.display(), to.display())
            }
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::ReadSources { source, .. }
            | Self::CreateDir { source, .. }
            | Self::Spawn { source, .. }
            | Self::Install { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The kernel sources in `dir` (`*.cpp`, not recursive), sorted by name.
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

/// Compiles every kernel source for every arch in `archs` into `<out_dir>/<arch>/<name>.so`,
/// running up to `opts.jobs` compilers at once. Returns the blobs in (arch, name) order, or the
/// first failure in that order (every compile is finished before returning).
pub fn build_blobs(opts: &BuildOptions, archs: &[&str]) -> Result<Vec<BuiltBlob>, BuildError> {
    if let Some(bad) = archs.iter().find(|a| !ARCH_NAMES.contains(a)) {
        return Err(BuildError::UnknownArch((*bad).to_owned()));
    }
    let sources = kernel_sources(&opts.source_dir)?;
    if sources.is_empty() {
        return Err(BuildError::NoSources {
            dir: opts.source_dir.clone(),
        });
    }
    let mut jobs = Vec::new();
    for arch in archs {
        let dir = opts.out_dir.join(arch);
        std::fs::create_dir_all(&dir).map_err(|source| BuildError::CreateDir {
            dir: dir.clone(),
            source,
        })?;
        for src in &sources {
            let name = kernel_name(src).ok_or_else(|| BuildError::BadSourceName { path: src.clone() })?;
            jobs.push(Job {
                arch,
                name,
                source: src,
                blob: dir.join(format!("{name}.{BLOB_EXTENSION}")),
            });
        }
    }
    let workers = opts.jobs.clamp(1, jobs.len());
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, Result<BuiltBlob, BuildError>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        mine.push((i, compile(opts, job)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

struct Job<'a> {
    arch: &'a str,
    name: &'a str,
    source: &'a Path,
    blob: PathBuf,
}

/// A source's kernel name: its file stem, when it is `[a-z0-9_]+`.
fn kernel_name(source: &Path) -> Option<&str> {
    let stem = source.file_stem()?.to_str()?;
    let valid = !stem.is_empty()
        && stem
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    valid.then_some(stem)
}

fn compile(opts: &BuildOptions, job: &Job<'_>) -> Result<BuiltBlob, BuildError> {
    let tmp = job.blob.with_file_name(format!(
        ".{}.{BLOB_EXTENSION}.tmp{}",
        job.name,
        std::process::id()
    ));
    let output = Command::new(&opts.compiler.program)
        .args(&opts.compiler.args)
        .args(CXX_FLAGS)
        .arg("-I")
        .arg(opts.source_dir.join("include"))
        .arg(format!("-DCG_ARCH=\"{}\"", job.arch))
        .arg("-o")
        .arg(&tmp)
        .arg(job.source)
        .output()
        .map_err(|source| BuildError::Spawn {
            compiler: opts.compiler.display(),
            source,
        })?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        // Best effort: a failed compile may leave a partial output behind.
        let _ = std::fs::remove_file(&tmp);
        return Err(BuildError::Compile {
            source_file: job.source.to_owned(),
            arch: job.arch.to_owned(),
            status: output.status.to_string(),
            stderr,
        });
    }
    std::fs::rename(&tmp, &job.blob).map_err(|source| BuildError::Install {
        from: tmp.clone(),
        to: job.blob.clone(),
        source,
    })?;
    Ok(BuiltBlob {
        arch: job.arch.to_owned(),
        name: job.name.to_owned(),
        path: job.blob.clone(),
        warnings: stderr,
    })
}
