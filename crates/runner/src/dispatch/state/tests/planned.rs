//! `--order smart`: each lane takes its card's planned units in order; a lane whose card has no
//! planned work left and that holds nothing steals the longest unit left in another card's plan;
//! a retry goes out first (where: `placement`).

use platform_common::FailureClass;

use super::harness::*;

/// Classes `A` (x, y), `B` (z), `C` (w), `D` (v), `E` (u): cases 0 to 5 in that order.
fn suite5() -> crate::case::Suite {
    suite(&[
        ("A", &["x", "y"]),
        ("B", &["z"]),
        ("C", &["w"]),
        ("D", &["v"]),
        ("E", &["u"]),
    ])
}

#[test]
fn lanes_follow_the_plan_and_a_card_that_runs_ahead_steals_the_longest_unit() {
    // Card 0: C; card 1: A, B, then E (10 ms) and D (30 ms) it has not taken yet.
    let plan = vec![
        vec![(vec![3], 100)],
        vec![(vec![0, 1], 60), (vec![2], 40), (vec![5], 10), (vec![4], 30)],
    ];
    let mut sim = Sim::planned(&suite5(), 2, plan);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                 &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, spawned(0, 100),         &["lane_started card0 pid 100"]),
        // Card 0 runs its one unit and waits (it holds work: no stealing); card 1 takes two.
        (0, spawned(1, 101),         &["lane_started card1 pid 101", "run 0: C::w", "run 1: A::x A::y", "run 1: B::z"]),
        (1, started(0, "C::w"),      &["started C::w card0 #1"]),
        // Card 0 ran ahead: it steals D (30 ms), the longest left, not E, the next in card 1's plan.
        (2, passed(0, "C::w"),       &["finished C::w card0 #1 passed", "run 0: D::v"]),
        (3, started(1, "A::x"),      &["started A::x card1 #1"]),
        (4, passed(1, "A::x"),       &["finished A::x card1 #1 passed"]),
        (5, started(1, "A::y"),      &["started A::y card1 #1"]),
        // Card 1 finished a unit: it takes E, its own.
        (6, passed(1, "A::y"),       &["finished A::y card1 #1 passed", "run 1: E::u"]),
    ]);
}

#[test]
fn a_retry_goes_out_before_the_plan_to_its_own_card_holding_its_runtime() {
    let plan = vec![
        vec![(vec![0, 1], 60)],
        vec![(vec![2], 40), (vec![3], 30), (vec![4], 20), (vec![5], 10)],
    ];
    let mut sim = Sim::planned(&suite5(), 2, plan);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                 &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, spawned(0, 100),         &["lane_started card0 pid 100"]),
        (0, spawned(1, 101),         &["lane_started card1 pid 101", "run 0: A::x A::y", "run 1: B::z", "run 1: C::w"]),
        (1, started(1, "B::z"),      &["started B::z card1 #1"]),
        // The retry is queued ahead of every plan. Both cards end what they hold on its runtime
        // (one runtime here): card 0 asks first, but its own card 1 takes it, behind C.
        (2, failed(1, "B::z", FailureClass::DeviceRuntime),
                                     &["finished B::z card1 #1 failed", "retry B::z", "run 1: B::z"]),
    ]);
}
