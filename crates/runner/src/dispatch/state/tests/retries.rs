//! Retries (DESIGN section 5 steps 5 and 6): a device-class failure is retried (a pass then makes
//! the case `flaky`), a golden mismatch never is; a lane that escalates with a poison sink gets a
//! fresh lane on its card for the sink's cases, and that pass also takes the retries of the
//! card's failed cases still queued; a fresh lane that cannot recover its card quarantines it.

use platform_common::FailureClass;

use super::harness::*;
use crate::protocol::EXIT_NEEDS_FRESH_PROCESS;

const DEVICE: FailureClass = FailureClass::DeviceRuntime;

#[test]
fn a_device_error_is_retried_and_a_golden_mismatch_never_is() {
    let mut sim = Sim::new(&suite_ab(), 2);
    #[rustfmt::skip]
    sim.table(vec![
        (0,  begin(),                            &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0,  spawned(0, 100),                    &["lane_started card0 pid 100"]),
        (0,  spawned(1, 101),                    &["lane_started card1 pid 101", "run 0: A::x A::y", "run 1: B::z"]),
        (1,  started(0, "A::x"),                 &["started A::x card0 #1"]),
        // Retried first in the queue: the first lane with room takes it.
        (2,  failed(0, "A::x", DEVICE),          &["finished A::x card0 #1 failed", "retry A::x", "run 0: A::x"]),
        (3,  started(0, "A::y"),                 &["started A::y card0 #1"]),
        (4,  failed(0, "A::y", FailureClass::Result), &["finished A::y card0 #1 failed"]),
        (5,  started(0, "A::x"),                 &["started A::x card0 #2"]),
        (6,  passed(0, "A::x"),                  &["finished A::x card0 #2 passed"]),
        (7,  started(1, "B::z"),                 &["started B::z card1 #1"]),
        (8,  passed(1, "B::z"),                  &["finished B::z card1 #1 passed", "close 0", "close 1"]),
        (9,  exited(0, exit(0)),                 &["lane_exited card0 pid 100 (exit 0)"]),
        (9,  exited(1, exit(0)),                 &["lane_exited card1 pid 101 (exit 0)", "finish"]),
    ]);
    assert_eq!(sim.verdicts(), ["A::x flaky", "A::y failed", "B::z passed"]);
}

#[test]
fn a_fresh_lane_re_runs_the_sink_and_takes_its_cards_queued_retries() {
    let four = suite(&[("A", &["x", "y"]), ("B", &["z"]), ("C", &["w"]), ("D", &["v"])]);
    let mut sim = Sim::new(&four, 2);
    let escalated = exit(EXIT_NEEDS_FRESH_PROCESS);
    #[rustfmt::skip]
    sim.table(vec![
        (0,  begin(),                            &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0,  spawned(0, 100),                    &["lane_started card0 pid 100"]),
        (0,  spawned(1, 101),                    &["lane_started card1 pid 101", "run 0: A::x A::y", "run 1: B::z", "run 0: C::w", "run 1: D::v"]),
        (1,  started(0, "A::x"),                 &["started A::x card0 #1"]),
        // Both lanes hold two units: the retry waits in the queue.
        (2,  failed(0, "A::x", DEVICE),          &["finished A::x card0 #1 failed", "retry A::x"]),
        // The lane cannot recover its card: its sink names what it did not run.
        (3,  exited_with_sink(0, escalated, &["A::y", "C::"]),
                                                 &["lane_exited card0 pid 100 (exit 75)", "sink_read card0 [A::y C::]", "spawn 2 fresh on 0"]),
        // The fresh lane's one pass: the sink's cases, then the card's retry, in the worker it builds anyway.
        (3,  spawned(2, 102),                    &["lane_started card0 pid 102", "health card0 fresh_process", "run 2: A::y C::w A::x"]),
        (4,  started(2, "A::y"),                 &["started A::y card0 #1"]),
        (5,  passed(2, "A::y"),                  &["finished A::y card0 #1 passed"]),
        (6,  started(2, "C::w"),                 &["started C::w card0 #1"]),
        (7,  passed(2, "C::w"),                  &["finished C::w card0 #1 passed"]),
        (8,  started(2, "A::x"),                 &["started A::x card0 #2"]),
        // Its pass done, the fresh lane closes; nothing is queued for a new lane on card 0.
        (9,  passed(2, "A::x"),                  &["finished A::x card0 #2 passed", "close 2"]),
        (10, exited(2, exit(0)),                 &["lane_exited card0 pid 102 (exit 0)"]),
        (11, started(1, "B::z"),                 &["started B::z card1 #1"]),
        (12, passed(1, "B::z"),                  &["finished B::z card1 #1 passed"]),
        (13, started(1, "D::v"),                 &["started D::v card1 #1"]),
        (14, passed(1, "D::v"),                  &["finished D::v card1 #1 passed", "close 1"]),
        (15, exited(1, exit(0)),                 &["lane_exited card1 pid 101 (exit 0)", "finish"]),
    ]);
    assert_eq!(
        sim.verdicts(),
        [
            "A::x flaky",
            "A::y passed",
            "B::z passed",
            "C::w passed",
            "D::v passed"
        ]
    );
    assert_eq!(sim.health(0), ["fresh_process"]);
}

#[test]
fn a_fresh_lane_that_cannot_recover_its_card_quarantines_it() {
    let mut sim = Sim::new(&suite_ab(), 2);
    let escalated = exit(EXIT_NEEDS_FRESH_PROCESS);
    #[rustfmt::skip]
    sim.table(vec![
        (0,  begin(),                            &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0,  spawned(0, 100),                    &["lane_started card0 pid 100"]),
        (0,  spawned(1, 101),                    &["lane_started card1 pid 101", "run 0: A::x A::y", "run 1: B::z"]),
        (1,  exited_with_sink(0, escalated, &["A::"]),
                                                 &["lane_exited card0 pid 100 (exit 75)", "sink_read card0 [A::]", "spawn 2 fresh on 0"]),
        (1,  spawned(2, 102),                    &["lane_started card0 pid 102", "health card0 fresh_process", "run 2: A::x A::y"]),
        (2,  init_failed(2, 0),                  &["health card0 init_failed"]),
        // The fresh lane could not init either: the card is out; its cases go to card 1.
        (3,  exited(2, escalated),               &["lane_exited card0 pid 102 (exit 75)", "health card0 quarantined", "remember card0", "run 1: A::x A::y"]),
    ]);
    assert_eq!(sim.health(0), ["fresh_process", "init_failed", "quarantined"]);
}
