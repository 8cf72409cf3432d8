//! `cargo xtask build-kernels`: host blobs for simulated cards, and AICore binaries with the CANN
//! compiler, which is not installed here: its absence is said plainly (exit 1, nothing built),
//! and a stand-in `ccec` under a stand-in CANN tree shows the command lines and the manifest.
//! Every setting reaches the xtask child through its own environment, never this process's.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// `cargo xtask build-kernels ARGS` with CANN looked for only under `cann` (and `home`).
fn build_kernels(cann: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("build-kernels")
        .args(args)
        .env("ASCEND_HOME_PATH", cann)
        .env_remove("ASCEND_TOOLKIT_HOME")
        .env("HOME", home)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A stand-in CANN tree with a `ccec` that records its arguments beside its output and writes
/// the output (or, with `fail`, refuses).
fn fake_cann(dir: &Path, fail: bool) -> PathBuf {
    let root = dir.join("cann");
    let bin = root.join("compiler/ccec_compiler/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = if fail {
        "#!/bin/sh\necho 'ccec: error: unsupported construct' >&2\nexit 3\n".to_owned()
    } else {
        "#!/bin/sh\nout=\nprev=\nfor a in \"$@\"; do\n  if [ \"$prev\" = -o ]; then out=$a; fi\n  prev=$a\ndone\n\
         printf '%s\\n' \"$@\" > \"$out.args\"\nprintf 'aicore binary' > \"$out\"\n"
            .to_owned()
    };
    let ccec = bin.join("ccec");
    std::fs::write(&ccec, script).unwrap();
    std::fs::set_permissions(&ccec, std::fs::Permissions::from_mode(0o755)).unwrap();
    root
}

fn example_kernels() -> (String, String) {
    let k = workspace().join("examples/onboard-suite/kernels");
    (k.display().to_string(), k.join("include").display().to_string())
}

#[test]
fn without_a_cann_compiler_it_says_so_and_builds_nothing() {
    if Path::new("/usr/local/Ascend").exists() {
        eprintln!("skipped: a CANN install exists in /usr/local/Ascend");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let empty = dir.path().join("no-cann");
    let out = build_kernels(
        &empty,
        dir.path(),
        &[
            "--arch",
            "a5",
            "--platform",
            "onboard",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", text(&out));
    assert!(
        lines[0].contains("no CANN compiler (ccec or bisheng) is installed"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(&empty.join("bin").display().to_string()),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("nothing was built"));
    assert!(!out_dir.exists(), "nothing was written");
}

#[test]
fn the_cann_compiler_builds_aicore_binaries_and_their_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let cann = fake_cann(dir.path(), false);
    let (source, include) = example_kernels();
    for (arch, target) in [("a5", "dav-c310-vec"), ("a2a3", "dav-c220-vec")] {
        let out_dir = dir.path().join("out");
        let out = build_kernels(
            &cann,
            dir.path(),
            &[
                "--arch",
                arch,
                "--platform",
                "onboard",
                "--source",
                &source,
                "--include",
                &include,
                "--out",
                out_dir.to_str().unwrap(),
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let arch_dir = out_dir.join(arch);
        assert_eq!(std::fs::read(arch_dir.join("scale.o")).unwrap(), b"aicore binary");
        let args = std::fs::read_to_string(arch_dir.join("scale.o.args")).unwrap();
        let args: Vec<&str> = args.lines().collect();
        for want in [
            "-c",
            "-x",
            "cce",
            "--cce-aicore-only",
            &format!("--cce-aicore-arch={target}"),
            &format!("-DCG_ARCH=\"{arch}\""),
        ] {
            assert!(args.contains(&want), "{arch}: {want} missing from {args:?}");
        }
        assert!(
            args.contains(&include.as_str()),
            "{arch}: the suite's include dir: {args:?}"
        );
        assert!(args.last().unwrap().ends_with("scale.cpp"));
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(arch_dir.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(
            manifest,
            serde_json::json!({"kernels": {"scale": {"file": "scale.o", "block_dim": 8, "num_args": 5}}}),
            "{arch}: the metadata of the kernel's own source"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("1 AICore binaries for {arch}")),
            "{stdout}"
        );
    }
}

#[test]
fn a_failing_cann_compile_names_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let cann = fake_cann(dir.path(), true);
    let (source, include) = example_kernels();
    let out_dir = dir.path().join("out");
    let out = build_kernels(
        &cann,
        dir.path(),
        &[
            "--arch",
            "a5",
            "--platform",
            "onboard",
            "--source",
            &source,
            "--include",
            &include,
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("scale.cpp") && stderr.contains("unsupported construct"),
        "{stderr}"
    );
}

#[test]
fn host_blobs_for_simulated_cards() {
    let dir = tempfile::tempdir().unwrap();
    let (source, include) = example_kernels();
    let out_dir = dir.path().join("out");
    let out = build_kernels(
        &dir.path().join("no-cann"),
        dir.path(),
        &[
            "--arch",
            "a2a3",
            "--source",
            &source,
            "--include",
            &include,
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let blob =
        platform_common::kernel::load_named(&out_dir.join("a2a3"), platform_common::Arch::A2a3, "scale")
            .unwrap();
    assert_eq!((blob.meta().block_dim, blob.meta().num_args), (8, 5));
}
