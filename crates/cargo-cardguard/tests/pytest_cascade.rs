//! The seed, replayed in pytest: the example pytest suite (`examples/pytest-suite`) with a fault
//! plan that op-timeouts card 0's third case launch, first under plain `pytest -n 2 --dist each`
//! (pytest-xdist, the seed's own pooled-worker cache: `-p no:cardguard`; `each` makes every
//! worker run the whole suite in order, so which tests card 0's worker runs never depends on
//! xdist's load balancing), then under `cardguard pytest`. Plain xdist shows the cascade: on card
//! 0's worker the trigger and every later device test fail, card 1's passes everything; cardguard
//! contains it (the trigger flaky, every other test passed, no test skipped).
//!
//! The interpreter is `CARDGUARD_TEST_PYTHON` (default `python3`), with pytest, pytest-xdist,
//! setuptools (>= 70.1) and mypy installed: `.ci/run` makes that venv. `pytest-cardguard` is installed
//! once per test process with pip from a copy of `./python` into a temp dir put first on
//! `PYTHONPATH`, so the repository is never written and the plugin tested is this checkout's.
//! Every setting reaches the processes through their own environment (a sandbox per test: sim
//! root, lock dir, reports).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const PLAN: &str = "dev=0:op_timeout@3";

fn python() -> String {
    std::env::var("CARDGUARD_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/pytest-suite")
}

/// The plugin installed from a copy of `./python` (once per process): the site dir.
fn plugin_site() -> &'static Path {
    static SITE: OnceLock<tempfile::TempDir> = OnceLock::new();
    SITE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("python");
        std::fs::create_dir(&copy).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python");
        copy_tree(&src, &copy);
        let site = dir.path().join("site");
        let out = Command::new(python())
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                "--target",
            ])
            .arg(&site)
            .arg(&copy)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e} (set CARDGUARD_TEST_PYTHON; .ci/run makes one)", python()));
        assert!(out.status.success(), "pip install of the plugin: {}", text(&out));
        dir
    })
    .path()
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "build" || name.to_string_lossy().ends_with(".egg-info") || name == "__pycache__" {
            continue;
        }
        let dst = to.join(&name);
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir(&dst).unwrap();
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
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
            .env("PYTHONPATH", plugin_site().join("site"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
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

/// The `(outcome, node id)` lines of worker `gw` in pytest's `-v` output under xdist, in order.
fn worker_lines(stdout: &str, gw: &str) -> Vec<(String, String)> {
    let tag = format!("[{gw}] [");
    stdout
        .lines()
        .filter(|l| l.starts_with(&tag))
        .filter_map(|l| {
            let rest = &l[l.find(']')? + 1..];
            let rest = &rest[rest.find(']')? + 1..];
            let mut w = rest.split_whitespace();
            Some((w.next()?.to_owned(), w.next()?.to_owned()))
        })
        .collect()
}

/// The example's tests that never touch a card.
fn host_only(nodeid: &str) -> bool {
    nodeid.ends_with("::test_host_only")
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
    let xdist = sb
        .command(&python())
        .args(["-m", "pytest", "-n", "2", "--dist", "each", "-v"])
        .args(["-p", "no:cardguard", "-p", "no:cacheprovider"])
        .output()
        .unwrap();
    assert_eq!(xdist.status.code(), Some(1), "{}", text(&xdist));
    let stdout = String::from_utf8_lossy(&xdist.stdout).into_owned();
    let gw0 = worker_lines(&stdout, "gw0");
    let gw1 = worker_lines(&stdout, "gw1");
    assert_eq!((gw0.len(), gw1.len()), (12, 12), "{}", text(&xdist));
    assert!(
        gw1.iter().all(|(o, _)| o != "FAILED"),
        "card 1 has no fault: {gw1:?}"
    );
    let trigger = gw0
        .iter()
        .position(|(o, _)| o == "FAILED")
        .unwrap_or_else(|| panic!("the op-timeout fails a test: {gw0:?}"));
    assert!(
        gw0[trigger].1.ends_with("TestRing::test_sdma_copy"),
        "card 0's third launch: {gw0:?}"
    );
    let later: Vec<&(String, String)> = gw0[trigger + 1..].iter().filter(|(_, n)| !host_only(n)).collect();
    // A test fails (FAILED), or its worker's build in setup does (ERROR: another runtime's
    // worker on the poisoned context). The xfail test fails for the poison instead of its own
    // reason: pytest still counts it XFAIL.
    let bad = |o: &str| o == "FAILED" || o == "ERROR";
    let cascaded = later.iter().filter(|(o, _)| bad(o)).count();
    assert!(
        later.iter().all(|(o, _)| bad(o) || o == "XFAIL") && cascaded >= 7,
        "the op-timeout poisons the worker: every later device test fails: {gw0:?}"
    );
    let failed = 1 + cascaded;
    let tests = gw0.len();

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
    assert_eq!(s["total"], 12, "{s}");
    assert_eq!(
        s["flaky"],
        1,
        "the trigger, retried on a clean card: {s}\n{}",
        text(&cg)
    );
    assert_eq!(s["failed"], 0, "{s}");
    assert_eq!(s["passed"], 11, "every other test passed: {s}");
    assert_eq!(s["skipped"], 0, "no test skipped: {s}");
    // The lane's own health records: card 0 poisoned, force-reset, recovered; card 1 untouched.
    let health = &report["devices_health"];
    let kinds = |card: &str| -> Vec<String> {
        health[card]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e["event"].as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        kinds("0"),
        ["poisoned", "force_reset", "probe", "recovered"],
        "{health}"
    );
    assert!(kinds("1").is_empty(), "{health}");
    eprintln!("xdist: {failed} of card 0's worker's {tests} tests failed (trigger + {cascaded} cascaded); cardguard: {s}");
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

/// The card's force reset after the op-timeout is not confirmed (`force_reset_fail=1`): the
/// pytest lane writes its remaining items to the poison sink and exits 75; the dispatcher starts
/// a fresh lane on the card that runs them, as for a Rust lane. Nothing fails.
#[test]
fn an_unconfirmed_reset_sends_the_rest_to_a_fresh_pytest_lane() {
    let sb = Sandbox::new();
    let reports = sb.dir.path().join("reports");
    let cg = sb
        .command(env!("CARGO_BIN_EXE_cardguard"))
        .args([
            "pytest",
            "--platform",
            "onboard",
            "--devices",
            "0,1",
            "--no-progress",
        ])
        .args([
            "--no-config",
            "--faults",
            "dev=0:op_timeout@3;dev=0:force_reset_fail=1",
        ])
        .arg("--report-dir")
        .arg(&reports)
        .args(["--", "."])
        .output()
        .unwrap();
    assert_eq!(cg.status.code(), Some(0), "{}", text(&cg));
    let journal = std::fs::read_to_string(reports.join("journal.jsonl")).unwrap();
    let events: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |kind: &'static str| events.iter().filter(move |e| e["event"] == kind);
    assert!(
        of("lane_exited").any(|e| e["device"] == 0 && e["status"]["exited"] == 75),
        "card 0's lane escalates: {journal}"
    );
    assert!(
        of("sink_read").any(|e| e["device"] == 0 && e["selectors"].as_array().is_some_and(|s| !s.is_empty())),
        "its remaining items went to the sink: {journal}"
    );
    assert!(
        of("health").any(|e| e["record"]["event"] == "fresh_process"),
        "a fresh lane re-ran them: {journal}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("report.json")).unwrap()).unwrap();
    let s = &report["summary"];
    assert_eq!(
        (&s["failed"], &s["flaky"], &s["passed"]),
        (&0.into(), &1.into(), &11.into()),
        "{s}"
    );
}

/// The plugin's own tests (`python/tests`, pytest's pytester), on the plugin installed from the
/// copy: collection's ids and settings, the device-error declaration and its code, the classify
/// hook, an attempt judged on its own, the pool.
#[test]
fn the_plugins_own_pytest_tests_pass() {
    let sb = Sandbox::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python");
    let out = sb
        .command(&python())
        .current_dir(&dir)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("8 passed"),
        "{}",
        text(&out)
    );
}

/// The plugin's types hold: `mypy --strict` over the plugin and its tests, when the interpreter
/// has mypy (`.ci/run` installs it; without it the test says so and passes). Its cache goes to a
/// temp dir, so the repository is never written.
#[test]
fn the_plugin_passes_mypy_strict() {
    let has_mypy = Command::new(python())
        .args(["-c", "import mypy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_mypy {
        eprintln!(
            "mypy is not installed for {}: the plugin's types were not checked (.ci/run installs it)",
            python()
        );
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(python())
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python"))
        .args(["-m", "mypy", "--strict", "--cache-dir"])
        .arg(cache.path())
        .args(["cardguard_pytest", "tests"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// `cardguard pytest` of the example on cards 0-2 with `plan`: its exit code and report.
fn run_plan(plan: &str) -> (Option<i32>, serde_json::Value, String) {
    let sb = Sandbox::new();
    let reports = sb.dir.path().join("reports");
    let cg = sb
        .command(env!("CARGO_BIN_EXE_cardguard"))
        .env("ONBOARD_CARDS", "3")
        .args([
            "pytest",
            "--platform",
            "onboard",
            "--devices",
            "0,1,2",
            "--no-progress",
        ])
        .args(["--no-config", "--faults", plan, "--report-dir"])
        .arg(&reports)
        .args(["--", "."])
        .output()
        .unwrap();
    let report = std::fs::read_to_string(reports.join("report.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or_else(|e| panic!("no report ({e}): {}", text(&cg)));
    (cg.status.code(), report, text(&cg))
}

/// A card fault that kills the pytest process (`crash@2`): only its lane dies; the test is
/// retried and passes, nothing else fails.
#[test]
fn a_crash_kills_only_its_pytest_lane() {
    let (code, report, out) = run_plan("dev=0:crash@2");
    let s = &report["summary"];
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        (&s["failed"], &s["crashed"], &s["flaky"]),
        (&0.into(), &0.into(), &1.into()),
        "{s}\n{out}"
    );
}

/// A wrong answer (`corrupt@2`: the kernel's output is corrupted, the test's assert fails) is a
/// result failure: one attempt, never retried, the run fails; no other test is touched.
#[test]
fn an_assertion_failure_is_never_retried() {
    let (code, report, out) = run_plan("dev=0:corrupt@2");
    let s = &report["summary"];
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        (&s["failed"], &s["flaky"], &s["passed"]),
        (&1.into(), &0.into(), &11.into()),
        "{s}"
    );
    let failed: Vec<&serde_json::Value> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1);
    let attempts = failed[0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "never retried: {}", failed[0]);
    assert_eq!(attempts[0]["error"]["class"], "result", "{}", failed[0]);
}

/// Every attempt of the report, with its case id.
fn attempts(report: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            let id = c["id"].as_str().unwrap().to_owned();
            c["attempts"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |a| (id.clone(), a.clone()))
        })
        .collect()
}

/// A hardware fault (`sync_fail@2=507054`, HBM ECC) in a pytest lane: the test's device error
/// declares its code (`DeviceRuntimeError.code`, the default `cardguard_error_code_attr`), so
/// the attempt carries it and the dispatcher takes card 0 out at once ("needs service"): the test
/// is retried on another card and passes, and no later attempt runs on card 0.
#[test]
fn a_hardware_code_from_a_pytest_lane_takes_the_card_out_at_once() {
    // At card 0's first launch: whichever items card 0's lane is given, it makes one.
    let (code, report, out) = run_plan("dev=0:sync_fail@1=507054");
    let s = &report["summary"];
    assert_eq!(code, Some(0), "{out}");
    assert_eq!((&s["failed"], &s["flaky"]), (&0.into(), &1.into()), "{s}\n{out}");
    let all = attempts(&report);
    let (id, hit) = all
        .iter()
        .find(|(_, a)| a["outcome"] == "failed")
        .expect("one failed attempt");
    assert_eq!(hit["device"], 0, "{id}: {hit}");
    assert_eq!(
        hit["error"]["code"],
        serde_json::json!({"space": "acl", "raw": 507054}),
        "{hit}"
    );
    let later_on_0: Vec<&String> = all
        .iter()
        .filter(|(_, a)| a["device"] == 0 && a["started_ms"].as_u64() > hit["started_ms"].as_u64())
        .map(|(id, _)| id)
        .collect();
    assert!(
        later_on_0.is_empty(),
        "card 0 ran {later_on_0:?} after its hardware fault\n{out}"
    );
    assert!(out.contains("needs service"), "{out}");
}

/// A device error's card is reset and the reset proven whatever the drain says: with
/// `drain=false_negative` (the drain reports a poisoned card clean) the op-timeout's card is
/// still reset, so no later test meets its poisoned context (507899) and only the trigger is
/// retried.
#[test]
fn a_lying_drain_does_not_hide_a_poisoned_card() {
    let (code, report, out) = run_plan("dev=0:drain=false_negative;dev=0:op_timeout@2");
    let s = &report["summary"];
    assert_eq!(code, Some(0), "{out}");
    assert_eq!((&s["failed"], &s["flaky"]), (&0.into(), &1.into()), "{s}\n{out}");
    let sticky: Vec<String> = attempts(&report)
        .into_iter()
        .filter(|(_, a)| a["error"]["code"]["raw"] == 507_899)
        .map(|(id, _)| id)
        .collect();
    assert!(
        sticky.is_empty(),
        "a poisoned context was reused by {sticky:?}\n{out}"
    );
}

/// A rule that cannot fire in the example's dozen launches is listed as unfired, read from
/// `libsim_acl.so`'s card records as on `sim`.
#[test]
fn a_rule_that_never_fired_is_listed_for_pytest_lanes_too() {
    let (code, report, out) = run_plan("dev=1:op_timeout@500");
    assert_eq!(code, Some(0), "{out}");
    let unfired = report["faults_unfired"].as_array().expect("faults_unfired");
    let rules: Vec<&str> = unfired.iter().filter_map(|u| u["rule"].as_str()).collect();
    assert_eq!(rules, ["dev=1:op_timeout@500"], "{out}");
    assert!(out.contains("faults that never fired"), "{out}");
}
