//! The seed, replayed in pytest: the example pytest suite (`examples/pytest-suite`) with a fault
//! plan that op-timeouts card 0's third case launch, first under plain `pytest -n 2`
//! (pytest-xdist, the seed's own pooled-worker cache: `-p no:cardguard`), then under
//! `cardguard pytest`. Plain xdist shows the cascade (the trigger and every later test of that
//! worker fail); cardguard contains it (the trigger flaky, every other test passed, only the
//! suite's own `skip` skipped).
//!
//! The interpreter is `CARDGUARD_TEST_PYTHON` (default `python3`), with pytest, pytest-xdist and
//! `pytest-cardguard` (`./python`) installed: `.ci/run` makes that venv. Every setting reaches
//! the processes through their own environment (a sandbox per test: sim root, lock dir, reports).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PLAN: &str = "dev=0:op_timeout@3";

fn python() -> String {
    std::env::var("CARDGUARD_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/pytest-suite")
}

struct Sandbox {
    dir: tempfile::TempDir,
    lib: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let lib = cardguard_test_support::locate::built_library().unwrap();
        Self {
            dir: tempfile::tempdir().unwrap(),
            lib,
        }
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        let d = self.dir.path();
        c.current_dir(suite_dir())
            .env("ONBOARD_SIM_ROOT", d.join("sim"))
            .env("ONBOARD_LOCK_DIR", d.join("locks"))
            .env("ONBOARD_CARDS", "2")
            .env("ONBOARD_SIM_ARCH", "a5")
            .env("ONBOARD_ACL_LIB", &self.lib)
            .env("ONBOARD_SCHEDULER_TIMEOUT_MS", "20")
            .env("ONBOARD_OP_EXECUTE_TIMEOUT_US", "60000")
            .env("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "1600")
            .env("CARDGUARD_PYTHON", python())
            .env(
                "EXAMPLE_KERNEL_DIR",
                platform_common::kernel::built_blob_dir(platform_common::Arch::A5),
            )
            .env("TMPDIR", d)
            .env_remove("PYTEST_ADDOPTS")
            .env_remove("CARDGUARD_CONFIG");
        c
    }
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `(failures, tests)` of a JUnit file (pytest's).
fn junit_counts(path: &Path) -> (u64, u64) {
    let xml = std::fs::read_to_string(path).unwrap();
    let attr = |name: &str| -> u64 {
        let at = xml
            .find(&format!(" {name}=\""))
            .unwrap_or_else(|| panic!("{name} in {xml}"));
        let rest = &xml[at + name.len() + 3..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    };
    (attr("failures") + attr("errors"), attr("tests"))
}

#[test]
fn xdist_cascades_and_cardguard_contains_the_seed() {
    // Plain pytest -n 2: the plan installed as a run would (cgSimStartRun), then the seed's setup.
    let sb = Sandbox::new();
    let start = sb
        .command(&python())
        .args([
            "-c",
            "import ctypes,os,sys; l=ctypes.CDLL(os.environ['ONBOARD_ACL_LIB']); \
             c=(ctypes.c_uint32*2)(0,1); sys.exit(l.cgSimStartRun(c,2,sys.argv[1].encode()))",
            PLAN,
        ])
        .output()
        .unwrap();
    assert!(start.status.success(), "{}", text(&start));
    let junit = sb.dir.path().join("xdist.xml");
    let xdist = sb
        .command(&python())
        .args([
            "-m",
            "pytest",
            "-n",
            "2",
            "-p",
            "no:cardguard",
            "-p",
            "no:cacheprovider",
            "-q",
        ])
        .arg(format!("--junitxml={}", junit.display()))
        .output()
        .unwrap();
    assert_eq!(xdist.status.code(), Some(1), "{}", text(&xdist));
    let (failed, tests) = junit_counts(&junit);
    assert_eq!(tests, 13, "{}", text(&xdist));
    assert!(
        failed >= 2,
        "the op-timeout poisons the worker: its later tests fail too ({failed} failed)\n{}",
        text(&xdist)
    );

    // cardguard pytest, same plan, fresh sandbox.
    let sb = Sandbox::new();
    let reports = sb.dir.path().join("reports");
    let cg = sb
        .command(env!("CARGO_BIN_EXE_cardguard"))
        .args([
            "pytest",
            "--arch",
            "a5",
            "--platform",
            "onboard",
            "--devices",
            "0,1",
            "--no-progress",
        ])
        .args(["--no-config", "--faults", PLAN, "--report-dir"])
        .arg(&reports)
        .args(["--", "."])
        .output()
        .unwrap();
    assert_eq!(cg.status.code(), Some(0), "{}", text(&cg));
    for f in ["report.json", "junit.xml", "journal.jsonl", "timeline.svg"] {
        assert!(reports.join(f).is_file(), "{f} missing");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("report.json")).unwrap()).unwrap();
    let s = &report["summary"];
    assert_eq!(s["total"], 13, "{s}");
    assert_eq!(
        s["flaky"],
        1,
        "the trigger, retried on a clean card: {s}\n{}",
        text(&cg)
    );
    assert_eq!(s["failed"], 0, "{s}");
    assert_eq!(s["passed"], 11, "every other test passed: {s}");
    assert_eq!(s["skipped"], 1, "only the suite's own skip: {s}");
    eprintln!("xdist: {failed} of {tests} failed; cardguard: {s}");
}

#[test]
fn a_collection_error_is_one_line_and_exit_2() {
    let sb = Sandbox::new();
    let out = sb
        .command(env!("CARGO_BIN_EXE_cardguard"))
        .args([
            "pytest",
            "--platform",
            "onboard",
            "--no-config",
            "--",
            "no_such_dir",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("collection failed"), "{err}");
}
