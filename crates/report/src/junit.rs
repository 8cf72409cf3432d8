//! `junit.xml`: the run in the JUnit dialect nextest and Surefire write, through `quick-junit`.
//!
//! This module owns the mapping from cases to JUnit elements: one `testsuite` per class (in the
//! order classes first appear), one `testcase` per case. A flaky case is a passing testcase with a
//! `flakyFailure` (or `flakyError`) per failed attempt; a failed, timed-out or crashed case carries
//! `failure` (or `error`) for its last attempt and `rerunFailure` (or `rerunError`) for each earlier
//! failed attempt; a skipped case carries `skipped` with its reason. Infrastructure and usage errors
//! are JUnit "errors", everything else "failures". A failed attempt's captured output goes where
//! nextest puts it: the last attempt's into the testcase's `system-out` / `system-err`, an earlier
//! one's into its rerun element (a passing attempt has none). A timed-out attempt's diagnosis
//! (where it was stuck) ends its message; what could not be found out and its native stacks end
//! its description. It never derives a verdict: it
//! renders stored outcomes.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestRerun, TestSuite};

use platform_common::{Arch, FailureClass};

use super::error::ReportError;
use super::model::{Attempt, AttemptOutcome, CaseReport, Outcome, RunReport};
use crate::atomic::write_atomic_with;
use crate::summary::fault_words;

/// The JUnit file's name inside a report directory.
pub const JUNIT_XML: &str = "junit.xml";

/// Builds the JUnit report of a run.
pub fn to_junit(report: &RunReport) -> Report {
    let mut junit = Report::new(format!("cardguard-onboard-{}", report.arch.name()));
    junit.set_time(Duration::from_millis(report.duration_ms));
    // A class's suite by name: one lookup per case, whatever the number of classes. Each suite
    // (name and case count, in the order classes first appear) and each case's suite come first:
    // then each suite gets room for exactly its cases (grown by doubling, the suites of 100,000
    // cases took 37 MB, a third of the dispatcher's peak heap).
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut classes: Vec<(&str, usize)> = Vec::new();
    let suite_of: Vec<usize> = report
        .cases
        .iter()
        .map(|case| {
            let i = *index.entry(case.class.as_str()).or_insert_with(|| {
                classes.push((case.class.as_str(), 0));
                classes.len() - 1
            });
            classes[i].1 += 1;
            i
        })
        .collect();
    let mut suites: Vec<TestSuite> = classes
        .into_iter()
        .map(|(name, n)| {
            let mut suite = TestSuite::new(name);
            suite.test_cases.reserve_exact(n);
            suite
        })
        .collect();
    for (case, i) in report.cases.iter().zip(suite_of) {
        suites[i].add_test_case(test_case(report.arch, case));
    }
    for suite in &mut suites {
        let total: Duration = suite.test_cases.iter().filter_map(|c| c.time).sum();
        suite.set_time(total);
    }
    junit.add_test_suites(suites);
    junit
}

/// Renders the JUnit XML of a run.
pub fn to_junit_string(report: &RunReport) -> Result<String, ReportError> {
    to_junit(report).to_string().map_err(ReportError::Junit)
}

/// Writes `junit.xml` for `report` to `path`, replacing it atomically.
pub fn write_junit(path: &Path, report: &RunReport) -> Result<(), ReportError> {
    let junit = to_junit(report);
    write_atomic_with(path, |w| junit.serialize(w).map_err(std::io::Error::other))
}

fn test_case(arch: Arch, case: &CaseReport) -> TestCase {
    let failed: Vec<&Attempt> = case.attempts.iter().filter(|a| a.outcome.is_failure()).collect();
    let last = case
        .attempts
        .iter()
        .rev()
        .find(|a| a.outcome != AttemptOutcome::Skipped);
    let status = match case.outcome {
        Outcome::Passed => TestCaseStatus::success(),
        Outcome::Flaky => {
            let mut status = TestCaseStatus::success();
            status.add_reruns(failed.iter().map(|a| rerun(arch, case, a)));
            status
        }
        Outcome::Skipped => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(case.skip_reason.as_deref().unwrap_or("skipped"));
            status
        }
        Outcome::Failed | Outcome::TimedOut | Outcome::Crashed => match last {
            Some(a) if a.outcome.is_failure() => {
                let mut status = TestCaseStatus::non_success(kind(a));
                status
                    .set_message(message(arch, a))
                    .set_type(ty(a))
                    .set_description(description(arch, case, a));
                status.add_reruns(failed[..failed.len() - 1].iter().map(|a| rerun(arch, case, a)));
                status
            }
            // Passed last but counted as failed (--flaky-result fail).
            Some(a) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status
                    .set_message(format!(
                        "flaky: passed on attempt {} after {} failed attempt(s); counted as failed \
                         under --flaky-result fail",
                        attempt_no(case, a),
                        failed.len()
                    ))
                    .set_type("flaky");
                status.add_reruns(failed.iter().map(|a| rerun(arch, case, a)));
                status
            }
            None => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                status.set_message("no attempt ran").set_type("infrastructure");
                status
            }
        },
    };
    let mut tc = TestCase::new(case.name(), status);
    tc.set_classname(case.class.as_str());
    if let Some(a) = last {
        tc.set_time(Duration::from_millis(a.duration_ms));
        if let Some(out) = a.output.junit_stdout() {
            tc.set_system_out(out);
        }
        if let Some(err) = a.output.junit_stderr() {
            tc.set_system_err(err);
        }
    }
    tc
}

fn kind(a: &Attempt) -> NonSuccessKind {
    match a.error.as_ref().map(|e| e.class) {
        Some(FailureClass::Infrastructure | FailureClass::Usage) => NonSuccessKind::Error,
        _ => NonSuccessKind::Failure,
    }
}

fn ty(a: &Attempt) -> String {
    match &a.error {
        Some(e) => format!("{}: {}", a.outcome, e.class),
        None => a.outcome.to_string(),
    }
}

fn message(arch: Arch, a: &Attempt) -> String {
    let mut m = match &a.error {
        // The fault's kind first, as the console says it (`op-timeout (507000 at stream sync): `).
        Some(e) => match e.code {
            Some(code) => format!("{}: {e}", fault_words(arch, e.call, code)),
            None => e.to_string(),
        },
        None => a.outcome.to_string(),
    };
    if let Some(d) = &a.output.diagnostics {
        m.push_str("; ");
        m.push_str(&d.summary());
    }
    m
}

/// A timed-out attempt's diagnosis for the description: what could not be found out, and the
/// native stacks.
fn diagnosis(a: &Attempt) -> String {
    let Some(d) = &a.output.diagnostics else {
        return String::new();
    };
    let mut s = String::new();
    for note in &d.notes {
        s.push('\n');
        s.push_str(note);
    }
    if let Some(stacks) = &d.stacks {
        let tool = d.stack_tool.as_deref().unwrap_or("stack tool");
        s.push_str(&format!("\nnative stacks of the lane ({tool}):\n{stacks}"));
    }
    s
}

fn attempt_no(case: &CaseReport, a: &Attempt) -> usize {
    case.attempts
        .iter()
        .position(|x| std::ptr::eq(x, a))
        .map_or(0, |i| i + 1)
}

fn description(arch: Arch, case: &CaseReport, a: &Attempt) -> String {
    let card = a
        .device
        .map_or_else(|| "no card".to_owned(), |d| format!("card {d}"));
    let pid = a.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
    format!(
        "attempt {} of {} on {card}{pid}: {} after {} ms\n{}{}",
        attempt_no(case, a),
        case.attempts.len(),
        a.outcome,
        a.duration_ms,
        message(arch, a),
        diagnosis(a)
    )
}

fn rerun(arch: Arch, case: &CaseReport, a: &Attempt) -> TestRerun {
    let mut r = TestRerun::new(kind(a));
    r.set_time(Duration::from_millis(a.duration_ms))
        .set_message(message(arch, a))
        .set_type(ty(a))
        .set_description(description(arch, case, a));
    if let Some(out) = a.output.junit_stdout() {
        r.set_system_out(out);
    }
    if let Some(err) = a.output.junit_stderr() {
        r.set_system_err(err);
    }
    r
}
