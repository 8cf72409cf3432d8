//! The kernel build helper on small source trees in temp dirs: blobs land in
//! `<out>/<arch>/<name>.so` and load as that kernel of that arch, nothing else is left behind,
//! a suite's own include directory works, and every kind of failure is a typed error carrying
//! what went wrong (the compiler's own diagnostics for a compile error).

use std::path::{Path, PathBuf};

use kernel_build::{builtin_kernels_dir, BuildError, KernelBuild};
use platform_common::kernel::load_named;
use platform_common::Arch;

/// A kernels dir in `root` with the given sources (the ABI header comes from the include path).
fn source_tree(root: &Path, sources: &[(&str, &str)]) -> PathBuf {
    let dir = root.join("kernels");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in sources {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

fn noop_source() -> String {
    std::fs::read_to_string(builtin_kernels_dir().join("noop.cpp")).unwrap()
}

#[test]
fn builds_each_source_for_each_arch() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(
        tmp.path(),
        &[("noop.cpp", &noop_source()), ("notes.txt", "not a kernel")],
    );
    let out = tmp.path().join("out");
    let built = KernelBuild::new(&out)
        .archs(["a5", "a2a3"])
        .sources_in(&src)
        .unwrap()
        .build()
        .unwrap();
    let names: Vec<_> = built.iter().map(|b| (b.arch.as_str(), b.name.as_str())).collect();
    assert_eq!(names, [("a5", "noop"), ("a2a3", "noop")]);
    for arch in Arch::ALL {
        let dir = out.join(arch.name());
        assert_eq!(built.iter().filter(|b| b.path.starts_with(&dir)).count(), 1);
        let blob = load_named(&dir, arch, "noop").unwrap();
        assert_eq!(blob.meta().arch, arch);
        // Nothing but the blob is left behind (no objects, no temporary files).
        let entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(entries, ["noop.so"]);
    }
}

#[test]
fn a_suite_kernel_with_its_own_header_builds_against_the_abi() {
    let tmp = tempfile::tempdir().unwrap();
    let include = tmp.path().join("include");
    std::fs::create_dir_all(&include).unwrap();
    std::fs::write(include.join("suite_blocks.h"), "#define SUITE_BLOCK_DIM 3\n").unwrap();
    let source = noop_source()
        .replace("#include", "#include \"suite_blocks.h\"\n#include")
        .replace("\"noop\"", "\"suite_noop\"");
    let src = source_tree(tmp.path(), &[("suite_noop.cpp", &source)]);
    let out = tmp.path().join("out");
    let built = KernelBuild::new(&out)
        .include(&include)
        .source(src.join("suite_noop.cpp"))
        .archs(["a5"])
        .build()
        .unwrap();
    assert_eq!(built.len(), 1);
    let blob = load_named(&out.join("a5"), Arch::A5, "suite_noop").unwrap();
    assert_eq!(blob.meta().name, "suite_noop");
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
    let out = tmp.path().join("out");
    let err = KernelBuild::new(&out)
        .archs(["a5"])
        .sources_in(&src)
        .unwrap()
        .build()
        .unwrap_err();
    match &err {
        BuildError::Compile {
            source_file,
            arch,
            diagnostics,
        } => {
            assert!(source_file.ends_with("broken.cpp"));
            assert_eq!(arch, "a5");
            assert!(diagnostics.contains("broken.cpp"), "{diagnostics}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
    assert!(err.to_string().starts_with("compiling "), "{err}");
    assert!(!out.join("a5").join("broken.so").exists());
}

#[test]
fn bad_arches_and_missing_arches_are_refused_before_compiling() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path(), &[("noop.cpp", &noop_source())]);
    let out = tmp.path().join("out");
    let build = KernelBuild::new(&out).sources_in(&src).unwrap();
    let err = build.clone().archs(["a5", "a\"9"]).build().unwrap_err();
    assert!(matches!(&err, BuildError::BadArch(a) if a == "a\"9"), "{err}");
    let err = build.build().unwrap_err();
    assert!(matches!(err, BuildError::NoArch), "{err}");
    assert!(!out.exists());
}

#[test]
fn bad_source_trees_are_typed_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let missing = KernelBuild::new(&out)
        .sources_in(&tmp.path().join("nope"))
        .unwrap_err();
    assert!(matches!(missing, BuildError::ReadSources { .. }), "{missing}");

    let empty = source_tree(&tmp.path().join("empty"), &[]);
    let none = KernelBuild::new(&out).sources_in(&empty).unwrap_err();
    assert!(matches!(none, BuildError::NoSources { .. }), "{none}");

    let badly_named = source_tree(&tmp.path().join("bad"), &[("Vector-Add.cpp", "")]);
    let bad = KernelBuild::new(&out)
        .archs(["a5"])
        .sources_in(&badly_named)
        .unwrap()
        .build()
        .unwrap_err();
    assert!(matches!(bad, BuildError::BadSource { .. }), "{bad}");

    let twice = source_tree(&tmp.path().join("twice"), &[("noop.cpp", &noop_source())]);
    let dup = KernelBuild::new(&out)
        .archs(["a5"])
        .source(twice.join("noop.cpp"))
        .source(src_of(&twice))
        .build()
        .unwrap_err();
    assert!(
        matches!(dup, BuildError::DuplicateKernel { ref name, .. } if name == "noop"),
        "{dup}"
    );
}

fn src_of(dir: &Path) -> PathBuf {
    dir.join(".").join("noop.cpp")
}

#[test]
fn a_missing_compiler_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source_tree(tmp.path(), &[("noop.cpp", &noop_source())]);
    let err = KernelBuild::new(tmp.path().join("out"))
        .compiler("/nonexistent/cardguard-c++")
        .archs(["a5"])
        .sources_in(&src)
        .unwrap()
        .build()
        .unwrap_err();
    assert!(matches!(err, BuildError::Compiler { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/cardguard-c++"), "{err}");
}
