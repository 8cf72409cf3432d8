//! SIGINT / SIGTERM (issue 8 item 4): the run stops handing out work, every lane is ended
//! (SIGTERM, the grace, SIGKILL), nobody is blamed for the deaths, and once every lane is gone
//! every case without a verdict is `skipped`.

use std::time::Duration;

use super::harness::*;
use crate::dispatch::policy::KILL_GRACE;
use crate::report::model::Interruption;

#[test]
fn a_signal_ends_every_lane_and_gives_every_case_a_verdict() {
    assert_eq!(KILL_GRACE, Duration::from_secs(2), "the table below waits 2 s");
    let mut sim = Sim::new(&suite_ab(), 2);
    #[rustfmt::skip]
    sim.table(vec![
        (0,    begin(),                         &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0,    spawned(0, 100),                 &["lane_started card0 pid 100"]),
        (0,    spawned(1, 101),                 &["lane_started card1 pid 101", "run 0: A::x A::y", "run 1: B::z"]),
        (1,    started(0, "A::x"),              &["started A::x card0 #1"]),
        (2,    passed(0, "A::x"),               &["finished A::x card0 #1 passed"]),
        (3,    started(1, "B::z"),              &["started B::z card1 #1"]),
        (10,   interrupted(Interruption::Sigint),
                                                &["interrupted (SIGINT)", "close 0 (interrupted)", "term 0", "close 1 (interrupted)", "term 1"]),
        // No blame, no retry, no new lane.
        (11,   exited(0, signaled(15)),         &["lane_exited card0 pid 100 (signal 15)"]),
        (2009, tick(),                          &[]),
        // Lane 1 ignored SIGTERM: SIGKILL after the grace.
        (2010, tick(),                          &["kill 1"]),
        (2011, exited(1, signaled(9)),          &["lane_exited card1 pid 101 (signal 9)", "skipped A::y", "skipped B::z", "finish"]),
        // Nothing follows the end.
        (2012, tick(),                          &[]),
    ]);
    assert_eq!(sim.verdicts(), ["A::x passed", "A::y skipped", "B::z skipped"]);
    assert!(sim.state.finished());
}

#[test]
fn a_lane_being_ended_keeps_its_termination_and_a_second_signal_changes_nothing() {
    let mut sim = Sim::new(&suite_ab(), 1);
    sim.at(0, begin());
    sim.at(0, spawned(0, 100));
    sim.at(1, started(0, "A::x"));
    // The case passes its timeout: diagnosis (no stack tool), then SIGTERM once the lane answers.
    assert_eq!(sim.at(10_001, tick()), ["where 0"]);
    assert_eq!(sim.at(10_002, answer(0, "A::x")), ["term 0"]);
    // The signal does not restart the lane's end: its SIGKILL is still due at the first grace's end.
    #[rustfmt::skip]
    sim.table(vec![
        (10_500, interrupted(Interruption::Sigterm), &["interrupted (SIGTERM)", "close 0 (interrupted)"]),
        (10_600, interrupted(Interruption::Sigint),  &[]),
        (12_002, tick(),                             &["kill 0"]),
        (12_003, exited(0, signaled(9)),             &["lane_exited card0 pid 100 (signal 9)", "skipped A::x", "skipped A::y", "skipped B::z", "finish"]),
    ]);
}
