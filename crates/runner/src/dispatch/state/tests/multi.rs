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

#[test]
fn a_planned_block_reserves_the_cards_the_plan_has_it_on() {
    // Two blocks planned one after the other on cards 2 and 3 (the planner stacks them there
    // to save the inits another pair of cards would pay); cards 0 and 1 run A.
    let plan = vec![vec![(vec![0], 10)], Vec::new(), Vec::new(), Vec::new()];
    let blocks = vec![(vec![1], Some(vec![2, 3])), (vec![2], Some(vec![2, 3]))];
    let mut sim = Sim::planned_multi(&suite_with_multi(), 4, plan, blocks);
    #[rustfmt::skip]
    sim.table(vec![
        // The first block's cards are free: its lane goes first, on them. The second block waits
        // for the same cards (free cards 0 and 1 would do at once): they get regular lanes.
        (0,  begin(),                   &["spawn 0 multi on 2,3"]),
        (0,  spawned(0, 100),           &["lane_started card2 pid 100", "run 0: M::m1", "spawn 1 regular on 0", "spawn 2 regular on 1"]),
        (0,  spawned(1, 101),           &["lane_started card0 pid 101"]),
        (0,  spawned(2, 102),           &["lane_started card1 pid 102", "run 1: A::x"]),
        (1,  started(0, "M::m1"),       &["started M::m1 card2 #1"]),
        (2,  passed(0, "M::m1"),        &["finished M::m1 card2 #1 passed", "close 0"]),
        // Its lane gone, the second block's lane starts on cards 2 and 3.
        (3,  exited(0, exit(0)),        &["lane_exited card2 pid 100 (exit 0)", "spawn 3 multi on 2,3"]),
    ]);
}
