//! Stress runs (`--stress-count N`, `--stress-duration SECS`): the selection run again and again on
//! the cards the run holds, to hunt an intermittent fault (nextest's stress mode, upstream's
//! `--rounds`).
//!
//! Each iteration is a full run of the dispatcher with its own report directory
//! (`<report dir>/iteration-K/`: its journal, `report.json`, `junit.xml` and timeline), on the same
//! leases, one after another; the platform's run is started once, before the first, so a fault
//! plan's counters go on across iterations (a rule `@3` fires once in the whole stress run). The
//! report directory itself gets the joined `report.json` and `junit.xml`
//! ([`join_iterations`](crate::report::model::join_iterations)). A new iteration starts while the
//! count is not reached and the duration has not passed, and none after an interrupted one.
//!
//! This file owns the loop and the joined files. It never decides a verdict (each iteration's
//! dispatcher does) and never parses a flag (`config` does).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::case::Suite;
use crate::dispatch::{self, DispatchError, RunOutcome, RunPlan};
use crate::output;
use crate::report::model::{join_iterations, Summary};
use crate::report::{ReportDir, ReportError};

/// When a stress run stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stress {
    /// After this many iterations.
    pub count: Option<u32>,
    /// No iteration starts once this long has passed since the first started.
    pub duration: Option<Duration>,
}

impl Stress {
    /// The stress run the settings ask for; `None` without either.
    pub fn of(count: Option<u32>, duration: Option<Duration>) -> Option<Self> {
        (count.is_some() || duration.is_some()).then_some(Self { count, duration })
    }

    /// Whether another iteration starts after `done` of them, `elapsed` since the first began.
    pub fn go_on(&self, done: u32, elapsed: Duration) -> bool {
        self.count.map_or(true, |n| done < n) && self.duration.map_or(true, |d| elapsed < d)
    }

    /// How the progress line names the bound: `of 5`, `for 60 s`, or both.
    fn bound(&self) -> String {
        let count = self.count.map(|n| format!("of {n}"));
        let secs = self.duration.map(|d| format!("for {} s", d.as_secs_f64()));
        [count, secs].into_iter().flatten().collect::<Vec<_>>().join(", ")
    }
}

/// The directory name of iteration `k` (from 1) in the stress run's report directory.
pub fn iteration_dir(k: u32) -> String {
    format!("iteration-{k}")
}

/// Runs `plan` once, or as the stress run `stress` asks; the outcome's leases are still held.
pub fn run(plan: RunPlan, stress: Option<Stress>, suite: &Suite) -> Result<RunOutcome, DispatchError> {
    match stress {
        None => dispatch::run(plan, suite),
        Some(s) => iterate(plan, s, suite),
    }
}

fn iterate(mut plan: RunPlan, stress: Stress, suite: &Suite) -> Result<RunOutcome, DispatchError> {
    plan.report_dir.clear()?;
    let top = plan.report_dir.path().to_owned();
    let mut leases = std::mem::take(&mut plan.leases);
    let started = Instant::now();
    let mut reports = Vec::new();
    let mut dirs = Vec::new();
    let mut leases_lost = Vec::new();
    let mut write_error = None;
    let mut stats;
    let mut k = 0;
    loop {
        k += 1;
        let name = iteration_dir(k);
        let dir = ReportDir::open(&top.join(&name), &plan.run_id)?;
        output::err(format_args!("stress: iteration {k} ({})", stress.bound()));
        let outcome = dispatch::run(next_plan(&plan, leases, dir), suite)?;
        leases = outcome.leases;
        leases_lost.extend(outcome.leases_lost);
        write_error = write_error.or(outcome.write_error);
        stats = outcome.stats;
        output::err(format_args!(
            "stress: iteration {k}: {}",
            counts(&outcome.report.summary)
        ));
        let interrupted = outcome.report.interrupted.is_some();
        reports.push(outcome.report);
        dirs.push(name);
        if interrupted || !stress.go_on(k, started.elapsed()) {
            break;
        }
    }
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let report = join_iterations(&reports, &dirs, ms).expect("a stress run has an iteration");
    if let Err(e) = write_joined(&top, &report) {
        write_error = write_error.or(Some(e));
    }
    drop(plan.report_dir);
    Ok(RunOutcome {
        report,
        stats,
        write_error,
        leases_lost,
        leases,
    })
}

/// The next iteration's plan: the stress run's, on `leases`, reporting into `dir`.
fn next_plan(t: &RunPlan, leases: Vec<platform_common::DeviceLease>, dir: ReportDir) -> RunPlan {
    RunPlan {
        arch: t.arch,
        platform: t.platform.clone(),
        leases,
        selection: t.selection.clone(),
        retries: t.retries,
        flaky_result: t.flaky_result,
        case_timeout: t.case_timeout,
        init_timeout: t.init_timeout,
        overrides: t.overrides.clone(),
        report_dir: dir,
        run_id: t.run_id.clone(),
        progress: t.progress,
        command: t.command.clone(),
        faults: t.faults.clone(),
        missing_kernels: t.missing_kernels.clone(),
        isolation: t.isolation,
        stack_tool_path: t.stack_tool_path.clone(),
        estimates: t.estimates.clone(),
    }
}

/// `report.json` and `junit.xml` of the joined iterations.
fn write_joined(dir: &Path, report: &crate::report::model::RunReport) -> Result<(), ReportError> {
    crate::report::write_report(&dir.join(crate::report::REPORT_JSON), report)?;
    crate::report::write_junit(&dir.join(crate::report::JUNIT_XML), report)
}

/// `12 passed, 1 failed` (the non-zero counts).
fn counts(s: &Summary) -> String {
    let parts: Vec<String> = crate::report::model::Outcome::ALL
        .iter()
        .filter(|o| s.count(**o) > 0)
        .map(|o| format!("{} {o}", s.count(*o)))
        .collect();
    if parts.is_empty() {
        "no case".to_owned()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stress_run_stops_at_its_count_or_its_duration_whichever_first() {
        assert_eq!(Stress::of(None, None), None);
        let n = Stress::of(Some(3), None).unwrap();
        assert!(n.go_on(2, Duration::from_secs(1000)));
        assert!(!n.go_on(3, Duration::ZERO));
        let d = Stress::of(None, Some(Duration::from_secs(10))).unwrap();
        assert!(d.go_on(1000, Duration::from_secs(9)));
        assert!(!d.go_on(1, Duration::from_secs(10)));
        let both = Stress::of(Some(5), Some(Duration::from_secs(10))).unwrap();
        assert!(!both.go_on(5, Duration::ZERO));
        assert!(!both.go_on(1, Duration::from_secs(11)));
        assert_eq!(both.bound(), "of 5, for 10 s");
        assert_eq!(iteration_dir(2), "iteration-2");
    }

    #[test]
    fn counts_name_the_non_zero_outcomes() {
        let mut s = Summary::default();
        assert_eq!(counts(&s), "no case");
        s.add(crate::report::model::Outcome::Passed);
        s.add(crate::report::model::Outcome::Passed);
        s.add(crate::report::model::Outcome::Failed);
        assert_eq!(counts(&s), "2 passed, 1 failed");
    }
}
