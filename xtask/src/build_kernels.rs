//! `cargo xtask build-kernels --arch a5|a2a3 [--out DIR]`: compiles every `kernels/*.cpp` for one
//! arch into `DIR/<arch>/<name>.so` (default `target/kernels`) with the same helper
//! `platform-common`'s `build.rs` uses (the `kernel-build` crate), and prints each blob built. Point `ONBOARD_KERNEL_DIR`
//! at `DIR` to run with these blobs instead of the ones `cargo build` made.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kernel_build::{builtin_kernels_dir, KernelBuild};
use platform_common::Arch;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The arch to build for: a5 or a2a3.
    #[arg(long)]
    arch: String,
    /// Where the blobs go (as DIR/<arch>/<name>.so); default: target/kernels in the workspace.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Runs the command: 0 when every blob built, 1 on a build failure, 2 on bad usage.
pub fn run(args: Args) -> ExitCode {
    let arch: Arch = match args.arch.parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: --arch: {e}");
            return ExitCode::from(2);
        }
    };
    let out = args.out.unwrap_or_else(default_out_dir);
    let build = KernelBuild::new(&out)
        .archs([arch.name()])
        .sources_in(&builtin_kernels_dir());
    match build.and_then(|b| b.build()) {
        Ok(blobs) => {
            for blob in &blobs {
                for line in blob.warnings.lines() {
                    eprintln!("warning: {}: {line}", blob.name);
                }
                println!("built {arch}/{} -> {}", blob.name, blob.path.display());
            }
            println!(
                "{} blobs for {arch} in {}",
                blobs.len(),
                out.join(arch.name()).display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: build-kernels: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `target/kernels` under the workspace root.
fn default_out_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .unwrap_or(manifest)
        .join("target")
        .join("kernels")
}
