//! Legitimate skips and exclusions never enter the poison sink and are never retried: cases
//! excluded by the arch filter or `--runtime` are not part of the run; a case that needs more cards
//! than the run has is `skipped` with its reason, without an attempt, even when the lane escalates.

mod common;

use common::*;
use runner::report::model::{Event, Outcome};

#[test]
fn skips_and_exclusions_never_reach_the_sink_or_a_retry() {
    let sb = Sandbox::new();
    let all = list(&sb, "a5", &[]);
    let a2a3_only: Vec<String> = list(&sb, "a2a3", &[])
        .into_iter()
        .filter(|id| !all.contains(id))
        .collect();
    assert!(
        !a2a3_only.is_empty(),
        "the built-in suite has arch-filtered cases"
    );
    // One card, so MultiCard (two cards) is a legitimate skip; the op-timeout's reset fails, so
    // the lane escalates and writes its sink.
    let plan = "dev=0:op_timeout@1;dev=0:force_reset_fail=3";
    let run = sb.run(
        "a5",
        &[
            "--devices",
            "0",
            "--case",
            "MultiCard",
            "--case",
            "VectorAdd",
            "--case",
            "BlockDimSweep",
            "--faults",
            plan,
        ],
    );
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
    for id in &a2a3_only {
        assert!(
            !r.cases.iter().any(|c| &c.id == id),
            "{id} is excluded on a5, not reported"
        );
    }
    let journal = run.journal();
    let mut sunk = Vec::new();
    for e in &journal {
        match e {
            Event::SinkRead { selectors, .. } => sunk.extend(selectors.iter().cloned()),
            Event::RetryScheduled { id, .. } => {
                assert!(!id.starts_with("MultiCard::"), "a skip was retried: {id}");
                assert!(!a2a3_only.contains(id), "an excluded case was retried: {id}");
            }
            _ => {}
        }
    }
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
        assert!(!a2a3_only.contains(s), "an excluded case entered the sink: {s}");
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
