//! N-card cases: their lane holds enough healthy cards and runs them; a multi-card lane that dies
//! is a strike of the multi-card lanes and its running case is retried; a card a multi-card lane
//! cannot init twice is quarantined, and cases that need more healthy cards than are left end
//! `failed`; a planned block reserves its planned cards; a multi-card lane done with its cases
//! releases its further cards and goes on as its own card's regular lane while work is left.

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

/// [`suite_with_multi`] on 2 cards up to the multi-card lane's block done: the lane asked to
/// release card 1.
fn asked_to_release() -> Sim {
    let mut sim = Sim::new(&suite_with_multi(), 2);
    #[rustfmt::skip]
    sim.table(vec![
        (0,  begin(),                   &["spawn 0 multi on 0,1"]),
        (0,  spawned(0, 100),           &["lane_started card0 pid 100", "run 0: M::m1 M::m2"]),
        (1,  started(0, "M::m1"),       &["started M::m1 card0 #1"]),
        (2,  passed(0, "M::m1"),        &["finished M::m1 card0 #1 passed"]),
        (3,  started(0, "M::m2"),       &["started M::m2 card0 #1"]),
        // Work is left: the lane is not closed but gives up card 1, and keeps card 0 (and the
        // worker it holds there).
        (4,  passed(0, "M::m2"),        &["finished M::m2 card0 #1 passed", "release 0"]),
    ]);
    sim
}

/// [`asked_to_release`] up to the release: card 1 given a lane of its own, `A::x` handed to the
/// released lane on card 0.
fn released_after_its_block() -> Sim {
    let mut sim = asked_to_release();
    #[rustfmt::skip]
    sim.table(vec![
        // Card 1 is free once the lane says so (not before): a lane of its own. The released lane
        // takes work on card 0 once that lane has started.
        (5,  released(0),               &["spawn 1 regular on 1"]),
        (6,  spawned(1, 101),           &["lane_started card1 pid 101", "run 0: A::x"]),
    ]);
    sim
}

#[test]
fn a_multi_card_lane_done_with_its_cases_goes_on_as_its_own_card_s_regular_lane() {
    let mut sim = released_after_its_block();
    #[rustfmt::skip]
    sim.table(vec![
        (7,  started(0, "A::x"),        &["started A::x card0 #1"]),
        (8,  passed(0, "A::x"),         &["finished A::x card0 #1 passed", "close 0", "close 1"]),
    ]);
}

#[test]
fn a_multi_card_lane_whose_cases_end_the_run_is_closed_not_released() {
    let rt = crate::case::Runtime::new("r");
    let only_multi = crate::case::Suite::new().class(
        crate::case::ClassSpec::pooled("M", rt).cases([crate::case::CaseSpec::trivial("m1").devices(2)]),
    );
    let mut sim = Sim::new(&only_multi, 2);
    #[rustfmt::skip]
    sim.table(vec![
        (0,  begin(),                   &["spawn 0 multi on 0,1"]),
        (0,  spawned(0, 100),           &["lane_started card0 pid 100", "run 0: M::m1"]),
        (1,  started(0, "M::m1"),       &["started M::m1 card0 #1"]),
        (2,  passed(0, "M::m1"),        &["finished M::m1 card0 #1 passed", "close 0"]),
    ]);
}

#[test]
fn a_released_lane_that_escalates_leaves_its_cases_to_its_sink_s_fresh_lane() {
    let mut sim = released_after_its_block();
    let escalated = exit(EXIT_NEEDS_FRESH_PROCESS);
    #[rustfmt::skip]
    sim.table(vec![
        // A regular lane now: its escalation's sink goes to a fresh lane on its card.
        (7,  exited_with_sink(0, escalated, &["A::x"]),
                                        &["lane_exited card0 pid 100 (exit 75)", "sink_read card0 [A::x]", "spawn 2 fresh on 0"]),
    ]);
}

#[test]
fn a_multi_card_lane_that_dies_while_releasing_frees_both_cards_for_regular_lanes() {
    let mut sim = asked_to_release();
    #[rustfmt::skip]
    sim.table(vec![
        // It crashes before it answers: a multi-card lane's exit (it held nothing); both cards
        // are free, each gets a regular lane, and the work left runs.
        (5,  exited(0, signaled(11)),   &["lane_exited card0 pid 100 (signal 11)", "spawn 1 regular on 0", "spawn 2 regular on 1"]),
        (6,  spawned(1, 101),           &["lane_started card0 pid 101"]),
        (6,  spawned(2, 102),           &["lane_started card1 pid 102", "run 1: A::x"]),
    ]);
}
