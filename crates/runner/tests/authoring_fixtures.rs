//! Class fixtures through a suite outside the runner crate (the test kit's `probe-suite`), counted
//! in the journal's `fixture` events: host data is built once per lane per class; device
//! resources are rebuilt when the pooled worker is rebuilt after an injected op-timeout in the
//! class; a setup failure fails every case of the class in that lane with class
//! `infrastructure`, reported once.

mod common;

use std::path::PathBuf;

use common::*;
use platform_common::FailureClass;
use runner::report::model::{AttemptOutcome as A, Event, FixturePart, Outcome};

fn probe() -> PathBuf {
    cardguard_test_support::bins::probe_suite().unwrap()
}

/// The journal's fixture events: (lane pid, part, case, error).
fn fixture_events(run: &Run) -> Vec<(u32, FixturePart, String, Option<String>)> {
    run.journal()
        .into_iter()
        .filter_map(|e| match e {
            Event::Fixture {
                pid,
                part,
                case,
                error,
                ..
            } => Some((pid, part, case, error)),
            _ => None,
        })
        .collect()
}

#[test]
fn host_data_once_per_lane_device_resources_again_after_an_op_timeout() {
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::with_cards(1);
        let run = sb.run_with(
            &probe(),
            arch,
            &[
                "--devices",
                "0",
                "--case",
                "Fixtured",
                "--faults",
                "dev=0:op_timeout@2",
            ],
        );
        let r = run.consistent_report(0);
        assert_eq!(
            attempts(&r, "Fixtured::one"),
            [A::Passed],
            "{arch}\n{}",
            run.dump()
        );
        assert_retried_once(&r, "Fixtured::two", A::Failed);
        assert_eq!(attempts(&r, "Fixtured::three"), [A::Passed], "{arch}");
        let events = fixture_events(&run);
        let host: Vec<_> = events.iter().filter(|e| e.1 == FixturePart::Host).collect();
        let device: Vec<_> = events.iter().filter(|e| e.1 == FixturePart::Device).collect();
        assert_eq!(host.len(), 1, "{arch}: host data once in the lane: {events:?}");
        assert_eq!(host[0].2, "Fixtured::one");
        assert_eq!(
            device.len(),
            2,
            "{arch}: device resources on the first and the rebuilt worker: {events:?}"
        );
        assert!(
            events.iter().all(|e| e.3.is_none() && e.0 == host[0].0),
            "{arch}: one lane, no failure"
        );
        assert_eq!(
            health(&r, 0),
            ["poisoned", "marked_unusable", "force_reset", "probe", "recovered"],
            "{arch}"
        );
    }
}

#[test]
fn a_setup_failure_fails_every_case_of_the_class_reported_once() {
    let sb = Sandbox::with_cards(1);
    let run = sb.run_with(
        &probe(),
        "a5",
        &["--devices", "0", "--case", "BrokenSetup", "--case", "Body::chain"],
    );
    let r = run.consistent_report(1);
    let message = |id: &str| {
        let c = case(&r, id);
        assert_eq!(c.outcome, Outcome::Failed, "{id}");
        assert_eq!(c.attempts.len(), 1, "{id}: infrastructure is never retried");
        let e = c.attempts[0].error.clone().unwrap();
        assert_eq!(e.class, FailureClass::Infrastructure, "{id}");
        e.message
    };
    assert_eq!(
        message("BrokenSetup::a"),
        "setup of class BrokenSetup failed: weights file /nonexistent/w.bin is missing"
    );
    for id in ["BrokenSetup::b", "BrokenSetup::c"] {
        assert_eq!(
            message(id),
            "setup of class BrokenSetup failed, see BrokenSetup::a"
        );
    }
    assert_eq!(
        outcome(&r, "Body::chain"),
        Outcome::Passed,
        "other classes are untouched"
    );
    let events = fixture_events(&run);
    assert_eq!(events.len(), 1, "one setup, once: {events:?}");
    assert_eq!(events[0].2, "BrokenSetup::a");
    assert!(events[0]
        .3
        .as_deref()
        .is_some_and(|e| e.contains("w.bin is missing")));
}
