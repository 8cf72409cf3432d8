//! Builds the kernel blobs of both arches from `kernels/` into `$OUT_DIR/kernels/<arch>/<name>.so`
//! with the `kernel-build` helper, and tells the crate where they are
//! (`CARDGUARD_BUILT_KERNEL_DIR`) and what a blob file is called (`CARDGUARD_BLOB_EXTENSION`),
//! so tests and the runner find blobs on a fresh clone with no manual step. A compile failure
//! fails the build with the compiler's message.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kernel_build::{builtin_kernels_dir, KernelBuild, BLOB_EXTENSION};

/// The arches blobs are built for: the names of `platform_common::Arch::ALL` (a build script
/// cannot use the crate it builds; the golden tests load a blob of every `Arch`).
const ARCHES: [&str; 2] = ["a5", "a2a3"];

fn main() -> ExitCode {
    let source_dir = builtin_kernels_dir();
    watch(&source_dir);
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        eprintln!("error: OUT_DIR is not set (build.rs runs under cargo)");
        return ExitCode::FAILURE;
    };
    let kernel_dir = out_dir.join("kernels");
    let build = KernelBuild::new(&kernel_dir)
        .in_build_script(true)
        .archs(ARCHES)
        .sources_in(&source_dir);
    match build.and_then(|b| b.build()) {
        Ok(blobs) => {
            for blob in blobs.iter().filter(|b| !b.warnings.trim().is_empty()) {
                for line in blob.warnings.lines() {
                    println!("cargo:warning={} ({}): {line}", blob.name, blob.arch);
                }
            }
            println!(
                "cargo:rustc-env=CARDGUARD_BUILT_KERNEL_DIR={}",
                kernel_dir.display()
            );
            println!("cargo:rustc-env=CARDGUARD_BLOB_EXTENSION={BLOB_EXTENSION}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: failed to build the kernel blobs: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Re-run when anything under `dir` changes: the directory itself and every file below it.
fn watch(dir: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            watch(&path);
        } else {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
