//! `cargo xtask onboard --package NAME`: the example suite crate (`examples/onboard-suite`) runs
//! through the xtask binary as the built-in suite does, clean and under a fault plan, and leaves
//! the same report files. Every setting (sim root, lock dir, report dir, temp dir, short sim
//! timeouts) is given to the child, never to this process's environment.

use std::path::Path;
use std::process::{Command, Output};

use cardguard_report::model::{Outcome, RunReport};

/// `cargo xtask onboard ARGS` in a sandbox of `dir`, reports in `dir/report-<tag>`.
fn onboard(dir: &Path, tag: &str, args: &[&str]) -> (Output, std::path::PathBuf) {
    let report = dir.join(format!("report-{tag}"));
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("onboard")
        .args(args)
        .args(["--platform", "sim", "--no-progress", "--report-dir"])
        .arg(&report)
        .env("ONBOARD_SIM_ROOT", dir.join("sim"))
        .env("ONBOARD_LOCK_DIR", dir.join("locks"))
        .env("ONBOARD_SIM_CARDS", "2")
        .env("ONBOARD_SCHEDULER_TIMEOUT_MS", "20")
        .env("ONBOARD_OP_EXECUTE_TIMEOUT_US", "60000")
        .env("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "250")
        .env("TMPDIR", &tmp)
        .env_remove("ONBOARD_SIM_FAULTS")
        .env_remove("ONBOARD_KERNEL_DIR")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    (out, report)
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn report(dir: &Path) -> RunReport {
    cardguard_report::read_report(&dir.join("report.json")).unwrap()
}

#[test]
fn the_example_suite_runs_clean_with_the_built_in_suites_report_files() {
    let dir = tempfile::tempdir().unwrap();
    let (out, example) = onboard(
        dir.path(),
        "example",
        &["--package", "onboard-suite", "--arch", "a5"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The build shows cargo's own progress (never `--quiet`: a cold build is minutes).
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Finished `dev` profile"),
        "{}",
        text(&out)
    );
    let r = report(&example);
    assert_eq!(r.summary.total, 7, "{}", text(&out));
    assert_eq!(r.summary.passed, 7, "{}", text(&out));
    for id in [
        "Chained::scale_then_add",
        "Chained::scale_then_add_large",
        "Invariants::softmax_rows",
        "Invariants::scale_identity",
        "Calibrated::offset_zero",
        "Calibrated::offset_ten",
        "BoundsCheck::short_buffer",
    ] {
        let c = r
            .cases
            .iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("no {id}"));
        assert_eq!(c.outcome, Outcome::Passed, "{id}");
    }
    let (out, builtin) = onboard(
        dir.path(),
        "builtin",
        &["--arch", "a5", "--case", "VectorAdd::single_element"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Finished `dev` profile"),
        "{}",
        text(&out)
    );
    assert_eq!(files(&example), files(&builtin));
    assert_eq!(
        files(&example),
        ["journal.jsonl", "junit.xml", "report.json", "timeline.svg"]
    );
}

#[test]
fn the_example_suite_contains_a_fault_and_selects_by_tag() {
    let dir = tempfile::tempdir().unwrap();
    let (out, rep) = onboard(
        dir.path(),
        "faulted",
        &[
            "--arch",
            "a2a3",
            "--devices",
            "0",
            "--package",
            "onboard-suite",
            "--exclude",
            "tag:slow",
            "--faults",
            "dev=0:launch_fail@1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report(&rep);
    assert_eq!(r.summary.total, 6, "the slow case is excluded: {}", text(&out));
    assert_eq!(r.summary.flaky, 1, "{}", text(&out));
    assert_eq!(r.summary.passed, 5);
    let card = &r.devices_health["0"];
    assert!(card.iter().any(|h| h.name() == "force_reset"), "{card:?}");
    assert!(card.iter().any(|h| h.name() == "recovered"), "{card:?}");
    let unknown = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["onboard", "--package", "no-such-package", "--arch", "a5"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no-such-package"));
}
