//! No fault: every built-in case passes on 2 simulated cards, for both arches.

mod common;

use common::*;
use runner::report::model::Outcome;

fn every_case_passes(arch: &str) {
    let sb = Sandbox::new();
    let run = sb.run(arch, &["--devices", "0,1"]);
    let r = run.report();
    assert_consistent(&r);
    let listed = list(&sb, arch, &[]);
    assert_eq!(
        r.cases.len(),
        listed.len(),
        "every selected case is in the report"
    );
    for c in &r.cases {
        assert_eq!(
            c.outcome,
            Outcome::Passed,
            "{} on {arch}: {:?}\n{}",
            c.id,
            c.attempts,
            run.dump()
        );
        assert_eq!(c.attempts.len(), 1, "{}", c.id);
    }
    assert!(r.summary.total >= 40, "the built-in suite has at least 40 cases");
    assert_eq!(r.devices, vec![0, 1]);
    run.expect_code(0);
    for f in ["report.json", "junit.xml", "journal.jsonl", "timeline.svg"] {
        assert!(run.report_dir.join(f).is_file(), "{f}");
    }
}

#[test]
fn every_builtin_case_passes_on_two_cards_a5() {
    every_case_passes("a5");
}

#[test]
fn every_builtin_case_passes_on_two_cards_a2a3() {
    every_case_passes("a2a3");
}

/// A report file that cannot be written after the run (here `report.json` is a directory) does not
/// hide the verdicts: the summary is printed, the error is printed with its cause, and the exit
/// status follows the verdicts (0 all passed, 1 one failed), not the usage status 2.
#[test]
fn a_report_that_cannot_be_written_still_prints_the_summary_and_exits_by_the_verdicts() {
    for (faults, code, head) in [("dev=0:corrupt@99", 0, "PASS"), ("dev=0:corrupt@1", 1, "FAIL")] {
        let sb = Sandbox::new();
        std::fs::create_dir_all(sb.report_dir().join("report.json")).unwrap();
        let run = sb.run(
            "a5",
            &["--devices", "0", "--case", "VectorAdd", "--faults", faults],
        );
        run.expect_code(code);
        assert!(run.stdout.starts_with(head), "{}", run.dump());
        assert!(
            run.stderr.contains("failed to write the reports: write ")
                && run.stderr.contains("report.json: ")
                && run.stderr.to_lowercase().contains("directory"),
            "the error and its cause: {}",
            run.dump()
        );
        assert!(
            run.report_dir.join("journal.jsonl").is_file(),
            "the journal is there"
        );
    }
}
