//! The post-case health check end to end (`--health-check`, issue 9 item 1): a case that passes
//! but leaves its card poisoned (`poison_after@K`) is the one that pays, on both arches; with
//! `on-failure` the poison is met by the next case on that card instead, which is why `each` is
//! the default.

mod common;

use common::*;
use platform_common::FailureClass;
use runner::report::model::{AttemptOutcome, RunReport};

/// The cases with a failed attempt.
fn with_a_failed_attempt(r: &RunReport) -> Vec<String> {
    r.cases
        .iter()
        .filter(|c| c.attempts.iter().any(|a| a.outcome != AttemptOutcome::Passed))
        .map(|c| c.id.clone())
        .collect()
}

/// `VectorAdd` (one launch per case) on card 0 alone under `poison_after@2` with `mode`, in `sb`.
fn poisoned_run(sb: &Sandbox, arch: &str, mode: &str) -> (Vec<String>, Run) {
    let extra = ["--faults", "dev=0:poison_after@2", "--health-check", mode];
    let (ids, run) = sb.list_and_run(arch, "0", &["VectorAdd"], &extra);
    assert!(ids.len() >= 3, "{ids:?}");
    (ids, run)
}

#[test]
fn with_each_the_case_that_poisoned_the_card_pays_and_no_other() {
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::new();
        let (ids, run) = poisoned_run(&sb, arch, "each");
        let r = run.consistent_report(0);
        let order = started_on_card0(&run);
        let trigger = &order[1];
        assert_eq!(
            with_a_failed_attempt(&r),
            std::slice::from_ref(trigger),
            "{arch}\n{}",
            run.dump()
        );
        assert_retried_once(&r, trigger, AttemptOutcome::Failed);
        assert_others_passed_once(&r, &ids, trigger);
        let e = case(&r, trigger).attempts[0].error.clone().unwrap();
        assert_eq!(e.class, FailureClass::DeviceRuntime, "{arch}: {e:?}");
        assert!(
            e.message.starts_with("post-case health check failed: "),
            "{arch}: {}",
            e.message
        );
        assert!(
            e.call.is_some() && e.code.is_some(),
            "{arch}: the failing call is named: {e:?}"
        );
        assert!(e.post_case_check, "{arch}: typed as the check's finding: {e:?}");
        let h = health(&r, 0);
        assert!(
            h.contains(&"marked_unusable") && h.contains(&"force_reset") && h.contains(&"recovered"),
            "{arch}: healed as for any device fault: {h:?}"
        );
    }
}

#[test]
fn with_on_failure_the_next_case_on_the_card_is_blamed() {
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::new();
        let (ids, run) = poisoned_run(&sb, arch, "on-failure");
        let r = run.consistent_report(0);
        let order = started_on_card0(&run);
        let (trigger, victim) = (&order[1], &order[2]);
        assert_eq!(
            attempts(&r, trigger),
            [AttemptOutcome::Passed],
            "{arch}: the case that poisoned the card passed unnoticed"
        );
        assert_eq!(
            with_a_failed_attempt(&r),
            std::slice::from_ref(victim),
            "{arch}\n{}",
            run.dump()
        );
        assert_retried_once(&r, victim, AttemptOutcome::Failed);
        assert_others_passed_once(&r, &ids, victim);
        let e = case(&r, victim).attempts[0].error.clone().unwrap();
        assert_eq!(e.class, FailureClass::DeviceRuntime, "{arch}: {e:?}");
        assert!(!e.message.contains("health check"), "{arch}: {}", e.message);
        assert!(!e.post_case_check, "{arch}: {e:?}");
    }
}

#[test]
fn with_off_the_next_case_is_blamed_too_and_a_bad_mode_is_a_usage_error() {
    let sb = Sandbox::new();
    let (_, run) = poisoned_run(&sb, "a5", "off");
    let r = run.consistent_report(0);
    let order = started_on_card0(&run);
    assert_eq!(with_a_failed_attempt(&r), [order[2].clone()], "{}", run.dump());

    let bad = sb.run("a5", &["--health-check", "sometimes"]);
    bad.expect_code(2);
    assert!(bad.stderr.contains("--health-check"), "{}", bad.stderr);
    assert_eq!(bad.stderr.trim().lines().count(), 1, "{}", bad.stderr);
}
