//! Legitimate skips and exclusions never enter the poison sink and are never retried: cases
//! excluded by the arch filter or `--runtime` are not part of the run, even when the lane running
//! their classes escalates through the sink (a class selector in the sink names only the run's
//! cases); a case that needs more cards than the run has is `skipped` with its reason, without an
//! attempt, even when the lane escalates.

mod common;

use common::*;
use runner::report::model::{Event, Outcome};

/// One card whose first launch hangs and whose resets all fail, so its lane escalates through the
/// sink with the rest of everything it was assigned.
const ESCALATE: &str = "dev=0:op_timeout@1;dev=0:force_reset_fail=3";

/// Every case id the journal mentions anywhere (text search), and the sink's selectors.
fn sunk(run: &Run) -> Vec<String> {
    run.sink_reads(None).concat()
}

/// Asserts `excluded` cases are nowhere: not in the report, the journal (any event), the sink's
/// selectors, or a retry; and that every selected case got a real verdict.
fn never_seen(run: &Run, excluded: &[String]) {
    let r = run.report();
    assert_consistent(&r);
    let journal = std::fs::read_to_string(run.report_dir.join("journal.jsonl")).unwrap();
    let selectors = sunk(run);
    assert!(
        !selectors.is_empty(),
        "the lane escalated through the sink\n{}",
        run.dump()
    );
    for id in excluded {
        assert!(!r.cases.iter().any(|c| &c.id == id), "{id} is in the report");
        assert!(!journal.contains(id.as_str()), "{id} is in the journal");
        assert!(!selectors.contains(id), "{id} entered the sink: {selectors:?}");
    }
    for e in run.journal() {
        if let Event::RetryScheduled { id, .. } = &e {
            assert!(!excluded.contains(id), "an excluded case was retried: {id}");
        }
    }
}

/// Classes holding a case of the other arch only. The lane takes the first two classes of the
/// run at once (two assignments in flight); its first launch poisons the card and the reset
/// fails, so the second class, not yet started, goes to the sink as a class selector, and the one
/// holding the other arch's case among them is re-run by the fresh lane.
#[test]
fn arch_filtered_cases_never_reach_the_sink_a_fresh_lane_or_a_retry() {
    let runs: [(&str, &str, &[&str], usize); 2] = [
        (
            "a5",
            "a2a3",
            &[
                "PagedAttentionUnrollManualScope",
                "PagedAttentionManualScope",
                "Softmax",
                "RmsNorm",
            ],
            2,
        ),
        ("a2a3", "a5", &["PagedAttentionManualScope", "Softmax"], 1),
    ];
    for (arch, other, classes, filtered) in runs {
        let sb = Sandbox::new();
        let mut args = vec!["--devices", "0", "--faults", ESCALATE];
        for class in classes {
            args.extend(["--case", *class]);
        }
        let selected = list(&sb, arch, &args[4..]);
        let excluded: Vec<String> = list(&sb, other, &args[4..])
            .into_iter()
            .filter(|id| !selected.contains(id))
            .collect();
        assert_eq!(
            excluded.len(),
            filtered,
            "cases of these classes only for {other}: {excluded:?}"
        );
        let run = sb.run(arch, &args);
        never_seen(&run, &excluded);
        let r = run.report();
        assert_eq!(r.cases.len(), selected.len());
        // Some excluded case's class was still unstarted when the lane escalated: the sink named
        // it by class, and the fresh lane ran only that class's selected cases.
        assert!(
            sunk(&run)
                .iter()
                .any(|s| s.ends_with("::") && excluded.iter().any(|id| id.starts_with(s.as_str()))),
            "a class selector covering an excluded case: {:?}",
            sunk(&run)
        );
        for c in &r.cases {
            assert!(
                matches!(c.outcome, Outcome::Passed | Outcome::Flaky),
                "{arch} {}: {:?}\n{}",
                c.id,
                c.attempts,
                run.dump()
            );
        }
    }
}

#[test]
fn a_runtime_filter_keeps_other_runtimes_out_of_the_sink_and_retries() {
    let sb = Sandbox::new();
    let args = [
        "--devices",
        "0",
        "--runtime",
        "host_build_graph",
        "--faults",
        ESCALATE,
    ];
    let selected = list(&sb, "a5", &args[2..4]);
    let excluded: Vec<String> = list(&sb, "a5", &[])
        .into_iter()
        .filter(|id| !selected.contains(id))
        .collect();
    assert!(!excluded.is_empty());
    let run = sb.run("a5", &args);
    never_seen(&run, &excluded);
    let r = run.report();
    assert!(r.cases.iter().all(|c| c.runtime == "host_build_graph"));
    for c in &r.cases {
        // MultiCard needs two cards: a legitimate skip on this one-card run.
        let want: &[Outcome] = if c.class == "MultiCard" {
            &[Outcome::Skipped]
        } else {
            &[Outcome::Passed, Outcome::Flaky]
        };
        assert!(want.contains(&c.outcome), "{}: {:?}", c.id, c.attempts);
    }
}

#[test]
fn a_skip_never_reaches_the_sink_or_a_retry() {
    let sb = Sandbox::new();
    // One card, so MultiCard (two cards) is a legitimate skip; the op-timeout's reset fails, so
    // the lane escalates and writes its sink.
    let classes = ["MultiCard", "VectorAdd", "BlockDimSweep"];
    let run = sb.run_cases("a5", "0", &classes, &["--faults", ESCALATE]);
    let r = run.report();
    assert_consistent(&r);
    let multi: Vec<_> = r.cases.iter().filter(|c| c.class == "MultiCard").collect();
    assert!(!multi.is_empty());
    for c in &multi {
        assert_eq!(c.outcome, Outcome::Skipped);
        assert!(c.attempts.is_empty(), "a skip is never attempted");
        assert!(
            c.skip_reason.as_deref().unwrap_or("").contains("needs 2 cards"),
            "{:?}",
            c.skip_reason
        );
    }
    let sunk = sunk(&run);
    assert!(
        !sunk.is_empty(),
        "the lane escalated through the sink\n{}",
        run.dump()
    );
    for s in &sunk {
        assert!(
            !s.starts_with("MultiCard"),
            "a legitimate skip entered the sink: {s}"
        );
    }
    for e in run.journal() {
        if let Event::RetryScheduled { id, .. } = &e {
            assert!(!id.starts_with("MultiCard::"), "a skip was retried: {id}");
        }
    }
    // Everything selected and runnable still got a real verdict.
    for c in r.cases.iter().filter(|c| c.class != "MultiCard") {
        assert!(
            matches!(c.outcome, Outcome::Passed | Outcome::Flaky),
            "{}: {:?}",
            c.id,
            c.attempts
        );
    }
}

#[test]
fn a_runtime_filter_excludes_other_runtimes_from_the_run() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &["--runtime", "host_build_graph"]);
    let run = sb.run("a5", &["--devices", "0,1", "--runtime", "host_build_graph"]);
    let r = run.report();
    assert_consistent(&r);
    let got: Vec<&str> = r.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(got.len(), ids.len());
    assert!(r.cases.iter().all(|c| c.runtime == "host_build_graph"));
}
