//! The C++ guide's lines (docs/guide/cpp-host-api.md) compile against the crate's header: the
//! block is taken from the guide, its statements put in a function, and checked with the C++ compiler
//! (`CXX`, else `c++`) against `include/` and the bridge header the build generated.

use std::path::Path;
use std::process::Command;

#[test]
fn the_cxx_guide_example_compiles_against_the_header() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(crate_dir.join("../../docs/guide/cpp-host-api.md")).unwrap();
    let section = guide
        .split("# The C++ host API")
        .nth(1)
        .expect("the guide is titled The C++ host API");
    let block = section
        .split("```cpp\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section has a ```cpp block");
    let (includes, body): (Vec<&str>, Vec<&str>) = block.lines().partition(|l| l.starts_with("#include"));
    assert_eq!(includes, ["#include \"cardguard/cardguard.h\""]);
    let source = format!(
        "{}\nvoid readme_example() {{\n{}\n}}\n",
        includes.join("\n"),
        body.join("\n")
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("readme.cc");
    std::fs::write(&file, &source).unwrap();
    let cxx = std::env::var_os("CXX").unwrap_or_else(|| "c++".into());
    let out = Command::new(cxx)
        .args([
            "-std=c++17",
            "-fsyntax-only",
            "-Wall",
            "-Wno-unused-variable",
            "-Werror",
        ])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg("-I")
        .arg(Path::new(env!("OUT_DIR")).join("cxxbridge/include"))
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{source}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
