//! Cards that remember a quarantine (issue 9 item 4): such a card is checked first in a preflight
//! lane (no work, no sink); passing clears its record and gives it work, failing quarantines it at
//! once (its record kept), and a preflight killed from outside runs again.

use super::harness::*;
use crate::protocol::EXIT_NEEDS_FRESH_PROCESS;

#[test]
fn a_card_that_passes_its_preflight_is_cleared_and_gets_work() {
    let mut sim = Sim::with(
        &suite(&[("A", &["x"]), ("B", &["y"]), ("C", &["z"])]),
        2,
        settings(),
        &[0],
    );
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                   &["spawn 0 preflight on 0"]),
        (0, spawned(0, 100),           &["lane_started card0 pid 100", "spawn 1 regular on 1"]),
        (0, spawned(1, 101),           &["lane_started card1 pid 101", "run 1: A::x", "run 1: B::y"]),
        (5, exited(0, exit(0)),        &["lane_exited card0 pid 100 (exit 0)", "health card0 preflight_ok", "forget card0",
                                         "spawn 2 regular on 0"]),
        (5, spawned(2, 102),           &["lane_started card0 pid 102", "run 2: C::z"]),
    ]);
}

#[test]
fn a_card_that_fails_its_preflight_is_quarantined_at_once() {
    let mut sim = Sim::with(&suite_ab(), 2, settings(), &[0]);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                   &["spawn 0 preflight on 0"]),
        (0, spawned(0, 100),           &["lane_started card0 pid 100", "spawn 1 regular on 1"]),
        (0, spawned(1, 101),           &["lane_started card1 pid 101", "run 1: A::x A::y", "run 1: B::z"]),
        (1, init_failed(0, 0),         &["health card0 init_failed"]),
        (2, exited(0, exit(EXIT_NEEDS_FRESH_PROCESS)),
                                       &["lane_exited card0 pid 100 (exit 75)", "health card0 quarantined_at_start", "remember card0"]),
    ]);
}

#[test]
fn a_preflight_killed_from_outside_runs_again() {
    let mut sim = Sim::with(&suite_ab(), 1, settings(), &[0]);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                   &["spawn 0 preflight on 0"]),
        (0, spawned(0, 100),           &["lane_started card0 pid 100"]),
        (1, exited(0, signaled(9)),    &["lane_exited card0 pid 100 (signal 9)", "spawn 1 preflight on 0"]),
        (1, spawned(1, 101),           &["lane_started card0 pid 101"]),
        (2, exited(1, exit(0)),        &["lane_exited card0 pid 101 (exit 0)", "health card0 preflight_ok", "forget card0",
                                         "spawn 2 regular on 0"]),
    ]);
}
