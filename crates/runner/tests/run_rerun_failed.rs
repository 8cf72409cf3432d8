//! Rerun what failed (issue 9, item 5): after a faulted run, `--rerun-failed latest` selects
//! exactly the cases that ended `failed`, `timed_out`, `crashed` or `flaky` in it (checked with
//! `--list` and with a run), the other selectors filter further, a case the suite no longer has
//! is a warning, and a report of another arch or a dir without a report is a one-line error
//! (exit 2). `latest` is looked for under the run's default report dir: the sandbox points the
//! suite binary's `CARGO_TARGET_DIR` at a dir of its own (on the child's command only).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use runner::report::model::{Outcome, RunReport};

const CASES: [&str; 2] = ["VectorAdd", "Softmax"];

/// The sandbox's own cargo target dir: default report dirs go under `onboard/<arch>/`.
fn target(sb: &Sandbox) -> PathBuf {
    sb.dir.path().join("target")
}

/// The suite binary on sim with the sandbox's target dir and no `--report-dir`.
fn cmd(sb: &Sandbox, arch: &str, args: &[&str]) -> Command {
    let mut c = sb.bare();
    c.env("CARGO_TARGET_DIR", target(sb))
        .args([
            "--arch",
            arch,
            "--platform",
            "sim",
            "--no-progress",
            "--devices",
            "0",
        ])
        .args(args);
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The ids a `--list` prints.
fn listed(out: &Output) -> Vec<String> {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// The run dirs under the sandbox's default report dir of `arch`.
fn runs(sb: &Sandbox, arch: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(target(sb).join("onboard").join(arch))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn read(dir: &Path) -> RunReport {
    runner::report::read_report(&dir.join("report.json")).unwrap()
}

const RERUN: [Outcome; 4] = [
    Outcome::Failed,
    Outcome::TimedOut,
    Outcome::Crashed,
    Outcome::Flaky,
];

#[test]
fn rerun_failed_latest_selects_exactly_the_cases_the_last_run_did_not_pass() {
    let sb = Sandbox::new();
    let all = list(&sb, "a5", &selectors(&CASES));
    // One card: the 2nd case launch gives a wrong result (failed, not retried), the 5th fails with
    // a device fault (retried, flaky).
    let faulted = cmd(&sb, "a5", &selectors(&CASES))
        .args(["--faults", "dev=0:corrupt@2;dev=0:launch_fail@5"])
        .output()
        .unwrap();
    assert_eq!(faulted.status.code(), Some(1), "{}", text(&faulted.stderr));
    let first_dir = runs(&sb, "a5").pop().unwrap();
    let first = read(&first_dir);
    let bad: Vec<String> = first
        .cases
        .iter()
        .filter(|c| RERUN.contains(&c.outcome))
        .map(|c| c.id.clone())
        .collect();
    let outcomes: Vec<Outcome> = first
        .cases
        .iter()
        .filter(|c| bad.contains(&c.id))
        .map(|c| c.outcome)
        .collect();
    assert!(
        outcomes.contains(&Outcome::Failed) && outcomes.contains(&Outcome::Flaky),
        "the faulted run has a failed and a flaky case: {outcomes:?}"
    );
    assert!(bad.len() < all.len(), "and passed ones: {bad:?}");

    // --list: exactly those, in hand-out order; by `latest` or by the run's dir.
    let mut want = bad.clone();
    want.sort_by_key(|id| all.iter().position(|a| a == id));
    let latest = listed(
        &cmd(&sb, "a5", &["--list", "--rerun-failed", "latest"])
            .output()
            .unwrap(),
    );
    assert_eq!(latest, want);
    let dir = first_dir.to_str().unwrap();
    let by_dir = listed(
        &cmd(&sb, "a5", &["--list", "--rerun-failed", dir])
            .output()
            .unwrap(),
    );
    assert_eq!(by_dir, want);
    // Every other selector filters further.
    let one = listed(
        &cmd(
            &sb,
            "a5",
            &["--list", "--rerun-failed", "latest", "--case", &want[0]],
        )
        .output()
        .unwrap(),
    );
    assert_eq!(one, [want[0].clone()]);

    // A run: exactly those cases again, and without the faults they pass.
    let rerun = cmd(&sb, "a5", &["--rerun-failed", "latest"]).output().unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{}", text(&rerun.stderr));
    let second_dir = runs(&sb, "a5")
        .into_iter()
        .find(|d| *d != first_dir)
        .expect("the re-run's own report dir");
    let second = read(&second_dir);
    let ran: Vec<&str> = second.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ran, want);
    assert!(
        second.cases.iter().all(|c| c.outcome == Outcome::Passed),
        "{ran:?}"
    );

    // The newest run now passed everything: nothing is left to re-run (exit 0, said so).
    let none = cmd(&sb, "a5", &["--rerun-failed", "latest"]).output().unwrap();
    assert_eq!(none.status.code(), Some(0));
    assert!(
        text(&none.stderr).contains("--rerun-failed: nothing to re-run: run "),
        "{}",
        text(&none.stderr)
    );
    assert_eq!(runs(&sb, "a5").len(), 2, "no report of a run that did not run");
}

#[test]
fn rerun_failed_warns_of_gone_cases_and_refuses_other_arches_and_missing_reports() {
    let sb = Sandbox::new();
    let faulted = cmd(&sb, "a5", &["--case", "VectorAdd", "--faults", "dev=0:corrupt@1"])
        .output()
        .unwrap();
    assert_eq!(faulted.status.code(), Some(1), "{}", text(&faulted.stderr));
    let dir = runs(&sb, "a5").pop().unwrap();
    let report = read(&dir);
    let failed = report
        .cases
        .iter()
        .find(|c| c.outcome == Outcome::Failed)
        .unwrap()
        .id
        .clone();

    // A case of the report that the suite no longer has: a warning, the others still selected.
    let edited = sb.dir.path().join("edited");
    std::fs::create_dir(&edited).unwrap();
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let mut gone = json["cases"][0].clone();
    gone["id"] = "Gone::case".into();
    gone["outcome"] = "failed".into();
    json["cases"].as_array_mut().unwrap().push(gone);
    std::fs::write(edited.join("report.json"), serde_json::to_vec(&json).unwrap()).unwrap();
    let out = cmd(&sb, "a5", &["--list", "--rerun-failed", edited.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(listed(&out), [failed]);
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: --rerun-failed: Gone::case (not passed in run ")
            && err.contains("is no case of the suite any more"),
        "{err}"
    );

    // A report of another arch: exit 2 naming both.
    let out = cmd(&sb, "a2a3", &["--list", "--rerun-failed", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("is a run of arch a5, this run is of arch a2a3"),
        "{err}"
    );

    // No report there, and no run of the arch for `latest`: exit 2 naming the path.
    let empty = sb.dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = cmd(&sb, "a5", &["--rerun-failed", empty.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "--rerun-failed {}: no report.json there",
            empty.display()
        )),
        "{err}"
    );
    let out = cmd(&sb, "a2a3", &["--rerun-failed", "latest"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--rerun-failed latest: no run of a2a3 under ")
            && err.contains(&target(&sb).join("onboard").join("a2a3").display().to_string()),
        "{err}"
    );
}
