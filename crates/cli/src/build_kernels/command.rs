//! `cargo cardguard build-kernels --arch a5|a2a3 [--platform sim|onboard] [--source DIR]
//! [--include DIR]... [--out DIR] [--compiler PATH]`.
//!
//! `--platform sim` (the default) compiles every `*.cpp` of `--source` (default `kernels/`) into
//! host blobs `DIR/<arch>/<name>.so` (default `DIR` `kernels` in the workspace's target directory) with the same helper
//! `platform-common`'s `build.rs` uses (the `kernel-build` crate). `--platform onboard` compiles
//! them into AICore device binaries `DIR/<arch>/<name>.o` with the CANN compiler and writes
//! `DIR/<arch>/manifest.json` (each kernel's file, block dim and argument count, read from the
//! host blob of the same source, which it builds in a temporary directory): when no CANN
//! compiler is installed it says so and builds nothing. Point `ONBOARD_KERNEL_DIR` at `DIR` to
//! run with what was built. Exit status: 0 built, 1 a build failed or no CANN compiler, 2 bad
//! usage. This file owns the flags and the order of a build.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kernel_build::{builtin_kernels_dir, KernelBuild};
use platform_common::Arch;

use super::cann;
use crate::workspace::Workspace;

/// `--platform`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Platform {
    /// Host blobs for simulated cards.
    Sim,
    /// AICore device binaries for real cards (the CANN compiler).
    Onboard,
}

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The arch to build for: a5 or a2a3.
    #[arg(long)]
    arch: String,
    /// sim: host blobs (<name>.so); onboard: AICore device binaries (<name>.o) and a manifest.
    #[arg(long, value_enum, default_value = "sim")]
    platform: Platform,
    /// Where the kernel sources are (every *.cpp; default: the built-in kernels/).
    #[arg(long, value_name = "DIR")]
    source: Option<PathBuf>,
    /// Another include directory (after the kernel ABI header's; repeatable).
    #[arg(long, value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Where the binaries go (as DIR/<arch>/...); default: target/kernels in the workspace.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// With --platform onboard: this compiler instead of the one found under the CANN install.
    #[arg(long, value_name = "PATH")]
    compiler: Option<PathBuf>,
}

/// Runs the command: 0 when every binary built, 1 on a build failure or without a CANN
/// compiler, 2 on bad usage.
pub fn run(ws: &Workspace, args: Args) -> ExitCode {
    let arch: Arch = match args.arch.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: --arch: {e}");
            return ExitCode::from(2);
        }
    };
    let out = args.out.clone().unwrap_or_else(|| ws.target_dir.join("kernels"));
    let source = args.source.clone().unwrap_or_else(builtin_kernels_dir);
    let result = match args.platform {
        Platform::Sim => host_blobs(arch, &source, &args.include, &out).map(|n| {
            println!("{n} blobs for {arch} in {}", out.join(arch.name()).display());
        }),
        Platform::Onboard => device_binaries(arch, &source, &args, &out),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: build-kernels: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Host blobs of every source of `source` for `arch` into `out/<arch>/`; how many.
fn host_blobs(arch: Arch, source: &Path, include: &[PathBuf], out: &Path) -> Result<usize, String> {
    let mut build = KernelBuild::new(out).archs([arch.name()]);
    for dir in include {
        build = build.include(dir);
    }
    let blobs = build
        .sources_in(source)
        .and_then(|b| b.build())
        .map_err(|e| e.to_string())?;
    for blob in &blobs {
        for line in blob.warnings.lines() {
            eprintln!("warning: {}: {line}", blob.name);
        }
        println!("built {arch}/{} -> {}", blob.name, blob.path.display());
    }
    Ok(blobs.len())
}

/// AICore device binaries of every source of `source` for `arch` into `out/<arch>/`, and their
/// manifest.
fn device_binaries(arch: Arch, source: &Path, args: &Args, out: &Path) -> Result<(), String> {
    let compiler = match &args.compiler {
        Some(c) => c.clone(),
        None => cann::find_compiler().map_err(|e| e.to_string())?,
    };
    let sources = kernel_build::kernel_sources(source).map_err(|e| e.to_string())?;
    if sources.is_empty() {
        return Err(format!("no kernel source (*.cpp) in {}", source.display()));
    }
    // The metadata of each kernel (its block dim and argument count) is the host blob's: build
    // them where nothing else looks.
    let hosts = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    host_blobs(arch, source, &args.include, hosts.path())?;
    let mut includes = vec![kernel_build::abi_include_dir()];
    includes.extend(args.include.iter().cloned());
    let built = cann::compile_all(
        &compiler,
        arch,
        &sources,
        &includes,
        &out.join(arch.name()),
        hosts.path(),
    )?;
    for k in &built {
        println!("built {arch}/{} -> {}", k.name, k.path.display());
    }
    println!(
        "{} AICore binaries for {arch} in {} (with {}; manifest.json lists them)",
        built.len(),
        out.join(arch.name()).display(),
        compiler.display()
    );
    Ok(())
}
