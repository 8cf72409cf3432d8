//! The seed's CI cascade: an op-timeout in one pooled case on one card. Before any fix it failed
//! every later case on that worker; now the trigger is retried and ends flaky, every other case on
//! that card passes, nothing is skipped, and the card's health shows the force reset and recovery.

mod common;

use common::*;
use runner::report::model::{AttemptOutcome, HealthKind, Outcome};

#[test]
fn op_timeout_in_a_pooled_case_costs_one_retry_and_nothing_else() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &["--case", "VectorAdd"]);
    assert!(ids.len() >= 3, "{ids:?}");
    let run = sb.run(
        "a5",
        &[
            "--devices",
            "0,1",
            "--case",
            "VectorAdd",
            "--faults",
            "dev=0:op_timeout@2",
        ],
    );
    run.expect_code(0);
    let r = run.report();
    assert_consistent(&r);
    assert_eq!(r.summary.skipped, 0);
    let trigger = &ids[1];
    let t = case(&r, trigger);
    assert_eq!(t.outcome, Outcome::Flaky, "{:?}", t.attempts);
    assert_eq!(t.attempts[0].outcome, AttemptOutcome::Failed);
    assert_eq!(t.attempts[0].device, Some(0));
    let err = t.attempts[0].error.as_ref().unwrap();
    assert_eq!(err.class, platform_common::FailureClass::DeviceRuntime);
    assert_eq!(err.code, Some(507000), "a5's op-timeout code: {err}");
    assert_eq!(t.attempts.last().unwrap().outcome, AttemptOutcome::Passed);
    for id in ids.iter().filter(|i| *i != trigger) {
        let c = case(&r, id);
        assert_eq!(c.outcome, Outcome::Passed, "{id}: {:?}", c.attempts);
        assert_eq!(c.attempts.len(), 1, "{id}");
        assert_eq!(
            c.attempts[0].device,
            Some(0),
            "{id} ran on the poisoned card, after the trigger"
        );
    }
    let h = health(&r, 0);
    let pos = |k| {
        h.iter()
            .position(|x| *x == k)
            .unwrap_or_else(|| panic!("no {k} in {h:?}"))
    };
    assert!(pos(HealthKind::Poisoned) < pos(HealthKind::MarkedUnusable));
    assert!(pos(HealthKind::MarkedUnusable) < pos(HealthKind::ForceReset));
    assert!(pos(HealthKind::ForceReset) < pos(HealthKind::Recovered));
    assert!(h.contains(&HealthKind::Probe));
    assert!(
        !h.contains(&HealthKind::FreshProcess),
        "recovered in-process: {h:?}"
    );
    assert!(health(&r, 1).is_empty());
}

#[test]
fn a_golden_mismatch_fails_after_exactly_one_attempt() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &["--case", "VectorAdd"]);
    let run = sb.run(
        "a5",
        &[
            "--devices",
            "0,1",
            "--case",
            "VectorAdd",
            "--faults",
            "dev=0:corrupt@1",
        ],
    );
    run.expect_code(1);
    let r = run.report();
    assert_consistent(&r);
    let c = case(&r, &ids[0]);
    assert_eq!(c.outcome, Outcome::Failed);
    assert_eq!(c.attempts.len(), 1, "a mismatch is never retried");
    assert_eq!(
        c.attempts[0].error.as_ref().unwrap().class,
        platform_common::FailureClass::Result
    );
    for id in &ids[1..] {
        assert_eq!(outcome(&r, id), Outcome::Passed, "{id}");
    }
    assert!(
        health(&r, 0).is_empty(),
        "a mismatch never poisons or retires: {:?}",
        health(&r, 0)
    );
    assert!(!run
        .journal()
        .iter()
        .any(|e| matches!(e, runner::report::model::Event::RetryScheduled { .. })));
}

#[test]
fn a2a3_drain_false_negative_with_failing_resets_reruns_the_sink_in_a_fresh_lane() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a2a3", &["--case", "VectorAdd"]);
    assert!(ids.len() >= 3, "{ids:?}");
    let plan = "dev=0:op_timeout@2;dev=0:drain=false_negative;dev=0:force_reset_fail=3";
    let run = sb.run(
        "a2a3",
        &["--devices", "0,1", "--case", "VectorAdd", "--faults", plan],
    );
    run.expect_code(0);
    let r = run.report();
    assert_consistent(&r);
    assert_eq!(r.summary.skipped, 0, "none skipped");
    let t = case(&r, &ids[1]);
    assert_eq!(t.outcome, Outcome::Flaky, "{:?}", t.attempts);
    assert_eq!(
        t.attempts[0].error.as_ref().unwrap().code,
        Some(507018),
        "a2a3's op-timeout code"
    );
    for id in ids.iter().filter(|i| **i != ids[1]) {
        let c = case(&r, id);
        assert_eq!(c.outcome, Outcome::Passed, "{id}: {:?}", c.attempts);
        assert_eq!(
            c.attempts.len(),
            1,
            "{id}: never attempted on the poisoned context"
        );
    }
    let sunk: Vec<String> = run
        .journal()
        .into_iter()
        .filter_map(|e| match e {
            runner::report::model::Event::SinkRead {
                device: 0, selectors, ..
            } => Some(selectors),
            _ => None,
        })
        .flatten()
        .collect();
    // Every case after the trigger was in the sink (and none before it).
    for id in &ids[2..] {
        assert!(
            sunk.iter().any(|s| s == id || s == "VectorAdd::"),
            "{id} not in sink {sunk:?}"
        );
    }
    assert!(!sunk.iter().any(|s| s == &ids[0]), "{sunk:?}");
    let h = health(&r, 0);
    assert!(h.contains(&HealthKind::ResetFailed), "{h:?}");
    assert!(h.contains(&HealthKind::FreshProcess), "{h:?}");
    assert!(!h.contains(&HealthKind::Quarantined), "{h:?}");
    let reran = ids[2..].iter().filter(|id| {
        let c = case(&r, id);
        c.attempts[0].pid != t.attempts[0].pid
    });
    assert_eq!(
        reran.count(),
        ids.len() - 2,
        "the sink's cases ran in another process"
    );
}

#[test]
fn a_dead_card_is_quarantined_and_its_classes_finish_on_the_other_card() {
    let sb = Sandbox::new();
    let args = [
        "--devices",
        "0,1",
        "--case",
        "VectorAdd",
        "--case",
        "Matmul",
        "--faults",
        "dev=1:dead",
    ];
    let run = sb.run("a5", &args);
    run.expect_code(0);
    let r = run.report();
    assert_consistent(&r);
    for c in &r.cases {
        assert_eq!(c.outcome, Outcome::Passed, "{}: {:?}", c.id, c.attempts);
        assert!(c.attempts.iter().all(|a| a.device == Some(0)), "{}", c.id);
    }
    let h = health(&r, 1);
    assert!(h.contains(&HealthKind::InitFailed), "{h:?}");
    assert!(h.contains(&HealthKind::FreshProcess), "{h:?}");
    assert_eq!(h.last(), Some(&HealthKind::Quarantined), "{h:?}");
}

#[test]
fn a_multi_card_case_on_a_dead_card_ends_failed_and_the_run_ends() {
    let sb = Sandbox::new();
    let run = sb.run(
        "a5",
        &[
            "--devices",
            "0,1",
            "--case",
            "MultiCard",
            "--faults",
            "dev=1:dead",
        ],
    );
    run.expect_code(1);
    let r = run.report();
    assert_consistent(&r);
    assert!(!r.cases.is_empty());
    for c in &r.cases {
        assert_eq!(c.outcome, Outcome::Failed, "{}: {:?}", c.id, c.attempts);
        let last = c.attempts.last().expect("an attempt");
        let err = last.error.as_ref().expect("an error");
        assert_eq!(
            err.class,
            platform_common::FailureClass::Infrastructure,
            "{}",
            c.id
        );
    }
}
