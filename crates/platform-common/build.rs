//! Builds the kernel blobs of both arches from `kernels/` into `$OUT_DIR/kernels/<arch>/<name>.so`
//! and tells the crate where they are (`CARDGUARD_BUILT_KERNEL_DIR`), so tests and the runner find
//! blobs on a fresh clone with no manual step. A compile failure fails the build with the
//! compiler's message.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[path = "src/kernel/build.rs"]
#[allow(dead_code)]
mod build_blobs;

fn main() -> ExitCode {
    let source_dir = build_blobs::default_source_dir();
    watch(&source_dir);
    println!("cargo:rerun-if-env-changed=CXX");

    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        eprintln!("error: OUT_DIR is not set (build.rs runs under cargo)");
        return ExitCode::FAILURE;
    };
    let kernel_dir = out_dir.join("kernels");
    let mut opts = build_blobs::BuildOptions::new(&source_dir, &kernel_dir);
    if let Some(jobs) = std::env::var("NUM_JOBS").ok().and_then(|j| j.parse().ok()) {
        opts.jobs = jobs;
    }
    match build_blobs::build_blobs(&opts, &build_blobs::ARCH_NAMES) {
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
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: building kernel blobs: {e}");
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
