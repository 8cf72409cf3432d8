//! `--platform onboard` through the `acl` driver, with `ONBOARD_ACL_LIB` pointing at
//! `libsim_acl.so` (the CANN C ABI with the simulated card behind it): the built-in suite with a
//! fault plan gives the same summary and the same kinds of health events as `--platform sim` with
//! the same plan, and the report names the acl driver and the library it loaded. A missing, wrong
//! or incomplete library stops the run at once with exit 2 and one line naming what is wrong.
//!
//! The library is built by `cardguard_test_support::locate::built_library` (a `cargo build -p sim-acl` in this
//! test binary's target directory); every setting reaches the suite binary through its own
//! environment, never this process's.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use cardguard_test_support::acl_fixtures::{compile_c_library, loaded_libc};
use common::*;
use platform_common::driver::DriverKind;
use runner::report::model::{Platform, RunReport};

/// Timeouts valid for both profiles (real cards also need stream-sync > scheduler + 1500 ms).
const TIMEOUTS: [(&str, &str); 3] = [
    ("ONBOARD_SCHEDULER_TIMEOUT_MS", "20"),
    ("ONBOARD_OP_EXECUTE_TIMEOUT_US", "60000"),
    ("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "1600"),
];

fn sim_acl() -> PathBuf {
    cardguard_test_support::locate::built_library().unwrap()
}

/// The suite binary for `arch` on `platform`, in the sandbox, with the shared timeouts, the acl
/// variables cleared, and `args`.
fn suite(sb: &Sandbox, arch: &str, platform: &str, args: &[&str]) -> Command {
    let mut c = sb.bare();
    for (k, v) in TIMEOUTS {
        c.env(k, v);
    }
    c.env("ONBOARD_CARDS", sb.cards.to_string())
        .env("ONBOARD_SIM_ARCH", arch)
        .env_remove("ONBOARD_ACL_LIB")
        .env_remove("ASCEND_HOME_PATH")
        .env_remove("ASCEND_TOOLKIT_HOME")
        .args([
            "--arch",
            arch,
            "--platform",
            platform,
            "--no-progress",
            "--report-dir",
        ])
        .arg(sb.report_dir())
        .args(args);
    c
}

fn run(sb: &Sandbox, mut cmd: Command) -> Run {
    let out = cmd.output().unwrap();
    sb.finish(out)
}

/// A `--platform onboard` run of `args` with `ONBOARD_ACL_LIB` set to `lib`.
fn run_onboard(sb: &Sandbox, lib: &Path, args: &[&str]) -> Run {
    let mut cmd = suite(sb, "a5", "onboard", args);
    cmd.env("ONBOARD_ACL_LIB", lib);
    run(sb, cmd)
}

/// Every health event kind of the run, over all cards.
fn kinds(r: &RunReport) -> BTreeSet<String> {
    r.devices_health
        .values()
        .flatten()
        .map(|h| h.name().to_owned())
        .collect()
}

/// Exit 2 with exactly one line on stderr, which contains every one of `parts`.
fn expect_one_line_usage_error(run: &Run, parts: &[&str]) {
    run.expect_code(2);
    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "not one line:\n{}", run.dump());
    for p in parts {
        assert!(lines[0].contains(p), "{p:?} missing from {:?}", lines[0]);
    }
    assert!(
        !run.report_dir.join("report.json").exists(),
        "a refused run wrote a report"
    );
}

/// `--case` selectors for every class of the built-in suite but `MultiCard` (whose own tests are
/// [`a_multi_card_case_matches_the_sim_platform`] and
/// [`a_fault_on_the_second_card_of_a_multi_card_case_matches_the_sim_platform`]).
fn single_card_classes(sb: &Sandbox) -> Vec<String> {
    let classes: BTreeSet<String> = list(sb, "a5", &[])
        .iter()
        .filter_map(|id| id.split("::").next().map(str::to_owned))
        .filter(|c| c != "MultiCard")
        .collect();
    assert!(classes.len() > 5, "{classes:?}");
    classes
        .into_iter()
        .flat_map(|c| ["--case".to_owned(), c])
        .collect()
}

#[test]
fn the_built_in_suite_with_faults_matches_the_sim_platform() {
    let lib = sim_acl();
    let plan = "dev=0:op_timeout@3;dev=1:launch_fail@2";
    let selectors = single_card_classes(&Sandbox::new());
    let mut args = vec!["--devices", "0,1", "--faults", plan];
    args.extend(selectors.iter().map(String::as_str));

    let sim_box = Sandbox::new();
    let sim = run(&sim_box, suite(&sim_box, "a5", "sim", &args));
    sim.expect_code(0);
    let sim_report = sim.report();

    let acl_box = Sandbox::new();
    let acl = run_onboard(&acl_box, &lib, &args);
    acl.expect_code(0);
    let acl_report = acl.report();

    assert_consistent(&acl_report);
    assert_eq!(acl_report.platform, Platform::Onboard);
    assert_eq!(acl_report.driver.kind, DriverKind::Acl);
    assert_eq!(acl_report.driver.library, Some(vec![lib.display().to_string()]));
    assert_eq!(sim_report.driver.kind, DriverKind::Sim);

    assert_eq!(acl_report.summary, sim_report.summary, "{}", acl.dump());
    assert_eq!(
        acl_report.summary.flaky,
        2,
        "both faults fired and were retried: {}",
        acl.dump()
    );
    let sim_kinds = kinds(&sim_report);
    assert_eq!(kinds(&acl_report), sim_kinds);
    for k in ["poisoned", "force_reset", "recovered"] {
        assert!(sim_kinds.contains(k), "{k:?} missing: {sim_kinds:?}");
    }
    // Every case ended the same way on both platforms.
    for c in &sim_report.cases {
        assert_eq!(outcome(&acl_report, &c.id), c.outcome, "{}", c.id);
    }
    // Through the C ABI a device error's attempt carries what the runtime said of its call;
    // the in-process simulator says nothing.
    let said = |r: &RunReport| -> Vec<(String, String)> {
        r.cases
            .iter()
            .flat_map(|c| &c.attempts)
            .filter_map(|a| a.error.as_ref())
            .filter_map(|e| Some((e.call?.to_string(), e.runtime_message.clone()?)))
            .collect()
    };
    let acl_said = said(&acl_report);
    assert!(!acl_said.is_empty(), "no runtime message: {}", acl.dump());
    for (call, text) in &acl_said {
        assert!(
            text.starts_with("EE9999:") && text.contains(call.as_str()),
            "{call}: {text}"
        );
    }
    assert!(said(&sim_report).is_empty());
}

/// CANN (and libsim_acl.so, which follows it) keeps one current device per thread, where the
/// in-process simulator keeps one per driver value: the multi-card lane drives each card from a
/// thread of its own, so the case passes through the C ABI as it does on the simulator. (Driven
/// from one thread, the first card's launch acts on the second card's context and is refused.)
#[test]
fn a_multi_card_case_matches_the_sim_platform() {
    let lib = sim_acl();
    let args = ["--devices", "0,1", "--case", "MultiCard"];
    let sim_box = Sandbox::new();
    let sim = run(&sim_box, suite(&sim_box, "a5", "sim", &args));
    sim.expect_code(0);
    let acl_box = Sandbox::new();
    let acl = run_onboard(&acl_box, &lib, &args);
    assert_eq!(acl.code, sim.code, "{}", acl.dump());
    let (sim_report, acl_report) = (sim.report(), acl.report());
    assert_consistent(&acl_report);
    assert_eq!(acl_report.summary, sim_report.summary, "{}", acl.dump());
    assert_eq!(acl_report.summary.passed, 1, "{}", acl.dump());
    assert_eq!(acl_report.summary.total, 1, "{}", acl.dump());
}

/// A device fault on the second card of a multi-card case (whose worker lives on the lane's
/// second thread) is contained as on the simulator: the same typed failure for the attempt, the
/// same health events, on that card only (poisoned, force reset with that card's lease,
/// recovered), and the retry passes.
#[test]
fn a_fault_on_the_second_card_of_a_multi_card_case_matches_the_sim_platform() {
    let lib = sim_acl();
    let args = [
        "--devices",
        "0,1",
        "--case",
        "MultiCard",
        "--faults",
        "dev=1:launch_fail@1",
    ];
    let sim_box = Sandbox::new();
    let sim = run(&sim_box, suite(&sim_box, "a5", "sim", &args));
    sim.expect_code(0);
    let acl_box = Sandbox::new();
    let acl = run_onboard(&acl_box, &lib, &args);
    acl.expect_code(0);
    let (sim_report, acl_report) = (sim.report(), acl.report());
    assert_consistent(&acl_report);
    assert_eq!(acl_report.summary, sim_report.summary, "{}", acl.dump());
    assert_eq!(acl_report.summary.flaky, 1, "{}", acl.dump());

    // The failed attempt: the same class, call and code on both platforms.
    let first_error = |r: &RunReport| {
        let e = r.cases[0].attempts[0]
            .error
            .clone()
            .expect("the first attempt failed");
        (e.class, e.call, e.code)
    };
    assert_eq!(
        first_error(&acl_report),
        first_error(&sim_report),
        "{}",
        acl.dump()
    );
    assert_eq!(
        first_error(&acl_report).0,
        platform_common::FailureClass::DeviceRuntime
    );

    // The same health events, card by card; the faulty card's only.
    let by_card = |r: &RunReport| -> Vec<(String, BTreeSet<String>)> {
        r.devices_health
            .iter()
            .map(|(card, hs)| (card.clone(), hs.iter().map(|h| h.name().to_owned()).collect()))
            .collect()
    };
    assert_eq!(by_card(&acl_report), by_card(&sim_report), "{}", acl.dump());
    let card1 = &by_card(&acl_report)
        .into_iter()
        .find(|(c, _)| c == "1")
        .expect("card 1 in the report")
        .1;
    for k in ["poisoned", "force_reset", "recovered"] {
        assert!(card1.iter().any(|n| n == k), "{k:?} missing: {card1:?}");
    }
    assert!(
        acl_report.devices_health.get("0").is_none_or(Vec::is_empty),
        "card 0 had no fault: {}",
        acl.dump()
    );
}

#[test]
fn without_cann_the_run_stops_naming_the_search_path() {
    let sb = Sandbox::new();
    let home = sb.dir.path().join("no-cann");
    let mut cmd = suite(&sb, "a5", "onboard", &["--devices", "0"]);
    cmd.env("ASCEND_HOME_PATH", &home);
    let r = run(&sb, cmd);
    let first_dir = home.join("lib64");
    expect_one_line_usage_error(
        &r,
        &[
            "libascendcl.so",
            &first_dir.display().to_string(),
            "/usr/local/Ascend/driver/lib64",
        ],
    );
}

#[test]
fn a_missing_library_file_is_named() {
    let sb = Sandbox::new();
    let missing = sb.dir.path().join("libascendcl.so");
    let r = run_onboard(&sb, &missing, &["--devices", "0"]);
    expect_one_line_usage_error(&r, &["ONBOARD_ACL_LIB", &missing.display().to_string()]);
}

#[test]
fn a_file_that_is_not_a_library_is_named() {
    let sb = Sandbox::new();
    let bogus = sb.dir.path().join("libascendcl.so");
    std::fs::write(&bogus, "not an ELF file\n").unwrap();
    let r = run_onboard(&sb, &bogus, &["--devices", "0"]);
    expect_one_line_usage_error(&r, &["cannot load", &bogus.display().to_string()]);
}

#[test]
fn a_library_that_is_not_cann_is_named() {
    let sb = Sandbox::new();
    let libc = libc_path();
    let r = run_onboard(&sb, &libc, &["--devices", "0"]);
    expect_one_line_usage_error(
        &r,
        &["not a CANN runtime", "aclInit", &libc.display().to_string()],
    );
}

#[test]
fn a_library_missing_symbols_names_them() {
    let sb = Sandbox::new();
    let lib = partial_cann(sb.dir.path());
    let r = run_onboard(&sb, &lib, &["--devices", "0"]);
    expect_one_line_usage_error(
        &r,
        &[
            &lib.display().to_string(),
            "aclrtResetDeviceForce",
            "rtKernelLaunchWithHandleV2",
            // The run is a5's: its own HAL symbol, not a2a3's.
            "halResMap",
        ],
    );
    assert!(!r.stderr.contains("halMemCtl"), "{}", r.dump());
}

#[test]
fn a_fault_plan_on_a_cann_without_fault_injection_is_refused() {
    let sb = Sandbox::new();
    // Every symbol an a5 run needs: the shared ones and a5's register mapping.
    let stubs: String = platform_common::acl::REQUIRED_SYMBOLS
        .iter()
        .chain(cardguard_arches::entry(platform_common::Arch::A5).hal.required)
        .map(|s| format!("int {s}(void) {{ return 0; }}\n"))
        .collect();
    let lib = compile(sb.dir.path(), "libstubcann.so", &stubs);
    let r = run_onboard(&sb, &lib, &["--devices", "0", "--faults", "dev=0:crash@1"]);
    expect_one_line_usage_error(&r, &["--faults", "libsim_acl.so", &lib.display().to_string()]);
}

/// A shared object exporting only `aclInit` (compiled here from C).
fn partial_cann(dir: &Path) -> PathBuf {
    compile(
        dir,
        "libpartial.so",
        "int aclInit(const char *c) { (void)c; return 0; }\n",
    )
}

/// Compiles the C `source` into `dir/name`.
fn compile(dir: &Path, name: &str, source: &str) -> PathBuf {
    compile_c_library(dir, name, source).unwrap()
}

/// The C library this test process has loaded: a real shared object that is not CANN.
fn libc_path() -> PathBuf {
    loaded_libc().expect("libc is mapped")
}
