//! Hardware faults (issue 18 item 6): a case whose driver error is of class `hardware` takes its
//! card out of the run at once ("needs service", remembered so), with no force-reset loop: its
//! lane gets no more work and is closed, and the case is retried on another card. A later run
//! whose card's record says it needs service gives the card nothing, not even a preflight.

use platform_common::error::codes;
use platform_common::lease::HealthStatus;

use super::harness::*;

#[test]
fn a_hardware_fault_quarantines_its_card_at_once_and_the_case_runs_elsewhere() {
    let mut sim = Sim::new(&suite_ab(), 2);
    let ecc = codes::RT_HBM_MULTI_BIT_ECC_ERROR;
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                             &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, spawned(0, 100),                     &["lane_started card0 pid 100"]),
        (0, spawned(1, 101),                     &["lane_started card1 pid 101", "run 0: A::x A::y", "run 1: B::z"]),
        (1, started(0, "A::x"),                  &["started A::x card0 #1"]),
        // The card is out at once, remembered as needing service; its lane is closed.
        (2, failed_with_code(0, "A::x", ecc),    &["finished A::x card0 #1 failed", "health card0 quarantined", "remember card0 needs_service", "close 0", "retry A::x", "run 1: A::x"]),
        (3, started(0, "A::y"),                  &["started A::y card0 #1"]),
        (4, passed(0, "A::y"),                   &["finished A::y card0 #1 passed"]),
        (5, exited(0, exit(0)),                  &["lane_exited card0 pid 100 (exit 0)"]),
        (6, started(1, "B::z"),                  &["started B::z card1 #1"]),
        (7, passed(1, "B::z"),                   &["finished B::z card1 #1 passed"]),
        (8, started(1, "A::x"),                  &["started A::x card1 #2"]),
        (9, passed(1, "A::x"),                   &["finished A::x card1 #2 passed", "close 1"]),
        (10, exited(1, exit(0)),                 &["lane_exited card1 pid 101 (exit 0)", "finish"]),
    ]);
    assert_eq!(sim.verdicts(), ["A::x flaky", "A::y passed", "B::z passed"]);
    assert_eq!(sim.health(0), ["quarantined"]);
    let reason = sim.report().devices_health["0"][0].detail().to_owned();
    assert!(
        reason.starts_with("needs service: card 0 reported 507054"),
        "{reason}"
    );
}

#[test]
fn a_device_fault_is_no_hardware_fault() {
    let mut sim = Sim::new(&suite_ab(), 2);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                             &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, spawned(0, 100),                     &["lane_started card0 pid 100"]),
        (0, spawned(1, 101),                     &["lane_started card1 pid 101", "run 0: A::x A::y", "run 1: B::z"]),
        (1, started(0, "A::x"),                  &["started A::x card0 #1"]),
        (2, failed_with_code(0, "A::x", codes::RT_AICPU_EXCEPTION),
                                                 &["finished A::x card0 #1 failed", "retry A::x", "run 0: A::x"]),
    ]);
}

#[test]
fn a_card_that_needs_service_gets_no_work_and_no_preflight() {
    let mut sim = Sim::with_records(&suite_ab(), 2, settings(), &[(0, HealthStatus::NeedsService)]);
    #[rustfmt::skip]
    sim.table(vec![
        // No preflight: the card is out before any lane starts; its record is left as it is.
        (0, begin(),                             &["health card0 quarantined_at_start", "spawn 0 regular on 1"]),
        (0, spawned(0, 100),                     &["lane_started card1 pid 100", "run 0: A::x A::y", "run 0: B::z"]),
    ]);
    let reason = sim.report().devices_health["0"][0].detail().to_owned();
    assert!(
        reason.starts_with("needs service: card 0 has a health record that says needs_service at "),
        "{reason}"
    );
}
