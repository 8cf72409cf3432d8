//! Builds the C++ half of the bridge and the shim (`cxx/cardguard.cc`) into this crate's static
//! library, and the example host program (`cxx/probe_main.cc`, with its `main`) into a library of
//! its own that only the `cardguard-cxx-probe` binary links.

fn main() {
    let std = "c++17";
    cxx_build::bridge("src/bridge.rs")
        .file("cxx/cardguard.cc")
        .include("include")
        .std(std)
        .warnings_into_errors(true)
        .compile("cardguard_cxx");

    // The example's `main` must reach only the probe binary (every other target has Rust's
    // `main`), so its library is linked by a binary-scoped link argument, not `rustc-link-lib`.
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut probe = cc::Build::new();
    probe
        .cpp(true)
        .std(std)
        .file("cxx/probe_main.cc")
        .include("include")
        .include(out.join("cxxbridge/include"))
        .warnings_into_errors(true)
        .cargo_metadata(false)
        .compile("cardguard_cxx_probe");
    println!(
        "cargo:rustc-link-arg-bin=cardguard-cxx-probe={}",
        out.join("libcardguard_cxx_probe.a").display()
    );

    for f in [
        "src/bridge.rs",
        "cxx/cardguard.cc",
        "cxx/probe_main.cc",
        "include/cardguard/cardguard.h",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
}
