//! [`KernelBuild`]: build these C++ sources for these arches into this directory.
//!
//! For each arch, one `cc::Build` compiles every source to an object (in parallel, under cargo's
//! jobserver when there is one) with the kernel flags (`-std=c++17`, `-O2`, PIC, warnings), the
//! include directories (the ABI header's first) and `-DCG_ARCH="<arch>"`; then each object is
//! linked with the same compiler into `<out>/<arch>/<name>.so` under a temporary name and renamed
//! into place. Objects live in a temporary directory that is removed afterwards.
//!
//! This file owns the blob layout, the flags and the install. It never loads a blob, and reads
//! the environment only through `cc` (`CXX`, `CXXFLAGS`, `TARGET`, the jobserver): outside a
//! build script the target is the one this crate was built for.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use crate::error::BuildError;
use crate::messages::Messages;
use crate::sources::{abi_include_dir, blob_file, kernel_name, kernel_sources, valid_name};

/// The C++ standard every kernel is compiled with.
pub const CXX_STD: &str = "c++17";

/// A build of kernel blobs. See the module docs for what [`KernelBuild::build`] runs.
#[derive(Debug, Clone)]
pub struct KernelBuild {
    out_dir: PathBuf,
    sources: Vec<PathBuf>,
    archs: Vec<String>,
    include_dirs: Vec<PathBuf>,
    compiler: Option<PathBuf>,
    build_script: bool,
}

/// One blob that was built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltBlob {
    /// The arch it was built for.
    pub arch: String,
    /// The kernel name (the source's file stem).
    pub name: String,
    /// Where the blob is: `<out>/<arch>/<name>.so`.
    pub path: PathBuf,
    /// What the compiler printed for its source (warnings), possibly empty.
    pub warnings: String,
}

impl KernelBuild {
    /// A build into `out_dir` (blobs at `<out_dir>/<arch>/<name>.so`) with the kernel ABI header's
    /// directory ([`abi_include_dir`]) on the include path, no sources and no arch yet.
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        Self {
            out_dir: out_dir.into(),
            sources: Vec::new(),
            archs: Vec::new(),
            include_dirs: vec![abi_include_dir()],
            compiler: None,
            build_script: false,
        }
    }

    /// Adds one source (`<name>.cpp`: the blob is named after its file stem).
    pub fn source(mut self, path: impl Into<PathBuf>) -> Self {
        self.sources.push(path.into());
        self
    }

    /// Adds every kernel source in `dir` ([`kernel_sources`]). An empty directory is an error.
    pub fn sources_in(mut self, dir: &Path) -> Result<Self, BuildError> {
        let found = kernel_sources(dir)?;
        if found.is_empty() {
            return Err(BuildError::NoSources { dir: dir.to_owned() });
        }
        self.sources.extend(found);
        Ok(self)
    }

    /// Adds the arches to build for (each gets its own directory and `CG_ARCH`).
    pub fn archs<S: AsRef<str>>(mut self, archs: impl IntoIterator<Item = S>) -> Self {
        self.archs
            .extend(archs.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Puts another directory on the include path, after the ABI header's.
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Uses this compiler instead of the one `cc` finds (`CXX`, else the target's default).
    pub fn compiler(mut self, path: impl Into<PathBuf>) -> Self {
        self.compiler = Some(path.into());
        self
    }

    /// Runs inside a cargo build script: `cc` then takes the target from cargo and prints the
    /// `rerun-if-env-changed` lines of the variables it read. Off by default.
    pub fn in_build_script(mut self, yes: bool) -> Self {
        self.build_script = yes;
        self
    }

    /// Builds every source for every arch. Returns the blobs in (arch, source) order, or the
    /// first failure: nothing is installed for an arch whose compile failed.
    pub fn build(&self) -> Result<Vec<BuiltBlob>, BuildError> {
        let kernels = self.check()?;
        let mut built = Vec::new();
        for arch in &self.archs {
            let dir = self.out_dir.join(arch);
            create_dir(&dir)?;
            let objects = tempfile::Builder::new()
                .prefix(".objects-")
                .tempdir_in(&dir)
                .map_err(|source| BuildError::CreateDir {
                    dir: dir.clone(),
                    source,
                })?;
            let messages = Arc::new(Messages::new(&self.sources));
            let cc = self.cc(arch, objects.path(), &messages);
            let compiled = cc
                .try_compile_intermediates()
                .map_err(|e| match messages.first_failed() {
                    Some(source_file) => BuildError::Compile {
                        diagnostics: messages.lines_of(&source_file),
                        source_file,
                        arch: arch.clone(),
                    },
                    None => BuildError::Compiler {
                        reason: format!("{e}{}", prefixed(&messages.other_lines())),
                    },
                })?;
            let tool = cc.try_get_compiler().map_err(|e| BuildError::Compiler {
                reason: e.to_string(),
            })?;
            for ((source, name), object) in self.sources.iter().zip(&kernels).zip(&compiled) {
                let path = blob_file(&dir, name);
                link(tool.to_command(), object, &path)?;
                built.push(BuiltBlob {
                    arch: arch.clone(),
                    name: (*name).to_owned(),
                    path,
                    warnings: messages.lines_of(source),
                });
            }
        }
        Ok(built)
    }

    /// Every arch and source valid, and each kernel name once: the kernel names, in source order.
    fn check(&self) -> Result<Vec<&str>, BuildError> {
        if self.archs.is_empty() {
            return Err(BuildError::NoArch);
        }
        if let Some(bad) = self.archs.iter().find(|a| !valid_name(a)) {
            return Err(BuildError::BadArch(bad.clone()));
        }
        if self.sources.is_empty() {
            return Err(BuildError::NoSources {
                dir: PathBuf::from("."),
            });
        }
        let mut names: Vec<&str> = Vec::new();
        for (i, src) in self.sources.iter().enumerate() {
            let name = kernel_name(src)
                .filter(|_| src.is_file())
                .ok_or_else(|| BuildError::BadSource { path: src.clone() })?;
            if let Some(j) = names.iter().position(|n| *n == name) {
                return Err(BuildError::DuplicateKernel {
                    name: name.to_owned(),
                    first: self.sources[j].clone(),
                    second: self.sources[i].clone(),
                });
            }
            names.push(name);
        }
        Ok(names)
    }

    fn cc(&self, arch: &str, objects: &Path, messages: &Arc<Messages>) -> cc::Build {
        let mut cc = cc::Build::new();
        cc.cpp(true)
            .std(CXX_STD)
            .opt_level(2)
            .debug(false)
            .pic(true)
            .warnings(true)
            .extra_warnings(true)
            .cpp_link_stdlib(None)
            .define("CG_ARCH", format!("\"{arch}\"").as_str())
            .includes(&self.include_dirs)
            .files(&self.sources)
            .out_dir(objects)
            .cargo_metadata(false)
            .cargo_warnings(false)
            .emit_rerun_if_env_changed(self.build_script)
            .message_logger(Some(Arc::clone(messages) as Arc<dyn cc::BuildMessageLogger>));
        if !self.build_script {
            let target = env!("KERNEL_BUILD_TARGET");
            cc.target(target).host(target);
        }
        if let Some(c) = &self.compiler {
            cc.compiler(c);
        }
        cc
    }
}

/// ` (a | b)` of non-empty diagnostics, for an error line.
fn prefixed(lines: &str) -> String {
    let joined: Vec<&str> = lines.lines().filter(|l| !l.trim().is_empty()).collect();
    if joined.is_empty() {
        String::new()
    } else {
        format!(" ({})", joined.join(" | "))
    }
}

fn create_dir(dir: &Path) -> Result<(), BuildError> {
    std::fs::create_dir_all(dir).map_err(|source| BuildError::CreateDir {
        dir: dir.to_owned(),
        source,
    })
}

/// Links `object` into the shared object `blob` with the compiler's command (its flags
/// included): to a temporary name beside it, then renamed into place.
fn link(mut cmd: Command, object: &Path, blob: &Path) -> Result<(), BuildError> {
    let tmp = blob.with_file_name(format!(
        ".{}.tmp{}",
        blob.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let out = cmd
        .arg("-shared")
        .arg("-o")
        .arg(&tmp)
        .arg(object)
        .output()
        .map_err(|e| BuildError::Link {
            blob: blob.to_owned(),
            status: format!("cannot start: {e}"),
            diagnostics: String::new(),
        })?;
    if !out.status.success() {
        // Best effort: a failed link may leave a partial output behind.
        let _ = std::fs::remove_file(&tmp);
        return Err(BuildError::Link {
            blob: blob.to_owned(),
            status: out.status.to_string(),
            diagnostics: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    std::fs::rename(&tmp, blob).map_err(|source| BuildError::Install {
        from: tmp.clone(),
        to: blob.to_owned(),
        source,
    })
}
