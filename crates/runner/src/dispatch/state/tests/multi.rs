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
        // No phase: the N-card cases reserve both cards (free at once) and their lane goes first.
        (0,  begin(),                   &["spawn 0 multi on 0,1"]),
        (0,  spawned(0, 100),           &["lane_started card0 pid 100", "run 0: M::m1 M::m2"]),
        (1,  started(0, "M::m1"),       &["started M::m1 card0 #1"]),
        // It dies in m1: m1 is retried, a new multi-card lane runs what is left.
        (2,  exited(0, signaled(11)),   &["lane_exited card0 pid 100 (signal 11)", "finished M::m1 card0 #1 crashed", "retry M::m1",
                                          "spawn 1 multi on 0,1"]),
    ]);
}

#[test]
fn a_card_a_multi_card_lane_cannot_init_twice_is_quarantined_and_its_cases_end_failed() {
    let mut sim = Sim::new(&suite_with_multi(), 2);
    let escalated = exit(EXIT_NEEDS_FRESH_PROCESS);
    #[rustfmt::skip]
    sim.table(vec![
        (0,  begin(),                   &["spawn 0 multi on 0,1"]),
        (0,  spawned(0, 100),           &["lane_started card0 pid 100", "run 0: M::m1 M::m2"]),
        (1,  init_failed(0, 1),         &["health card1 init_failed"]),
        // The card's first: a fresh process in the next multi-card lane.
        (2,  exited(0, escalated),      &["lane_exited card0 pid 100 (exit 75)", "spawn 1 multi on 0,1"]),
    ]);
}
