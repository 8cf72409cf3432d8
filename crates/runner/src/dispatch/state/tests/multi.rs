//! The multi-card phase: once every single-card case has its verdict the regular lanes close and
//! one lane holding enough healthy cards runs the multi-card cases; a multi-card lane that dies
//! is a strike of the multi-card lanes and its running case is retried; a card a multi-card lane
//! cannot init twice is quarantined, and cases that need more healthy cards than are left end
//! `failed`.

use super::harness::*;
use crate::protocol::EXIT_NEEDS_FRESH_PROCESS;

#[test]
fn a_lane_that_dies_during_a_multi_card_case_is_replaced_and_the_case_retried() {
    let mut sim = Sim::new(&suite_with_multi(), 2);
    #[rustfmt::skip]
    sim.table(vec![
        (0,  begin(),                   &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0,  spawned(0, 100),           &["lane_started card0 pid 100"]),
        (0,  spawned(1, 101),           &["lane_started card1 pid 101", "run 0: A::x"]),
        (1,  started(0, "A::x"),        &["started A::x card0 #1"]),
        // The single-card cases are done: every lane closes before the phase (one process per card).
        (2,  passed(0, "A::x"),         &["finished A::x card0 #1 passed", "close 0", "close 1"]),
        (3,  exited(0, exit(0)),        &["lane_exited card0 pid 100 (exit 0)"]),
        (4,  exited(1, exit(0)),        &["lane_exited card1 pid 101 (exit 0)", "spawn 2 multi on 0,1"]),
        (4,  spawned(2, 102),           &["lane_started card0 pid 102", "run 2: M::m1 M::m2"]),
        (5,  started(2, "M::m1"),       &["started M::m1 card0 #1"]),
        // It dies in m1: m1 is retried, a new multi-card lane runs what is left.
        (6,  exited(2, signaled(11)),   &["lane_exited card0 pid 102 (signal 11)", "finished M::m1 card0 #1 crashed", "retry M::m1",
                                          "spawn 3 multi on 0,1"]),
        (6,  spawned(3, 103),           &["lane_started card0 pid 103", "run 3: M::m2 M::m1"]),
        (7,  started(3, "M::m2"),       &["started M::m2 card0 #1"]),
        (8,  passed(3, "M::m2"),        &["finished M::m2 card0 #1 passed"]),
        (9,  started(3, "M::m1"),       &["started M::m1 card0 #2"]),
        (10, passed(3, "M::m1"),        &["finished M::m1 card0 #2 passed", "close 3"]),
        (11, exited(3, exit(0)),        &["lane_exited card0 pid 103 (exit 0)", "finish"]),
    ]);
    assert_eq!(sim.verdicts(), ["A::x passed", "M::m1 flaky", "M::m2 passed"]);
}

#[test]
fn a_card_a_multi_card_lane_cannot_init_twice_is_quarantined_and_its_cases_end_failed() {
    let mut sim = Sim::new(&suite_with_multi(), 2);
    let escalated = exit(EXIT_NEEDS_FRESH_PROCESS);
    sim.at(0, begin());
    sim.at(0, spawned(0, 100));
    sim.at(0, spawned(1, 101));
    sim.at(1, started(0, "A::x"));
    sim.at(2, passed(0, "A::x"));
    sim.at(3, exited(0, exit(0)));
    #[rustfmt::skip]
    sim.table(vec![
        (4,  exited(1, exit(0)),        &["lane_exited card1 pid 101 (exit 0)", "spawn 2 multi on 0,1"]),
        (4,  spawned(2, 102),           &["lane_started card0 pid 102", "run 2: M::m1 M::m2"]),
        (5,  init_failed(2, 1),         &["health card1 init_failed"]),
        // The card's first: a fresh process in the next multi-card lane.
        (6,  exited(2, escalated),      &["lane_exited card0 pid 102 (exit 75)", "spawn 3 multi on 0,1"]),
        (6,  spawned(3, 103),           &["lane_started card0 pid 103", "health card1 fresh_process", "run 3: M::m1 M::m2"]),
        (7,  init_failed(3, 1),         &["health card1 init_failed"]),
        // The second: card 1 is out; two cards are needed, one is left.
        (8,  exited(3, escalated),      &["lane_exited card0 pid 103 (exit 75)", "health card1 quarantined", "remember card1",
                                          "abandoned M::m1", "abandoned M::m2", "finish"]),
    ]);
    assert_eq!(sim.verdicts(), ["A::x passed", "M::m1 failed", "M::m2 failed"]);
}
