//! Builds this suite's own kernels (`kernels/*.cpp`) for both arches with kernel-build, into
//! `$OUT_DIR/kernels/<arch>/<name>.so`, and tells the crate where (`ONBOARD_SUITE_KERNELS`, read
//! by `main.rs` with `env!`). A compile error fails the build with the compiler's message.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kernel_build::KernelBuild;

fn main() -> ExitCode {
    println!("cargo:rerun-if-changed=kernels");
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        eprintln!("error: OUT_DIR is not set (build.rs runs under cargo)");
        return ExitCode::FAILURE;
    };
    let kernels = out_dir.join("kernels");
    let built = KernelBuild::new(&kernels)
        .in_build_script(true)
        .archs(["a5", "a2a3"])
        .include("kernels/include")
        .sources_in(Path::new("kernels"))
        .and_then(|b| b.build());
    match built {
        Ok(_) => {
            println!("cargo:rustc-env=ONBOARD_SUITE_KERNELS={}", kernels.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: building the suite's kernels: {e}");
            ExitCode::FAILURE
        }
    }
}
