//! The seed's CI cascade: an op-timeout in one pooled case on one card. Before any fix it failed
//! every later case on that worker; now the trigger is retried and ends flaky, every other case on
//! that card passes, nothing is skipped, and the card's health shows the force reset and recovery.

mod common;

use common::*;
use platform_common::error::codes;
use platform_common::health::HealthEventKind;
use runner::report::model::{AttemptOutcome, Outcome};

#[test]
fn op_timeout_in_a_pooled_case_costs_one_retry_and_nothing_else() {
    let sb = Sandbox::new();
    let (ids, run) = sb.run_faulted("a5", &["VectorAdd"], "dev=0:op_timeout@2");
    assert!(ids.len() >= 3, "{ids:?}");
    let r = run.consistent_report(0);
    assert_eq!(r.summary.skipped, 0);
    let trigger = &ids[1];
    let t = case(&r, trigger);
    assert_eq!(t.outcome, Outcome::Flaky, "{:?}", t.attempts);
    assert_eq!(t.attempts[0].outcome, AttemptOutcome::Failed);
    assert_eq!(t.attempts[0].device, Some(0));
    let err = t.attempts[0].error.as_ref().unwrap();
    assert_eq!(err.class, platform_common::FailureClass::DeviceRuntime);
    assert_eq!(
        err.code,
        Some(codes::RT_INTERNAL_ERROR),
        "a5's op-timeout code: {err}"
    );
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
    assert!(pos("poisoned") < pos("marked_unusable"));
    assert!(pos("marked_unusable") < pos("force_reset"));
    assert!(pos("force_reset") < pos("recovered"));
    assert!(h.contains(&"probe"));
    assert!(!h.contains(&"fresh_process"), "recovered in-process: {h:?}");
    assert!(health(&r, 1).is_empty());
}

#[test]
fn a_golden_mismatch_fails_after_exactly_one_attempt() {
    let sb = Sandbox::new();
    let (ids, run) = sb.run_faulted("a5", &["VectorAdd"], "dev=0:corrupt@1");
    let r = run.consistent_report(1);
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
    let journal = run.journal();
    assert!(!journal
        .iter()
        .any(|e| matches!(e, runner::report::model::Event::RetryScheduled { .. })));
    // The pooled worker is built once and never retired: a mismatch leaves it in the pool.
    let worker_steps: Vec<_> = journal
        .iter()
        .filter_map(|e| match e {
            runner::report::model::Event::Worker {
                device: 0, action, ..
            } => Some(*action),
            _ => None,
        })
        .collect();
    use runner::report::model::WorkerAction;
    assert_eq!(
        worker_steps,
        [WorkerAction::Built, WorkerAction::Closed],
        "one build per runtime, closed at the lane's end"
    );
}

#[test]
fn a2a3_drain_false_negative_with_failing_resets_reruns_the_sink_in_a_fresh_lane() {
    let sb = Sandbox::new();
    let plan = "dev=0:op_timeout@2;dev=0:drain=false_negative;dev=0:force_reset_fail=3";
    let (ids, run) = sb.run_faulted("a2a3", &["VectorAdd"], plan);
    assert!(ids.len() >= 3, "{ids:?}");
    let r = run.consistent_report(0);
    assert_eq!(r.summary.skipped, 0, "none skipped");
    let t = case(&r, &ids[1]);
    assert_eq!(t.outcome, Outcome::Flaky, "{:?}", t.attempts);
    assert_eq!(
        t.attempts[0].error.as_ref().unwrap().code,
        Some(codes::RT_AICPU_EXCEPTION),
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
    let sunk: Vec<String> = run.sink_reads(Some(0)).concat();
    // Every case after the trigger was in the sink (and none before it).
    for id in &ids[2..] {
        assert!(
            sunk.iter().any(|s| s == id || s == "VectorAdd::"),
            "{id} not in sink {sunk:?}"
        );
    }
    assert!(!sunk.iter().any(|s| s == &ids[0]), "{sunk:?}");
    let h = health(&r, 0);
    assert!(h.contains(&"reset_failed"), "{h:?}");
    assert!(h.contains(&"fresh_process"), "{h:?}");
    assert!(!h.contains(&"quarantined"), "{h:?}");
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
    let run = sb.run_cases("a5", "0,1", &["VectorAdd", "Matmul"], &["--faults", "dev=1:dead"]);
    let r = run.consistent_report(0);
    for c in &r.cases {
        assert_eq!(c.outcome, Outcome::Passed, "{}: {:?}", c.id, c.attempts);
        assert!(c.attempts.iter().all(|a| a.device == Some(0)), "{}", c.id);
    }
    let h = health(&r, 1);
    assert!(h.contains(&"init_failed"), "{h:?}");
    assert!(h.contains(&"fresh_process"), "{h:?}");
    assert_eq!(h.last(), Some(&"quarantined"), "{h:?}");
}

#[test]
fn a_multi_card_case_on_a_dead_card_ends_failed_and_the_run_ends() {
    let sb = Sandbox::new();
    let run = sb.run_cases("a5", "0,1", &["MultiCard"], &["--faults", "dev=1:dead"]);
    let r = run.consistent_report(1);
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
        assert!(
            err.message.contains("card(s) 1 quarantined"),
            "the reason names the dead card: {err}"
        );
        assert!(
            c.attempts.iter().all(|a| a.device.is_none()),
            "an init failure is no attempt of the case: {:?}",
            c.attempts
        );
    }
    // The multi-card lane runs on card 0 and holds card 1: card 1's init failure is card 1's,
    // the next multi-card lane is its fresh process, and its second failure quarantines it.
    let h1 = health(&r, 1);
    assert_eq!(h1.iter().filter(|k| **k == "init_failed").count(), 2, "{h1:?}");
    assert!(h1.contains(&"fresh_process"), "{h1:?}");
    assert_eq!(h1.last(), Some(&"quarantined"), "{h1:?}");
    let h0 = health(&r, 0);
    assert!(
        !h0.contains(&"init_failed") && !h0.contains(&"quarantined"),
        "card 0 is healthy: {h0:?}"
    );
    let init = &r.devices_health["1"]
        .iter()
        .find(|h| h.name() == "init_failed")
        .unwrap();
    assert!(init.detail().contains("card 1"), "{init:?}");
}

#[test]
fn every_card_quarantined_ends_every_case_failed_and_loses_nothing() {
    let sb = Sandbox::new();
    let (ids, run) = sb.run_faulted("a5", &["VectorAdd", "Matmul"], "dev=*:dead");
    let r = run.consistent_report(1);
    let got: Vec<&str> = r.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(got, ids, "every selected case is in the report");
    assert_eq!(r.summary.failed, ids.len() as u64, "{:?}", r.summary);
    for c in &r.cases {
        assert_eq!(c.outcome, Outcome::Failed, "{}", c.id);
        assert_eq!(c.attempts.len(), 1, "{}: {:?}", c.id, c.attempts);
        let a = &c.attempts[0];
        assert_eq!(a.device, None, "{}: never reached a card", c.id);
        let err = a.error.as_ref().unwrap();
        assert_eq!(err.class, platform_common::FailureClass::Infrastructure);
        assert!(err.message.contains("no healthy card left"), "{err}");
    }
    for card in [0, 1] {
        let h = health(&r, card);
        assert!(h.contains(&"init_failed"), "card {card}: {h:?}");
        assert_eq!(h.last(), Some(&"quarantined"), "card {card}: {h:?}");
    }
}

/// Health events carry the time they happened in the lane, not the time the dispatcher read
/// them: the standalone op-timeout case poisons its card early and closes (force reset, whose
/// probe is slowed by `init_delay_ms`) before it reports anything.
#[test]
fn health_events_are_timed_when_they_happened() {
    let sb = Sandbox::new();
    let plan = ["--faults", "dev=0:init_delay_ms=300"];
    let run = sb.run_cases("a5", "0", &["AicoreOpTimeout"], &plan);
    run.expect_code(0);
    let r = run.report();
    let c = &r.cases[0];
    assert_eq!(c.outcome, Outcome::Passed, "{:?}", c.attempts);
    let a = &c.attempts[0];
    let h = &r.devices_health["0"];
    let poisoned = h.iter().find(|e| e.name() == "poisoned").unwrap();
    assert!(
        a.started_ms <= poisoned.at_ms && poisoned.at_ms <= a.started_ms + a.duration_ms,
        "poisoned at {} ms, outside the attempt [{}, {}] ms",
        poisoned.at_ms,
        a.started_ms,
        a.started_ms + a.duration_ms
    );
    let reset = h.iter().find(|e| e.name() == "force_reset").unwrap();
    let Some(HealthEventKind::ForceReset { duration_ms, .. }) = reset.device_kind() else {
        panic!("a force_reset record is the device runner's: {reset:?}");
    };
    let reset_ms = *duration_ms;
    assert!(reset_ms >= 300, "the probe's set_device is slowed: {reset:?}");
    // The reset attempt began after the poison (1 ms of rounding either side).
    assert!(
        poisoned.at_ms <= reset.at_ms - reset_ms + 1,
        "poisoned at {} ms, after the reset attempt that ended at {} ms began ({} ms long)",
        poisoned.at_ms,
        reset.at_ms,
        reset_ms
    );
}

/// `fresh_process` marks a lane started after an unclean exit or to re-run a poison sink, never an
/// ordinary lane after a clean one. On one card: the first lane escalates (its sink holds the rest
/// of VectorAdd and Matmul), a fresh lane re-runs them and exits cleanly, and then a regular lane
/// takes the queued trigger retry and Softmax.
#[test]
fn fresh_process_is_recorded_only_after_an_unclean_exit_or_for_the_sink() {
    let sb = Sandbox::new();
    let plan = "dev=0:op_timeout@1;dev=0:force_reset_fail=3";
    let classes = ["VectorAdd", "Matmul", "Softmax"];
    let run = sb.run_cases("a5", "0", &classes, &["--faults", plan]);
    let r = run.consistent_report(0);
    let lanes = run
        .journal()
        .iter()
        .filter(|e| matches!(e, runner::report::model::Event::LaneStarted { .. }))
        .count();
    assert_eq!(lanes, 3, "first, fresh (sink), regular\n{}", run.dump());
    let fresh: Vec<_> = r.devices_health["0"]
        .iter()
        .filter(|h| h.name() == "fresh_process")
        .collect();
    assert_eq!(fresh.len(), 1, "{fresh:?}");
    let detail = fresh[0].detail();
    assert!(detail.contains("poison sink"), "{detail}");
}
