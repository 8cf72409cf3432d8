//! `--isolation pool|class|case`: containment, retries, the poison sink, fresh processes and
//! quarantine behave the same in every mode; only the number of lane processes differs (one per
//! card, one per class, one per case), and a lane that ends after its unit by design is a clean
//! exit, never a death and never a `fresh_process`.

mod common;

use std::collections::{BTreeMap, HashSet};

use common::*;
use platform_common::error::codes;
use platform_common::FailureClass;
use runner::report::model::{AttemptOutcome, Event, LaneStatus, Outcome, RunReport};

const MODES: [&str; 3] = ["pool", "class", "case"];

/// Lanes started and every lane's exit status, from the journal.
fn lanes(run: &Run) -> (usize, Vec<LaneStatus>) {
    let journal = run.journal();
    let started = journal
        .iter()
        .filter(|e| matches!(e, Event::LaneStarted { .. }))
        .count();
    let exits = journal
        .iter()
        .filter_map(|e| match e {
            Event::LaneExited { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    (started, exits)
}

/// Each case's outcome and attempt outcomes.
fn verdicts(r: &RunReport) -> BTreeMap<String, (Outcome, Vec<AttemptOutcome>)> {
    r.cases
        .iter()
        .map(|c| {
            let attempts = c.attempts.iter().map(|a| a.outcome).collect();
            (c.id.clone(), (c.outcome, attempts))
        })
        .collect()
}

/// The one flaky case of `r`: failed first on card 0 with a5's op-timeout, passed on its retry.
fn the_trigger(r: &RunReport, mode: &str) -> String {
    let flaky: Vec<_> = r.cases.iter().filter(|c| c.outcome == Outcome::Flaky).collect();
    assert_eq!(flaky.len(), 1, "{mode}: one flaky case: {:?}", r.summary);
    let t = flaky[0];
    assert_eq!(
        t.attempts.iter().map(|a| a.outcome).collect::<Vec<_>>(),
        [AttemptOutcome::Failed, AttemptOutcome::Passed],
        "{mode}: {}",
        t.id
    );
    let first = &t.attempts[0];
    assert_eq!(first.device, Some(0), "{mode}");
    let err = first.error.as_ref().unwrap();
    assert_eq!(err.class, FailureClass::DeviceRuntime, "{mode}: {err}");
    assert_eq!(err.code, Some(codes::RT_INTERNAL_ERROR), "{mode}: {err}");
    t.id.clone()
}

/// The seed's cascade plan in each mode: the same verdicts (one flaky trigger, every other case
/// passed at its one attempt), the card recovered in-process, every lane a clean exit, and as
/// many lane processes as the mode says.
#[test]
fn the_seed_cascade_gets_the_same_verdicts_in_every_mode() {
    let classes = ["VectorAdd", "Matmul", "Softmax"];
    let mut seen: Vec<(&str, String, BTreeMap<_, _>)> = Vec::new();
    for mode in MODES {
        let sb = Sandbox::new();
        let extra = ["--faults", "dev=0:op_timeout@3", "--isolation", mode];
        let (ids, run) = sb.list_and_run("a5", "0,1", &classes, &extra);
        let r = run.consistent_report(0);
        assert_eq!(r.summary.total as usize, ids.len(), "{mode}");
        let trigger = the_trigger(&r, mode);
        assert_others_passed_once(&r, &ids, &trigger);
        let h0 = health(&r, 0);
        for step in ["poisoned", "marked_unusable", "force_reset", "recovered"] {
            assert!(h0.contains(&step), "{mode}: no {step} in {h0:?}");
        }
        for card in [0, 1] {
            let h = health(&r, card);
            assert!(
                !h.contains(&"fresh_process") && !h.contains(&"quarantined"),
                "{mode}: a lane closed by design is no death: card {card}: {h:?}\n{}",
                run.dump()
            );
        }
        let (started, exits) = lanes(&run);
        assert_eq!(exits.len(), started, "{mode}");
        assert!(
            exits.iter().all(|s| *s == LaneStatus::Exited(0)),
            "{mode}: {exits:?}"
        );
        let attempts: Vec<_> = r.cases.iter().flat_map(|c| &c.attempts).collect();
        let pids: HashSet<_> = attempts.iter().map(|a| a.pid).collect();
        match mode {
            "pool" => assert_eq!(started, 2, "pool: one lane per card"),
            // Three classes, and the trigger's retry as a unit of its own.
            "class" => {
                assert_eq!(started, classes.len() + 1, "class: one lane per unit");
                for c in &r.cases {
                    let mates: HashSet<_> = r
                        .cases
                        .iter()
                        .filter(|o| o.class == c.class && o.id != trigger)
                        .map(|o| o.attempts[0].pid)
                        .collect();
                    if c.id != trigger {
                        assert_eq!(mates.len(), 1, "class: {} ran in one process", c.class);
                    }
                }
            }
            _ => {
                assert_eq!(started, attempts.len(), "case: one lane per attempt");
                assert_eq!(pids.len(), attempts.len(), "case: every attempt its own process");
            }
        }
        seen.push((mode, trigger, verdicts(&r)));
    }
    // `pool` and `class` hand card 0 the same cases in the same order: the same trigger and the
    // same verdict per case. `case` hands out one case at a time to whichever card is free, so
    // its trigger (the third launch on card 0) may be another case: the same verdicts, by shape.
    let (_, pool_trigger, pool) = &seen[0];
    let (_, class_trigger, class) = &seen[1];
    assert_eq!((class_trigger, class), (pool_trigger, pool), "class against pool");
    let shapes = |v: &BTreeMap<String, (Outcome, Vec<AttemptOutcome>)>| {
        let mut s: Vec<_> = v.values().cloned().collect();
        s.sort_by_key(|(o, a)| (o.to_string(), a.len()));
        s
    };
    let (_, _, case_mode) = &seen[2];
    assert_eq!(
        case_mode.keys().collect::<Vec<_>>(),
        pool.keys().collect::<Vec<_>>(),
        "case against pool: the same cases"
    );
    assert_eq!(shapes(case_mode), shapes(pool), "case against pool");
}

/// A card that cannot be recovered in-process: in every mode the lane escalates, a fresh process
/// takes over (re-running the sink's cases where it has any), the trigger is retried, and no case
/// ever runs on the poisoned context.
#[test]
fn a_failed_reset_gets_a_fresh_process_in_every_mode() {
    for mode in MODES {
        let sb = Sandbox::new();
        let plan = "dev=0:op_timeout@2;dev=0:force_reset_fail=3";
        let extra = ["--faults", plan, "--isolation", mode];
        let (ids, run) = sb.list_and_run("a5", "0", &["VectorAdd", "Matmul"], &extra);
        let r = run.consistent_report(0);
        let trigger = &ids[1];
        assert_retried_once(&r, trigger, AttemptOutcome::Failed);
        assert_others_passed_once(&r, &ids, trigger);
        let h = health(&r, 0);
        assert!(h.contains(&"reset_failed"), "{mode}: {h:?}");
        assert!(h.contains(&"fresh_process"), "{mode}: {h:?}");
        assert!(!h.contains(&"quarantined"), "{mode}: {h:?}");
        let poisoned_pid = case(&r, trigger).attempts[0].pid;
        for id in &ids[2..] {
            assert_ne!(
                case(&r, id).attempts[0].pid,
                poisoned_pid,
                "{mode}: {id} ran in the lane that could not reset its card"
            );
        }
        if mode != "case" {
            // The rest of the trigger's class was assigned to the escalating lane: its sink.
            let sunk = run.sink_reads(Some(0)).concat();
            assert!(
                sunk.iter().any(|s| s == &ids[2] || s == "VectorAdd::"),
                "{mode}: {sunk:?}"
            );
            // One card: the trigger's retry is still queued when the fresh lane starts, so it
            // runs in that lane's pass (the freshly started card), not in a lane after it.
            let fresh_pid = r.devices_health["0"]
                .iter()
                .find(|h| h.name() == "fresh_process")
                .and_then(|h| h.pid);
            assert_eq!(
                case(&r, trigger).attempts[1].pid,
                fresh_pid,
                "{mode}: the retry ran outside the fresh lane"
            );
        }
    }
}

/// A dead card is quarantined in every mode and its work finishes on the other card.
#[test]
fn a_dead_card_is_quarantined_in_every_mode() {
    for mode in MODES {
        let sb = Sandbox::new();
        let extra = ["--faults", "dev=1:dead", "--isolation", mode];
        let run = sb.run_cases("a5", "0,1", &["VectorAdd", "Matmul"], &extra);
        let r = run.consistent_report(0);
        for c in &r.cases {
            assert_eq!(c.outcome, Outcome::Passed, "{mode}: {}: {:?}", c.id, c.attempts);
            assert!(c.attempts.iter().all(|a| a.device == Some(0)), "{mode}: {}", c.id);
        }
        let h = health(&r, 1);
        assert!(h.contains(&"init_failed"), "{mode}: {h:?}");
        assert!(h.contains(&"fresh_process"), "{mode}: {h:?}");
        assert_eq!(h.last(), Some(&"quarantined"), "{mode}: {h:?}");
        assert!(health(&r, 0).is_empty(), "{mode}: {:?}", health(&r, 0));
    }
}

#[test]
fn a_bad_isolation_mode_is_a_usage_error_naming_it() {
    let sb = Sandbox::new();
    let run = sb.run("a5", &["--isolation", "thread"]);
    run.expect_code(2);
    assert!(run.stderr.contains("thread"), "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
}
