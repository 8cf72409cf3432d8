//! `cargo cardguard` from a repository of its own: a suite crate is written into a temp dir
//! outside this workspace as the guide's "Writing cases" has it (its own `Cargo.toml` with path
//! dependencies on this repository's runner and kernel-build, its own kernel `scale` built by its
//! `build.rs`, host cases), and everything runs through cargo itself, `cargo cardguard ...`, with
//! the built `cargo-cardguard` on `PATH` as `cargo install` leaves it: `list`, `run` clean and
//! under a fault plan, `archive`, then the archive unpacked and run as a card host runs it (a
//! cleared environment whose `PATH` has no cargo). An archive missing a declared kernel is
//! refused at build time naming the kernel and its case; outside any cargo workspace, bad usage,
//! and `pytest` (the `cardguard pytest` code, no workspace needed) are one-line errors, exit 2.
//!
//! The temp crate shares this build's target directory (`CARGO_TARGET_DIR`), this workspace's
//! `Cargo.lock` and its `[profile]` settings, so its registry dependencies are the ones already
//! built, not a cold build of minutes (cardguard's own crates build once more the first time:
//! cargo hashes another workspace's path dependencies apart from this workspace's members); the
//! network is off (`CARGO_NET_OFFLINE`). Every run setting (sim
//! root, lock dir, report dir, temp dir, short sim timeouts) is given to the child processes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cardguard_archive::unpack;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-cardguard");
const CARDGUARD: &str = env!("CARGO_BIN_EXE_cardguard");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The target directory this test binary was built into (`target/debug/cargo-cardguard`).
fn target_dir() -> PathBuf {
    Path::new(BIN).parent().and_then(Path::parent).unwrap().to_owned()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The lines of `out`'s stderr that are cardguard's errors (cargo's own progress stays out).
fn errors(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("error"))
        .map(str::to_owned)
        .collect()
}

/// The kernel of the guide's "Writing cases": y = alpha * x + beta.
const SCALE_CPP: &str = r#"// scale: y[i] = alpha * x[i] + beta. Arguments: x (f32[n]), y (f32[n], out), n, alpha bits, beta bits.
#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "scale", CG_ARCH, 8, 5};

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (!cg::launch_ok(ctx, 5)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const uint64_t n = cg::scalar(ctx, 2);
    const float *x = cg::buf<const float>(ctx, 0, n);
    float *y = cg::buf<float>(ctx, 1, n);
    if (x == nullptr || y == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    const float alpha = cg::f32_arg(ctx, 3);
    const float beta = cg::f32_arg(ctx, 4);
    const cg::Range r = cg::block_range(n, ctx->block_idx, ctx->block_dim);
    for (uint64_t i = r.begin; i < r.end; ++i) {
        y[i] = alpha * x[i] + beta;
    }
    return CG_KERNEL_OK;
}
"#;

const BUILD_RS: &str = r#"//! Builds kernels/*.cpp for both arches into $OUT_DIR/kernels/<arch>/<name>.so.

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
        .sources_in(Path::new("kernels"))
        .and_then(|b| b.build());
    match built {
        Ok(_) => {
            println!("cargo:rustc-env=MY_SUITE_KERNELS={}", kernels.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: building the suite's kernels: {e}");
            ExitCode::FAILURE
        }
    }
}
"#;

/// Where the archive-refusal step adds a class declaring a kernel no build makes.
const MORE_CLASSES: &str = "/* more classes */";

const MAIN_RS: &str = r#"//! my-suite: its own kernel chained with a built-in one, and a host case on a built-in kernel.

use runner::prelude::*;

/// y = 2x + 1 with this crate's `scale`, then z = y + x with the built-in `vector_add`.
fn scale_then_add(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let n = 1000;
    let x = ctx.random_f32s(n, -4.0, 4.0);
    let dx = ctx.upload_f32(&x)?;
    let dy = ctx.alloc_f32(n)?;
    let dz = ctx.alloc_f32(n)?;
    ctx.launch(
        "scale",
        8,
        &[Arg::In(dx), Arg::Out(dy), Arg::count(n), Arg::f32(2.0), Arg::f32(1.0)],
    )?;
    ctx.launch(
        "vector_add",
        8,
        &[Arg::In(dy), Arg::In(dx), Arg::Out(dz), Arg::count(n)],
    )?;
    let z = ctx.copy_out_f32(dz)?;
    let want: Vec<f32> = x.iter().map(|v| (2.0 * v + 1.0) + v).collect();
    ctx.assert_close(&z, &want, 1e-6, 1e-6)
}

fn add_twice(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let x = ctx.random_f32s(256, -1.0, 1.0);
    let dx = ctx.upload_f32(&x)?;
    let dy = ctx.alloc_f32(256)?;
    ctx.launch("vector_add", 8, &[Arg::In(dx), Arg::In(dx), Arg::Out(dy), Arg::count(256)])?;
    let y = ctx.copy_out_f32(dy)?;
    let want: Vec<f32> = x.iter().map(|v| v + v).collect();
    ctx.assert_close(&y, &want, 0.0, 0.0)
}

fn suite(_arch: Arch) -> Suite {
    let rt = Runtime::new("my_suite");
    Suite::new()
        .kernel_dir(env!("MY_SUITE_KERNELS"))
        .class(
            ClassSpec::pooled("Chained", rt.clone())
                .case(CaseSpec::host("scale_then_add", &["scale", "vector_add"], scale_then_add))
                .case(CaseSpec::host("scale_then_add_again", &["scale", "vector_add"], scale_then_add)),
        )
        .class(ClassSpec::pooled("Basics", rt.clone()).case(CaseSpec::host(
            "add_twice",
            &["vector_add"],
            add_twice,
        )))
        /* more classes */
}

fn main() -> std::process::ExitCode {
    runner::app::main(suite)
}
"#;

/// The crate's `Cargo.toml`: the guide's, plus this workspace's profiles (so the shared target
/// dir's builds are reused) and an empty `[workspace]` (a crate of its own wherever the temp
/// dir is).
fn manifest(repo: &Path) -> String {
    let ws: toml::Table = std::fs::read_to_string(repo.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let mut profile = toml::Table::new();
    profile.insert("profile".into(), ws["profile"].clone());
    format!(
        "[package]\nname = \"my-suite\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nrunner = {{ path = {:?}, features = [\"sim\", \"onboard\"] }}\n\n\
         [build-dependencies]\nkernel-build = {{ path = {:?} }}\n\n\
         [workspace]\n\n\
         # cardguard's profiles: the builds of the shared target dir are reused.\n{}",
        repo.join("crates/runner").display().to_string(),
        repo.join("crates/kernel-build").display().to_string(),
        toml::to_string(&profile).unwrap()
    )
}

/// The suite crate, in `dir/my-suite`.
fn write_crate(dir: &Path) -> PathBuf {
    let root = dir.join("my-suite");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("kernels")).unwrap();
    std::fs::write(root.join("Cargo.toml"), manifest(&repo())).unwrap();
    std::fs::copy(repo().join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    std::fs::write(root.join("build.rs"), BUILD_RS).unwrap();
    std::fs::write(root.join("kernels/scale.cpp"), SCALE_CPP).unwrap();
    std::fs::write(root.join("src/main.rs"), MAIN_RS).unwrap();
    root
}

/// A sandbox: the installed `cargo-cardguard` (a `bin` dir first on `PATH`), the simulated
/// cards, locks and temp dir of the runs.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for d in ["bin", "tmp", "reports"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::os::unix::fs::symlink(BIN, dir.path().join("bin/cargo-cardguard")).unwrap();
        Self { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// `cargo cardguard ARGS` in `cwd`, as a user types it.
    fn cargo_cardguard(&self, cwd: &Path, args: &[&str]) -> Output {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.path("bin")];
        dirs.extend(std::env::split_paths(&path));
        Command::new(env!("CARGO"))
            .arg("cardguard")
            .args(args)
            .current_dir(cwd)
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env("CARGO_TARGET_DIR", target_dir())
            .env("CARGO_NET_OFFLINE", "true")
            .env("ONBOARD_SIM_ROOT", self.path("sim"))
            .env("ONBOARD_LOCK_DIR", self.path("locks"))
            .env("ONBOARD_SIM_CARDS", "2")
            .env("ONBOARD_SCHEDULER_TIMEOUT_MS", "20")
            .env("ONBOARD_OP_EXECUTE_TIMEOUT_US", "60000")
            .env("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "250")
            .env("TMPDIR", self.path("tmp"))
            .env_remove("ONBOARD_SIM_FAULTS")
            .env_remove("ONBOARD_KERNEL_DIR")
            .env_remove("CARDGUARD_CONFIG")
            .env_remove("CARDGUARD_PROFILE")
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    }
}

fn report(dir: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(dir.join("report.json")).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    serde_json::from_str(&text).unwrap()
}

const CASES: [&str; 3] = [
    "Basics::add_twice",
    "Chained::scale_then_add",
    "Chained::scale_then_add_again",
];

fn outcomes(r: &serde_json::Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_suite_of_its_own_repository_runs_archives_and_runs_from_its_archive() {
    let sb = Sandbox::new();
    let krate = write_crate(sb.dir.path());

    // list: the crate is built (cargo's own progress shows) and asked for its cases.
    let out = sb.cargo_cardguard(&krate, &["list", "--arch", "a5", "--platform", "sim"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Finished `dev` profile"), "{}", text(&out));
    let mut listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    listed.sort();
    assert_eq!(listed, CASES, "{}", text(&out));

    // run, clean.
    let clean = sb.path("reports/clean");
    let out = sb.cargo_cardguard(
        &krate,
        &[
            "run",
            "--arch",
            "a5",
            "--platform",
            "sim",
            "--no-progress",
            "--report-dir",
            clean.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report(&clean);
    let passed: Vec<(String, String)> = CASES
        .iter()
        .map(|c| ((*c).to_owned(), "passed".to_owned()))
        .collect();
    assert_eq!(outcomes(&r), passed, "{}", text(&out));
    for f in ["journal.jsonl", "junit.xml", "timeline.svg"] {
        assert!(clean.join(f).is_file(), "{f}");
    }

    // run under a fault plan: the first launch on card 0 hangs; the card is reset, the case
    // passes on a retry, nothing else pays.
    let faulted = sb.path("reports/faulted");
    let out = sb.cargo_cardguard(
        &krate,
        &[
            "run",
            "--arch",
            "a5",
            "--platform",
            "sim",
            "--devices",
            "0",
            "--no-progress",
            "--faults",
            "dev=0:op_timeout@1",
            "--report-dir",
            faulted.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report(&faulted);
    assert_eq!(r["summary"]["total"], 3, "{}", r["summary"]);
    assert_eq!(r["summary"]["flaky"], 1, "{}", r["summary"]);
    assert_eq!(r["summary"]["passed"], 2, "{}", r["summary"]);
    let flaky = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["outcome"] == "flaky")
        .unwrap();
    assert_eq!(flaky["attempts"][0]["error"]["code"]["raw"], 507000, "{flaky}");
    let card0: Vec<&str> = r["devices_health"]["0"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    for event in ["poisoned", "force_reset", "recovered"] {
        assert!(card0.contains(&event), "{event}: {card0:?}");
    }

    // archive (dev profile: the build above, not a release build of minutes).
    let archive = sb.path("my-suite-a5.tar.zst");
    let out = sb.cargo_cardguard(
        &krate,
        &[
            "archive",
            "--arch",
            "a5",
            "--profile",
            "dev",
            "-o",
            archive.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("archive: "),
        "{}",
        text(&out)
    );

    // A card host: the archive unpacked, run in a cleared environment with no cargo.
    let host = sb.path("host");
    for d in ["bin", "tmp", "work"] {
        std::fs::create_dir_all(host.join(d)).unwrap();
    }
    let u = unpack(&archive, &host.join("unpacked")).unwrap();
    assert_eq!(u.manifest.suite.package, "my-suite");
    assert_eq!(u.manifest.suite.binary, "my-suite");
    for m in [
        "my-suite",
        "kernels/a5/scale.so",
        "kernels/a5/vector_add.so",
        "kernels/a5/noop.so",
        "lib/libsim_acl.so",
    ] {
        assert!(
            u.manifest.member(m).is_some(),
            "{m} is not in {:?}",
            u.manifest.members
        );
    }
    let no_cargo = Command::new("/bin/sh")
        .env_clear()
        .env("PATH", host.join("bin"))
        .args(["-c", "command -v cargo rustc"])
        .output()
        .unwrap();
    assert!(!no_cargo.status.success(), "{}", text(&no_cargo));
    let out = Command::new(u.binary())
        .env_clear()
        .env("PATH", host.join("bin"))
        .env("HOME", host.join("work"))
        .env("TMPDIR", host.join("tmp"))
        .env("ONBOARD_SIM_ROOT", host.join("sim"))
        .env("ONBOARD_LOCK_DIR", host.join("locks"))
        .current_dir(host.join("work"))
        .args(["--arch", "a5", "--no-progress", "--report-dir", "on-host"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(outcomes(&report(&host.join("work/on-host"))), passed);

    // A class declaring a kernel no build makes: the archive is refused, naming it and its case.
    let main_rs = krate.join("src/main.rs");
    let typo = MAIN_RS.replace(
        MORE_CLASSES,
        r#".class(ClassSpec::pooled("Typo", rt).case(CaseSpec::host("relu", &["reluu"], add_twice)))"#,
    );
    assert_ne!(typo, MAIN_RS);
    std::fs::write(&main_rs, typo).unwrap();
    let refused = sb.path("typo-a5.tar.zst");
    let out = sb.cargo_cardguard(
        &krate,
        &[
            "archive",
            "--arch",
            "a5",
            "--profile",
            "dev",
            "-o",
            refused.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let errs = errors(&out);
    assert_eq!(errs.len(), 1, "{}", text(&out));
    assert!(
        errs[0].contains("kernel \"reluu\": declared by case Typo::relu"),
        "{}",
        errs[0]
    );
    assert!(!refused.exists());
}

#[test]
fn outside_any_cargo_workspace_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in [
        &["list"][..],
        &["archive", "--arch", "a5", "-o", "x.tar.zst"],
        &["cards"],
    ] {
        let out = Command::new(BIN)
            .arg("cardguard")
            .args(cmd)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{cmd:?}: {stderr}");
        let want = format!("error: no cargo workspace at {}: ", dir.path().display());
        assert!(stderr.starts_with(&want), "{cmd:?}: {stderr}");
    }
}

#[test]
fn bad_usage_is_one_line_and_exit_2() {
    for (args, needle) in [
        (&["cardguard", "frobnicate"][..], "'frobnicate'"),
        (&["cardguard", "archive", "--arch", "a5"], "--output"),
        (&["cardguard", "run", "--package"], "--package"),
        (&["cardguard", "cards", "--clear", "x"], "--clear"),
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    // No command: the commands are listed, still exit 2.
    let out = Command::new(BIN).arg("cardguard").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Usage: cargo cardguard [OPTIONS] <COMMAND>"),
        "{stderr}"
    );
    assert!(stderr.contains("merge-reports"), "{stderr}");
}

/// `cargo cardguard pytest` is `cardguard pytest`: the same code, the same error for an
/// interpreter that does not exist, and no cargo workspace needed.
#[test]
fn pytest_is_cardguard_pytest_outside_any_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-python");
    let run = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .args(["pytest", "--platform", "onboard", "--no-config", "--", "tests"])
            .current_dir(dir.path())
            .env("CARDGUARD_PYTHON", &missing)
            .env("TMPDIR", dir.path())
            .output()
            .unwrap()
    };
    let cargo = run(BIN, &["cardguard"]);
    let plain = run(CARDGUARD, &[]);
    assert_eq!(cargo.status.code(), Some(2), "{}", text(&cargo));
    assert_eq!(cargo.stderr, plain.stderr, "{}\n{}", text(&cargo), text(&plain));
    let stderr = String::from_utf8_lossy(&cargo.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&missing.display().to_string()), "{stderr}");
}
