//! `--isolation`: in `class` every lane runs one unit (a class's cases) and closes, in `case` one
//! case; a lane closed by design exits 0, which is never a death and never a `fresh_process`.

use super::harness::*;
use crate::dispatch::policy::Isolation;

#[test]
fn class_isolation_runs_every_class_in_a_lane_of_its_own() {
    let mut s = settings();
    s.isolation = Isolation::Class;
    let mut sim = Sim::with(&suite_ab(), 1, s, &[]);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                   &["spawn 0 regular on 0"]),
        (0, spawned(0, 100),           &["lane_started card0 pid 100", "run 0: A::x A::y"]),
        (1, started(0, "A::x"),        &["started A::x card0 #1"]),
        (2, passed(0, "A::x"),         &["finished A::x card0 #1 passed"]),
        (3, started(0, "A::y"),        &["started A::y card0 #1"]),
        (4, passed(0, "A::y"),         &["finished A::y card0 #1 passed", "close 0"]),
        (5, exited(0, exit(0)),        &["lane_exited card0 pid 100 (exit 0)", "spawn 1 regular on 0"]),
        (5, spawned(1, 101),           &["lane_started card0 pid 101", "run 1: B::z"]),
        (6, started(1, "B::z"),        &["started B::z card0 #1"]),
        (7, passed(1, "B::z"),         &["finished B::z card0 #1 passed", "close 1"]),
        (8, exited(1, exit(0)),        &["lane_exited card0 pid 101 (exit 0)", "finish"]),
    ]);
    assert!(sim.health(0).is_empty(), "{:?}", sim.health(0));
}

#[test]
fn case_isolation_runs_every_case_in_a_lane_of_its_own() {
    let mut s = settings();
    s.isolation = Isolation::Case;
    let mut sim = Sim::with(&suite_ab(), 2, s, &[]);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                   &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, spawned(0, 100),           &["lane_started card0 pid 100"]),
        (0, spawned(1, 101),           &["lane_started card1 pid 101", "run 0: A::x", "run 1: A::y"]),
        (1, started(0, "A::x"),        &["started A::x card0 #1"]),
        (2, passed(0, "A::x"),         &["finished A::x card0 #1 passed", "close 0"]),
        (3, exited(0, exit(0)),        &["lane_exited card0 pid 100 (exit 0)", "spawn 2 regular on 0"]),
        (3, spawned(2, 102),           &["lane_started card0 pid 102", "run 2: B::z"]),
    ]);
}
