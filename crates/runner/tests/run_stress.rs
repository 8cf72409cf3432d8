//! Stress runs: `--stress-count N` runs the selection N times on the same cards, each iteration
//! with its own reports, joined in report.json (`stress`: every case's verdict per iteration, how
//! often it failed and on which cards); a fault firing in one iteration is 1 of N failed on its
//! card, and the run exits 1. `--stress-duration` stops starting iterations once its time has
//! passed; a bad count is bad input.

mod common;

use common::*;
use runner::report::model::Outcome;

#[test]
fn a_fault_firing_in_one_iteration_is_one_of_n_failed_on_its_card() {
    let sb = Sandbox::with_cards(2);
    // The plan's counters run across the iterations: card 0's second case launch of the whole
    // stress run gives a wrong result (never retried), so exactly one iteration fails the case.
    let run = sb.run_cases(
        "a5",
        "0",
        &["VectorAdd::single_element"],
        &["--stress-count", "3", "--faults", "dev=0:corrupt@2"],
    );
    let r = run.consistent_report(1);
    let case = &r.cases[0];
    assert_eq!(case.outcome, Outcome::Failed, "{}", run.dump());
    let stress = r.stress.as_ref().expect("a stress report");
    assert_eq!(stress.iterations.len(), 3);
    let sc = &stress.cases[0];
    assert_eq!(sc.id, "VectorAdd::single_element");
    assert_eq!(sc.outcomes.len(), 3);
    assert_eq!(
        sc.outcomes.iter().filter(|o| **o == Outcome::Failed).count(),
        1,
        "{:?}",
        sc.outcomes
    );
    assert_eq!(sc.outcomes.iter().filter(|o| **o == Outcome::Passed).count(), 2);
    assert_eq!(sc.failed, 1);
    assert_eq!(sc.devices.get("0"), Some(&1), "{:?}", sc.devices);
    assert_eq!(sc.devices.len(), 1);
    // Each iteration's own report is in its directory, with the verdict the join lists.
    for (it, outcome) in stress.iterations.iter().zip(&sc.outcomes) {
        let own =
            runner::report::read_report(&run.report_dir.join(&it.report_dir).join("report.json")).unwrap();
        assert_eq!(own.cases[0].outcome, *outcome, "{}", it.report_dir);
        assert!(run
            .report_dir
            .join(&it.report_dir)
            .join("journal.jsonl")
            .is_file());
    }
    assert!(run.report_dir.join("junit.xml").is_file());
    assert!(
        run.stdout
            .contains("VectorAdd::single_element: failed 1 of 3, flaky 0 (failed attempts on card 0: 1)"),
        "{}",
        run.dump()
    );
    assert!(
        run.stdout
            .contains("stress: 3 iteration(s) of 1 case(s); 1 case(s) failed in at least one"),
        "{}",
        run.dump()
    );
}

#[test]
fn a_clean_stress_run_passes_and_its_duration_bounds_the_iterations() {
    let sb = Sandbox::with_cards(2);
    // 1 ms has passed when the first iteration ends: no second one starts.
    let run = sb.run_cases(
        "a5",
        "0",
        &["VectorAdd::single_element"],
        &["--stress-duration", "0.001"],
    );
    let r = run.consistent_report(0);
    let stress = r.stress.as_ref().expect("a stress report");
    assert_eq!(stress.iterations.len(), 1, "{}", run.dump());
    assert_eq!(stress.cases[0].outcomes, [Outcome::Passed]);
    assert_eq!(stress.cases[0].failed, 0);
    // Without either setting a run is a single run, without `stress`.
    let once = sb.run_cases("a5", "0", &["VectorAdd::single_element"], &[]);
    assert!(once.consistent_report(0).stress.is_none());
}

#[test]
fn a_bad_iteration_count_is_bad_input_naming_its_source() {
    let sb = Sandbox::with_cards(2);
    let run = sb.run_cases(
        "a5",
        "0",
        &["VectorAdd::single_element"],
        &["--stress-count", "0"],
    );
    run.expect_code(2);
    assert!(run.stderr.contains("--stress-count"), "{}", run.dump());
    let mut c = sb.command("a5", &["--devices", "0", "--case", "VectorAdd::single_element"]);
    c.env("CARDGUARD_STRESS_COUNT", " 3");
    let run = sb.finish(c.output().unwrap());
    run.expect_code(2);
    assert!(run.stderr.contains("CARDGUARD_STRESS_COUNT"), "{}", run.dump());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.dump());
}
