//! Lane deaths in a row (DESIGN section 5 step 7): each unclean exit is a strike against its
//! card, a finished case clears them, and the fourth in a row quarantines the card (remembered
//! beside its lock); its work moves to the healthy card, and with no healthy card left every open
//! case ends `failed`.

use super::harness::*;
use crate::dispatch::policy::MAX_LANE_DEATHS;

/// Five one-case classes.
fn five() -> crate::case::Suite {
    suite(&[
        ("A", &["x"]),
        ("B", &["y"]),
        ("C", &["z"]),
        ("D", &["w"]),
        ("E", &["v"]),
    ])
}

#[test]
fn four_deaths_in_a_row_quarantine_a_card_and_its_work_moves_to_the_healthy_one() {
    assert_eq!(MAX_LANE_DEATHS, 4, "the table below dies four times");
    let mut sim = Sim::new(&five(), 2);
    let crash = signaled(11);
    #[rustfmt::skip]
    sim.table(vec![
        (0,  begin(),              &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0,  spawned(0, 100),      &["lane_started card0 pid 100"]),
        // Work goes out once both lanes run: round-robin, two units each.
        (0,  spawned(1, 101),      &["lane_started card1 pid 101", "run 0: A::x", "run 1: B::y", "run 0: C::z", "run 1: D::w"]),
        // Death 1, between cases: nobody is blamed, its units go back first, a fresh process next.
        (5,  exited(0, crash),     &["lane_exited card0 pid 100 (signal 11)", "spawn 2 regular on 0"]),
        (5,  spawned(2, 102),      &["lane_started card0 pid 102", "health card0 fresh_process", "run 2: A::x", "run 2: C::z"]),
        // Death 2.
        (9,  exited(2, crash),     &["lane_exited card0 pid 102 (signal 11)", "spawn 3 regular on 0"]),
        (9,  spawned(3, 103),      &["lane_started card0 pid 103", "health card0 fresh_process", "run 3: A::x", "run 3: C::z"]),
        // Death 3.
        (12, exited(3, crash),     &["lane_exited card0 pid 103 (signal 11)", "spawn 4 regular on 0"]),
        (12, spawned(4, 104),      &["lane_started card0 pid 104", "health card0 fresh_process", "run 4: A::x", "run 4: C::z"]),
        // Death 4: the card is out, remembered; its units wait for card 1.
        (15, exited(4, crash),     &["lane_exited card0 pid 104 (signal 11)", "health card0 quarantined", "remember card0"]),
        (20, started(1, "B::y"),   &["started B::y card1 #1"]),
        (21, passed(1, "B::y"),    &["finished B::y card1 #1 passed", "run 1: A::x"]),
        (22, started(1, "D::w"),   &["started D::w card1 #1"]),
        (23, passed(1, "D::w"),    &["finished D::w card1 #1 passed", "run 1: C::z"]),
        (24, started(1, "A::x"),   &["started A::x card1 #1"]),
        (25, passed(1, "A::x"),    &["finished A::x card1 #1 passed", "run 1: E::v"]),
        (26, started(1, "C::z"),   &["started C::z card1 #1"]),
        (27, passed(1, "C::z"),    &["finished C::z card1 #1 passed"]),
        (28, started(1, "E::v"),   &["started E::v card1 #1"]),
        // The last verdict: the lanes close; the run ends when they are gone.
        (29, passed(1, "E::v"),    &["finished E::v card1 #1 passed", "close 1"]),
        (30, exited(1, exit(0)),   &["lane_exited card1 pid 101 (exit 0)", "finish"]),
    ]);
    assert_eq!(
        sim.verdicts(),
        [
            "A::x passed",
            "B::y passed",
            "C::z passed",
            "D::w passed",
            "E::v passed"
        ]
    );
    assert_eq!(
        sim.health(0),
        ["fresh_process", "fresh_process", "fresh_process", "quarantined"]
    );
}

#[test]
fn a_case_finished_on_the_card_clears_its_deaths_in_a_row() {
    let mut sim = Sim::new(&five(), 2);
    let crash = signaled(11);
    sim.at(0, begin());
    sim.at(0, spawned(0, 100));
    sim.at(0, spawned(1, 101));
    // Three deaths on card 0 (lanes 0, 2, 3), each replaced.
    let mut lane = 0;
    for (n, next) in [(1, 2), (2, 3), (3, 4)] {
        let got = sim.at(n, exited(lane, crash));
        assert_eq!(
            got.last().unwrap(),
            &format!("spawn {next} regular on 0"),
            "death {n}"
        );
        sim.at(n, spawned(next, 100 + next as u32));
        lane = next;
    }
    // A case finishes on the card: the deaths are no longer in a row.
    sim.at(10, started(lane, "A::x"));
    sim.at(11, passed(lane, "A::x"));
    for (n, next) in [(4, 5), (5, 6), (6, 7)] {
        let got = sim.at(20 + n, exited(lane, crash));
        assert_eq!(
            got.last().unwrap(),
            &format!("spawn {next} regular on 0"),
            "death {n} ({} in a row)",
            n - 3
        );
        sim.at(20 + n, spawned(next, 100 + next as u32));
        lane = next;
    }
    assert!(!sim.health(0).contains(&"quarantined"), "{:?}", sim.health(0));
}

#[test]
fn with_no_healthy_card_left_every_open_case_ends_failed() {
    let mut sim = Sim::new(&suite_ab(), 1);
    let crash = signaled(11);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),             &["spawn 0 regular on 0"]),
        (0, spawned(0, 100),     &["lane_started card0 pid 100", "run 0: A::x A::y", "run 0: B::z"]),
        (1, started(0, "A::x"),  &["started A::x card0 #1"]),
        (2, passed(0, "A::x"),   &["finished A::x card0 #1 passed"]),
        (3, exited(0, crash),    &["lane_exited card0 pid 100 (signal 11)", "spawn 1 regular on 0"]),
        (3, spawned(1, 101),     &["lane_started card0 pid 101", "health card0 fresh_process", "run 1: A::y", "run 1: B::z"]),
        (4, exited(1, crash),    &["lane_exited card0 pid 101 (signal 11)", "spawn 2 regular on 0"]),
        (4, spawned(2, 102),     &["lane_started card0 pid 102", "health card0 fresh_process", "run 2: A::y", "run 2: B::z"]),
        (5, exited(2, crash),    &["lane_exited card0 pid 102 (signal 11)", "spawn 3 regular on 0"]),
        (5, spawned(3, 103),     &["lane_started card0 pid 103", "health card0 fresh_process", "run 3: A::y", "run 3: B::z"]),
        // The fourth death quarantines the last card: every open case is abandoned, the run ends.
        (6, exited(3, crash),    &["lane_exited card0 pid 103 (signal 11)", "health card0 quarantined", "remember card0",
                                   "abandoned A::y", "abandoned B::z", "finish"]),
    ]);
    assert_eq!(sim.verdicts(), ["A::x passed", "A::y failed", "B::z failed"]);
}
