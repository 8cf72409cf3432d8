//! The duration history (issue 23 item 1) from the suite binary: a run leaves a history beside
//! its report dir, a garbled history is a warning and a fresh one, and a run with a history
//! plans its hand-out (`--order smart` by default) and still gives every case its verdict.

mod common;

use common::*;
use runner::history::History;
use runner::report::model::Outcome;

#[test]
fn runs_keep_a_history_and_a_garbled_one_is_a_warning_and_a_fresh_history() {
    let sb = Sandbox::new();
    let path = runner::history::path_in(sb.report_dir().parent().unwrap(), "builtin", "a5");
    let first = sb.run("a5", &["--devices", "0,1"]);
    first.expect_code(0);
    let h = History::read(&path).unwrap().expect("the run wrote a history");
    let cases = first.report().cases.len();
    assert_eq!(h.runs, 1);
    assert_eq!(h.cases.len(), cases, "every case is in it");
    assert!(
        h.cases.values().all(|c| c.ms.len() == 1),
        "one passing duration each"
    );
    assert!(!h.inits.is_empty(), "the init times of the runtimes built");

    // A second run plans from it (smart is the default with a history).
    let second = sb.run("a5", &["--devices", "0,1"]);
    second.expect_code(0);
    assert!(
        second.report().cases.iter().all(|c| c.outcome == Outcome::Passed),
        "{}",
        second.dump()
    );
    let h = History::read(&path).unwrap().unwrap();
    assert_eq!(h.runs, 2);
    assert!(h.cases.values().all(|c| c.ms.len() == 2));

    std::fs::write(&path, "{\"version\": 1, \"runs\": ").unwrap();
    let third = sb.run("a5", &["--devices", "0,1", "--order", "suite"]);
    third.expect_code(0);
    assert!(
        third.stderr.contains("is not a history") && third.stderr.contains("starting a fresh history"),
        "{}",
        third.stderr
    );
    let h = History::read(&path)
        .unwrap()
        .expect("a fresh history was written");
    assert_eq!(h.runs, 1, "the garbled one was replaced");
}

#[test]
fn a_bad_order_is_a_usage_error() {
    let sb = Sandbox::new();
    let run = sb.run("a5", &["--order", "fastest"]);
    run.expect_code(2);
    assert!(run.stderr.contains("--order"), "{}", run.stderr);
}
