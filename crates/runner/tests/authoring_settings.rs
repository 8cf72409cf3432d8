//! Per-case settings through a suite outside the runner crate (the test kit's `probe-suite`): a
//! timeout of its own shorter than `--case-timeout` times out a stalled case; retries of its own
//! override `--retries`; `expect_failure` passes on the expected failure (a device fault it
//! expects still heals the card) and fails when the case passes; `skip_if` skips with its reason
//! before hand-out, so a poison sink never sees the case.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::*;
use platform_common::FailureClass;
use runner::report::model::{AttemptOutcome as A, Event, Outcome, WorkerAction};

fn probe() -> PathBuf {
    cardguard_test_support::bins::probe_suite().unwrap()
}

#[test]
fn a_timeout_of_its_own_shorter_than_the_flag_times_out_a_stalled_case() {
    let sb = Sandbox::with_cards(1);
    let start = Instant::now();
    let run = sb.run_with(
        &probe(),
        "a5",
        &[
            "--devices",
            "0",
            "--case",
            "Settings::stall",
            "--faults",
            "dev=0:stall@1",
            "--case-timeout",
            "300",
        ],
    );
    let took = start.elapsed();
    let r = run.consistent_report(1);
    assert_eq!(
        attempts(&r, "Settings::stall"),
        [A::TimedOut],
        "its own retries (0) win"
    );
    assert_eq!(outcome(&r, "Settings::stall"), Outcome::TimedOut);
    let e = case(&r, "Settings::stall").attempts[0].error.clone().unwrap();
    assert!(
        e.message.starts_with("exceeded its own timeout of 1 s"),
        "{}",
        e.message
    );
    // 1 s, the 2 s grace, lane start and reports; far from --case-timeout's 300 s.
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

#[test]
fn retries_of_its_own_override_the_flag() {
    let sb = Sandbox::with_cards(1);
    // The case launches twice per attempt: launches 1, 3 and 5 fail its first three attempts.
    let run = sb.run_with(
        &probe(),
        "a2a3",
        &[
            "--devices",
            "0",
            "--case",
            "Settings::own_retries",
            "--retries",
            "0",
            "--faults",
            "dev=0:launch_fail@1;dev=0:launch_fail@3;dev=0:launch_fail@5",
        ],
    );
    let r = run.consistent_report(0);
    assert_eq!(
        attempts(&r, "Settings::own_retries"),
        [A::Failed, A::Failed, A::Failed, A::Passed],
        "3 retries of its own over --retries 0\n{}",
        run.dump()
    );
    assert_eq!(outcome(&r, "Settings::own_retries"), Outcome::Flaky);
}

#[test]
fn expect_failure_passes_on_the_expected_failure_and_fails_when_the_case_passes() {
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::with_cards(1);
        let run = sb.run_with(&probe(), arch, &["--devices", "0", "--case", "Expect"]);
        let r = run.consistent_report(1);
        assert_eq!(
            attempts(&r, "Expect::result"),
            [A::Passed],
            "{arch}: its expected result failure"
        );
        assert_eq!(
            attempts(&r, "Expect::bounds"),
            [A::Passed],
            "{arch}: its expected device fault, not retried"
        );
        let missing = &case(&r, "Expect::missing").attempts;
        assert_eq!(missing.len(), 1, "{arch}: never retried");
        let e = missing[0].error.as_ref().unwrap();
        assert_eq!(e.class, FailureClass::Result);
        assert!(
            e.message.starts_with("expected failure did not happen"),
            "{}",
            e.message
        );
        assert_eq!(outcome(&r, "Expect::missing"), Outcome::Failed);
        // The expected device fault still healed the card: the pooled worker was retired
        // (force reset, probe) and rebuilt for the next case.
        assert_eq!(
            health(&r, 0),
            ["poisoned", "marked_unusable", "force_reset", "probe", "recovered"],
            "{arch}"
        );
        let steps: Vec<WorkerAction> = run
            .journal()
            .into_iter()
            .filter_map(|e| match e {
                Event::Worker { action, .. } => Some(action),
                _ => None,
            })
            .collect();
        assert!(steps.contains(&WorkerAction::Retired), "{arch}: {steps:?}");
    }
}

#[test]
fn skip_if_skips_with_its_reason_and_the_sink_never_sees_it() {
    let sb = Sandbox::with_cards(1);
    // `trigger` fails and its card's reset never confirms: the lane escalates and writes the
    // rest of its assignment to the sink.
    let run = sb.run_with(
        &probe(),
        "a5",
        &[
            "--devices",
            "0",
            "--case",
            "Skips",
            "--case",
            "Settings::skipped",
            "--faults",
            "dev=0:launch_fail@1;dev=0:force_reset_fail=3",
        ],
    );
    let r = run.consistent_report(0);
    let skipped = case(&r, "Skips::skipped");
    assert_eq!(skipped.outcome, Outcome::Skipped);
    assert_eq!(skipped.skip_reason.as_deref(), Some("never runs here"));
    assert!(skipped.attempts.is_empty());
    let eight = case(&r, "Settings::skipped");
    assert_eq!(
        eight.skip_reason.as_deref(),
        Some("needs 8 cards for its all-to-all")
    );
    // The sink held what the lane had been given and not run (the case after the trigger, and
    // the trigger's retry when it was already handed out), never a skipped case.
    let sink: Vec<String> = run.sink_reads(Some(0)).concat();
    assert!(
        sink.contains(&"Skips::after".to_owned()),
        "{sink:?}\n{}",
        run.dump()
    );
    assert!(
        sink.iter().all(|s| s == "Skips::after" || s == "Skips::trigger"),
        "{sink:?}"
    );
    assert!(
        !run.journal()
            .iter()
            .any(|e| matches!(e, Event::CaseStarted { id, .. } if id.ends_with("::skipped"))),
        "a skipped case never reaches a lane"
    );
    assert_eq!(outcome(&r, "Skips::after"), Outcome::Passed);
    assert_eq!(outcome(&r, "Skips::trigger"), Outcome::Flaky);
}
