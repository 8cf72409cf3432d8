//! The kernel builder (`kernel::build`, shared with build.rs and `cargo xtask build-kernels`) on
//! small source trees in temp dirs: blobs land in `<out>/<arch>/<name>.so` with the right arch,
//! and every kind of failure is a typed error carrying what went wrong.

use std::path::Path;

use platform_common::kernel::build::{build_blobs, default_source_dir, BuildError, BuildOptions, Compiler};
use platform_common::kernel::load_named;
use platform_common::Arch;

/// A kernels dir in `root` with the real ABI headers and the given sources.
fn source_tree(root: &Path, sources: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = root.join("kernels");
    let include = dir.join("include").join("cardguard");
    std::fs::create_dir_all(&include).unwrap();
    for header in ["kernel.h", "kernel_util.hpp"] {
        let from = default_source_dir()
            .join("include")
            .join("cardguard")
            .join(header);
        std::fs::copy(from, include.join(header)).unwrap();
    }
    for (name, text) in sources {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

fn noop_source() -> String {
    std::fs::read_to_string(default_source_dir().join("noop.cpp")).unwrap()
}

#[test]
fn builds_each_source_for_each_arch() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(
        tmp.path(),
        &[("noop.cpp", &noop_source()), ("notes.txt", "not a kernel")],
    );
    let out = tmp.path().join("out");
    let built = build_blobs(&BuildOptions::new(&src, &out), &["a5", "a2a3"]).unwrap();
    let names: Vec<_> = built.iter().map(|b| (b.arch.as_str(), b.name.as_str())).collect();
    assert_eq!(names, [("a5", "noop"), ("a2a3", "noop")]);
    for arch in Arch::ALL {
        let dir = out.join(arch.name());
        assert_eq!(built.iter().filter(|b| b.path.starts_with(&dir)).count(), 1);
        let blob = load_named(&dir, arch, "noop").unwrap();
        assert_eq!(blob.meta().arch, arch);
        // Nothing but the blob is left behind (no temporary files).
        let entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(entries, ["noop.so"]);
    }
}

#[test]
fn a_compile_error_carries_the_compilers_message() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(
        tmp.path(),
        &[
            ("noop.cpp", &noop_source()),
            ("broken.cpp", "int broken( { return 0; }\n"),
        ],
    );
    let err = build_blobs(&BuildOptions::new(&src, tmp.path().join("out")), &["a5"]).unwrap_err();
    match &err {
        BuildError::Compile {
            source_file,
            arch,
            stderr,
            ..
        } => {
            assert!(source_file.ends_with("broken.cpp"));
            assert_eq!(arch, "a5");
            assert!(stderr.contains("broken.cpp"), "{stderr}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
    assert!(err.to_string().starts_with("compiling "), "{err}");
}

#[test]
fn an_unknown_arch_is_refused_before_compiling() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path(), &[("noop.cpp", &noop_source())]);
    let out = tmp.path().join("out");
    let err = build_blobs(&BuildOptions::new(&src, &out), &["a5", "a9"]).unwrap_err();
    assert!(matches!(&err, BuildError::UnknownArch(a) if a == "a9"), "{err}");
    assert!(!out.exists());
}

#[test]
fn bad_source_trees_are_typed_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let missing = build_blobs(&BuildOptions::new(tmp.path().join("nope"), &out), &["a5"]).unwrap_err();
    assert!(matches!(missing, BuildError::ReadSources { .. }), "{missing}");

    let empty = source_tree(&tmp.path().join("empty"), &[]);
    let none = build_blobs(&BuildOptions::new(&empty, &out), &["a5"]).unwrap_err();
    assert!(matches!(none, BuildError::NoSources { .. }), "{none}");

    let badly_named = source_tree(&tmp.path().join("bad"), &[("Vector-Add.cpp", "")]);
    let bad = build_blobs(&BuildOptions::new(&badly_named, &out), &["a5"]).unwrap_err();
    assert!(matches!(bad, BuildError::BadSourceName { .. }), "{bad}");
}

#[test]
fn a_missing_compiler_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path(), &[("noop.cpp", &noop_source())]);
    let mut opts = BuildOptions::new(&src, tmp.path().join("out"));
    opts.compiler = Compiler::from_command_line("/nonexistent/cardguard-c++ -v").unwrap();
    let err = build_blobs(&opts, &["a5"]).unwrap_err();
    assert!(matches!(err, BuildError::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/cardguard-c++"), "{err}");
}

#[test]
fn compiler_command_lines_split_on_whitespace() {
    assert_eq!(Compiler::from_command_line("  "), None);
    let c = Compiler::from_command_line("ccache g++ -g").unwrap();
    assert_eq!(c.program, "ccache");
    assert_eq!(c.args, ["g++", "-g"]);
}
