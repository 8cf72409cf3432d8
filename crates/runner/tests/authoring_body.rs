//! Host-code cases through the suite binary of a suite outside the runner crate (the test kit's
//! `probe-suite`, which hands its suite to `runner::app::main`): a device error inside a host
//! body heals the card and the case ends `flaky`; a comparison failure is not retried; a panic
//! fails only its case and the lane and its pooled worker go on; a body that swallows a device
//! error does not hide it. On both arches, on simulated cards.

mod common;

use std::path::PathBuf;

use common::*;
use platform_common::FailureClass;
use runner::report::model::{AttemptOutcome as A, Event, Outcome, WorkerAction};

fn probe() -> PathBuf {
    cardguard_test_support::bins::probe_suite().unwrap()
}

/// The journal's worker steps of runtime `probe`, in order.
fn worker_steps(run: &Run) -> Vec<WorkerAction> {
    run.journal()
        .into_iter()
        .filter_map(|e| match e {
            Event::Worker { runtime, action, .. } if runtime == "probe" => Some(action),
            _ => None,
        })
        .collect()
}

#[test]
fn host_bodies_fail_with_their_class_and_a_panic_fails_only_its_case() {
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::with_cards(1);
        let run = sb.run_with(&probe(), arch, &["--devices", "0", "--case", "Body"]);
        let r = run.consistent_report(1);
        for ok in ["Body::chain", "Body::leak", "Body::after_panic", "Body::swallow"] {
            assert_eq!(attempts(&r, ok), [A::Passed], "{arch} {ok}\n{}", run.dump());
        }
        let panic = &case(&r, "Body::panics").attempts;
        assert_eq!(panic.len(), 1, "{arch}: a panic is never retried");
        let e = panic[0].error.as_ref().unwrap();
        assert_eq!(e.class, FailureClass::Result, "{arch}");
        assert!(
            e.message.contains("panicked at ") && e.message.contains("probe panic in Body::panics"),
            "{arch}: {}",
            e.message
        );
        let stderr = panic[0].output.stderr.as_deref().unwrap_or_default();
        assert!(
            stderr.contains("probe panic in Body::panics"),
            "{arch}: the panic's own lines are the attempt's output: {stderr:?}"
        );
        let mismatch = &case(&r, "Body::mismatch").attempts;
        assert_eq!(mismatch.len(), 1, "{arch}: a comparison failure is never retried");
        let e = mismatch[0].error.as_ref().unwrap();
        assert_eq!(e.class, FailureClass::Result);
        assert!(
            e.message
                .starts_with("golden mismatch: 1 of 2 values out of tolerance"),
            "{}",
            e.message
        );
        // One pooled worker served the whole class: neither the panic nor the mismatch retired it.
        assert_eq!(
            worker_steps(&run),
            [WorkerAction::Built, WorkerAction::Closed],
            "{arch}"
        );
        // One lane did it all.
        let pids: std::collections::BTreeSet<_> = r
            .cases
            .iter()
            .flat_map(|c| c.attempts.iter().map(|a| a.pid))
            .collect();
        assert_eq!(pids.len(), 1, "{arch}: {pids:?}");
    }
}

#[test]
fn a_device_error_inside_a_host_body_heals_the_card_and_the_case_ends_flaky() {
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::with_cards(1);
        let run = sb.run_with(
            &probe(),
            arch,
            &[
                "--devices",
                "0",
                "--case",
                "Body::chain",
                "--faults",
                "dev=0:launch_fail@2",
            ],
        );
        let r = run.consistent_report(0);
        assert_retried_once(&r, "Body::chain", A::Failed);
        let first = case(&r, "Body::chain").attempts[0].error.clone().unwrap();
        assert_eq!(first.class, FailureClass::DeviceRuntime, "{arch}");
        assert_eq!(
            first.code.map(|c| c.raw),
            Some(207001),
            "{arch}: the launch's own code"
        );
        assert!(
            first.message.starts_with("launch vector_add: "),
            "{arch}: {}",
            first.message
        );
        assert_eq!(
            health(&r, 0),
            ["poisoned", "marked_unusable", "force_reset", "probe", "recovered"],
            "{arch}"
        );
        assert_eq!(
            worker_steps(&run),
            [
                WorkerAction::Built,
                WorkerAction::Retired,
                WorkerAction::Built,
                WorkerAction::Closed
            ],
            "{arch}: the pooled worker was retired and rebuilt"
        );
    }
}

#[test]
fn a_body_that_swallows_a_device_error_does_not_hide_it() {
    let sb = Sandbox::with_cards(1);
    let run = sb.run_with(
        &probe(),
        "a5",
        &[
            "--devices",
            "0",
            "--case",
            "Body::swallow",
            "--faults",
            "dev=0:launch_fail@1",
        ],
    );
    let r = run.consistent_report(0);
    assert_retried_once(&r, "Body::swallow", A::Failed);
    let e = case(&r, "Body::swallow").attempts[0].error.clone().unwrap();
    assert_eq!(e.class, FailureClass::DeviceRuntime);
    assert!(
        e.message.contains("the body passed") && e.message.contains("never hidden"),
        "{}",
        e.message
    );
    assert_eq!(outcome(&r, "Body::swallow"), Outcome::Flaky);
}
