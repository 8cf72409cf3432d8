//! A stress run (`--stress-count N`, `--stress-duration SECS`): the same selection run again and
//! again on the same cards, each iteration a full run of its own, joined into one report.
//!
//! This file owns the join ([`join_iterations`]; `report.json`'s `stress` object is `run`'s): every
//! case once, with the verdict of its worst iteration and that iteration's attempts (so the
//! verdict rule still derives it from them), and per case its verdict in every iteration, how
//! often it failed and on which cards its failed attempts ran. It never runs an iteration (the
//! runner does) and never writes a file.

use std::collections::BTreeMap;

use super::attempt::CaseReport;
use super::outcome::Outcome;
use super::run::{RunReport, StressCase, StressIteration, StressReport, Summary};

/// How bad a verdict is, for the worst of a case's iterations: crashed, timed out, failed, flaky,
/// passed, skipped (a case skipped in one iteration and run in another is the run's verdict).
fn severity(o: Outcome) -> u8 {
    match o {
        Outcome::Crashed => 5,
        Outcome::TimedOut => 4,
        Outcome::Failed => 3,
        Outcome::Flaky => 2,
        Outcome::Passed => 1,
        Outcome::Skipped => 0,
    }
}

/// Joins a stress run's iterations (each a full run's report of the same selection, in order;
/// `dirs` their report directories relative to the stress run's) into one report: the first
/// iteration's identity, the whole wall time `duration_ms`, every case with its worst
/// iteration's verdict and attempts (the first such iteration), every card's health events of
/// every iteration in order, the last iteration's interruption and unfired faults (the fault
/// plan's counters run across iterations), and the `stress` object. `None` for no iteration.
pub fn join_iterations(iterations: &[RunReport], dirs: &[String], duration_ms: u64) -> Option<RunReport> {
    let first = iterations.first()?;
    let last = iterations.last()?;
    let mut cases: Vec<CaseReport> = Vec::with_capacity(first.cases.len());
    let mut stress_cases = Vec::with_capacity(first.cases.len());
    for (i, c) in first.cases.iter().enumerate() {
        let mut worst: &CaseReport = c;
        let mut sc = StressCase {
            id: c.id.clone(),
            outcomes: Vec::with_capacity(iterations.len()),
            failed: 0,
            flaky: 0,
            devices: BTreeMap::new(),
        };
        for r in iterations {
            // Every iteration runs the same selection; a case it lacks is none of its own.
            let Some(it) = r.cases.get(i).filter(|x| x.id == c.id) else {
                continue;
            };
            sc.outcomes.push(it.outcome);
            sc.failed += u32::from(it.outcome.is_failure());
            sc.flaky += u32::from(it.outcome == Outcome::Flaky);
            for a in &it.attempts {
                if a.outcome.is_failure() {
                    let card = a.device.map_or_else(|| "none".to_owned(), |d| d.to_string());
                    *sc.devices.entry(card).or_default() += 1;
                }
            }
            if severity(it.outcome) > severity(worst.outcome) {
                worst = it;
            }
        }
        cases.push(worst.clone());
        stress_cases.push(sc);
    }
    let mut devices_health: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for r in iterations {
        for (card, records) in &r.devices_health {
            devices_health
                .entry(card.clone())
                .or_default()
                .extend(records.iter().cloned());
        }
    }
    let stress = StressReport {
        iterations: iterations
            .iter()
            .zip(dirs)
            .enumerate()
            .map(|(n, (r, dir))| StressIteration {
                iteration: n as u32 + 1,
                report_dir: dir.clone(),
                started_at: r.started_at.clone(),
                duration_ms: r.duration_ms,
                summary: r.summary,
            })
            .collect(),
        cases: stress_cases,
    };
    Some(RunReport {
        arch: first.arch,
        platform: first.platform,
        driver: first.driver.clone(),
        devices: first.devices.clone(),
        devices_physical: first.devices_physical.clone(),
        run_id: first.run_id.clone(),
        started_at: first.started_at.clone(),
        duration_ms,
        flaky_result: first.flaky_result,
        summary: Summary::from_cases(&cases),
        cases,
        devices_health,
        partitions: Vec::new(),
        interrupted: last.interrupted,
        faults_unfired: last.faults_unfired.clone(),
        stress: Some(stress),
    })
}

/// The console's lines for a stress run: one for the run (iterations, how many cases failed in
/// any), then one per case that failed or was flaky in any iteration (`Cls::case: failed 1 of
/// 5, flaky 0 (card 0: 1)`).
pub fn render_stress(stress: &StressReport) -> String {
    let n = stress.iterations.len();
    let hit: Vec<&StressCase> = stress.cases.iter().filter(|c| c.failed + c.flaky > 0).collect();
    let failing = stress.cases.iter().filter(|c| c.failed > 0).count();
    let mut out = format!(
        "stress: {n} iteration(s) of {} case(s); {failing} case(s) failed in at least one\n",
        stress.cases.len()
    );
    for c in hit {
        let cards: Vec<String> = c
            .devices
            .iter()
            .map(|(card, k)| format!("card {card}: {k}"))
            .collect();
        let on = if cards.is_empty() {
            String::new()
        } else {
            format!(" (failed attempts on {})", cards.join(", "))
        };
        out.push_str(&format!(
            "  {}: failed {} of {n}, flaky {}{on}\n",
            c.id, c.failed, c.flaky
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attempt::{Attempt, ErrorReport};
    use crate::model::outcome::AttemptOutcome;
    use platform_common::FailureClass;

    fn case(id: &str, attempts: &[(AttemptOutcome, u32)], outcome: Outcome) -> CaseReport {
        CaseReport {
            id: id.into(),
            class: "C".into(),
            runtime: "rt".into(),
            outcome,
            skip_reason: None,
            attempts: attempts
                .iter()
                .map(|&(o, card)| Attempt {
                    device: Some(card),
                    pid: Some(1),
                    outcome: o,
                    duration_ms: 1,
                    started_ms: 0,
                    error: o
                        .is_failure()
                        .then(|| ErrorReport::new(FailureClass::DeviceRuntime, "boom")),
                    output: Default::default(),
                })
                .collect(),
        }
    }

    fn run(cases: Vec<CaseReport>) -> RunReport {
        RunReport {
            arch: platform_common::Arch::A5,
            platform: crate::model::Platform::Sim,
            driver: platform_common::driver::DriverInfo {
                kind: platform_common::driver::DriverKind::Sim,
                library: None,
            },
            devices: vec![0, 1],
            devices_physical: BTreeMap::new(),
            run_id: "r".into(),
            started_at: "t".into(),
            duration_ms: 10,
            flaky_result: Default::default(),
            summary: Summary::from_cases(&cases),
            cases,
            devices_health: BTreeMap::new(),
            partitions: Vec::new(),
            interrupted: None,
            faults_unfired: Vec::new(),
            stress: None,
        }
    }

    #[test]
    fn a_case_failing_in_one_iteration_is_failed_one_of_n_on_its_card() {
        use AttemptOutcome as A;
        let pass = |id| case(id, &[(A::Passed, 1)], Outcome::Passed);
        let its = vec![
            run(vec![pass("C::a"), pass("C::b")]),
            run(vec![
                case("C::a", &[(A::Failed, 0)], Outcome::Failed),
                pass("C::b"),
            ]),
            run(vec![
                pass("C::a"),
                case("C::b", &[(A::Crashed, 1), (A::Passed, 0)], Outcome::Flaky),
            ]),
        ];
        let dirs: Vec<String> = (1..=3).map(|k| format!("iteration-{k}")).collect();
        let joined = join_iterations(&its, &dirs, 30).unwrap();
        assert_eq!(joined.cases[0].outcome, Outcome::Failed);
        assert_eq!(
            joined.cases[0].attempts[0].device,
            Some(0),
            "the failing iteration's attempts"
        );
        assert_eq!(joined.cases[1].outcome, Outcome::Flaky);
        assert_eq!(joined.summary.failed, 1);
        assert_eq!(joined.exit_code(), 1);
        let s = joined.stress.as_ref().unwrap();
        assert_eq!(s.iterations.len(), 3);
        assert_eq!(s.iterations[1].report_dir, "iteration-2");
        assert_eq!(s.iterations[1].summary.failed, 1);
        let a = &s.cases[0];
        assert_eq!(a.outcomes, [Outcome::Passed, Outcome::Failed, Outcome::Passed]);
        assert_eq!((a.failed, a.flaky), (1, 0));
        assert_eq!(a.devices, BTreeMap::from([("0".to_owned(), 1)]));
        let b = &s.cases[1];
        assert_eq!((b.failed, b.flaky), (0, 1));
        assert_eq!(b.devices, BTreeMap::from([("1".to_owned(), 1)]));
        let text = render_stress(s);
        assert!(
            text.starts_with("stress: 3 iteration(s) of 2 case(s); 1 case(s) failed"),
            "{text}"
        );
        assert!(
            text.contains("C::a: failed 1 of 3, flaky 0 (failed attempts on card 0: 1)"),
            "{text}"
        );
        assert!(
            text.contains("C::b: failed 0 of 3, flaky 1 (failed attempts on card 1: 1)"),
            "{text}"
        );
        // The verdict rule derives the same verdicts from the kept attempts (a merge re-derives).
        let mut again = joined.clone();
        again.rederive();
        assert_eq!(again.cases, joined.cases);
    }

    #[test]
    fn a_clean_stress_run_passes_and_lists_no_case() {
        let its = vec![
            run(vec![case(
                "C::a",
                &[(AttemptOutcome::Passed, 0)],
                Outcome::Passed
            )]);
            2
        ];
        let joined = join_iterations(&its, &["i1".into(), "i2".into()], 20).unwrap();
        assert_eq!(joined.exit_code(), 0);
        assert_eq!(joined.duration_ms, 20);
        let text = render_stress(joined.stress.as_ref().unwrap());
        assert_eq!(
            text,
            "stress: 2 iteration(s) of 1 case(s); 0 case(s) failed in at least one\n"
        );
        assert!(join_iterations(&[], &[], 0).is_none());
    }
}
