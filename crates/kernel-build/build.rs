//! Tells the library the target it is built for (`KERNEL_BUILD_TARGET`), so a build outside a
//! build script (`cargo xtask build-kernels`) compiles blobs for the machine it runs on; inside a
//! build script cargo's own `TARGET` wins (see `KernelBuild::build`).

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=KERNEL_BUILD_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
