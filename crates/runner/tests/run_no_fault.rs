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
