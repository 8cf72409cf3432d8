//! The clock rules applied: an init past `--init-timeout` ends its lane with a health event of its
//! card (a fresh process next; the second in a row quarantines it); a case past its timeout is
//! diagnosed (the lane's answer, the stacks) before its lane is ended, and its attempt carries the
//! diagnosis; a silent lane with work outstanding is ended by the watchdog, blaming the case it
//! had next; a closed lane that does not exit in time is killed.

use super::harness::*;
use crate::dispatch::state::Event;

#[test]
fn an_init_past_its_timeout_gives_the_card_a_fresh_process_and_the_second_quarantines_it() {
    let mut sim = Sim::new(&suite_ab(), 1);
    #[rustfmt::skip]
    sim.table(vec![
        (0,      begin(),                  &["spawn 0 regular on 0"]),
        (0,      spawned(0, 100),          &["lane_started card0 pid 100", "run 0: A::x A::y", "run 0: B::z"]),
        (1,      init_started(0, 0),       &[]),
        (30_000, tick(),                   &[]),
        // 30 s after the init started: the lane is ended; no case pays.
        (30_001, tick(),                   &["term 0", "health card0 init_timed_out"]),
        (32_001, tick(),                   &["kill 0"]),
        (32_002, exited(0, signaled(9)),   &["lane_exited card0 pid 100 (signal 9)", "spawn 1 regular on 0"]),
        (32_002, spawned(1, 101),          &["lane_started card0 pid 101", "health card0 fresh_process", "run 1: A::x A::y", "run 1: B::z"]),
        (32_010, init_started(1, 0),       &[]),
        (62_010, tick(),                   &["term 1", "health card0 init_timed_out"]),
        // The second in a row: the card is out, and with it the run's last card.
        (62_011, exited(1, signaled(15)),  &["lane_exited card0 pid 101 (signal 15)", "health card0 quarantined", "remember card0",
                                             "abandoned A::x", "abandoned A::y", "abandoned B::z", "finish"]),
    ]);
}

#[test]
fn an_init_done_clears_the_init_timeouts_in_a_row() {
    let mut sim = Sim::new(&suite_ab(), 1);
    sim.at(0, begin());
    sim.at(0, spawned(0, 100));
    sim.at(1, init_started(0, 0));
    sim.at(30_001, tick());
    sim.at(30_002, exited(0, signaled(15)));
    sim.at(30_002, spawned(1, 101));
    sim.at(30_003, init_started(1, 0));
    sim.at(30_004, init_done(1, 0));
    sim.at(30_005, init_started(1, 0));
    assert_eq!(sim.at(60_005, tick()), ["term 1", "health card0 init_timed_out"]);
    // Not two in a row: a fresh process again, not a quarantine.
    assert_eq!(
        sim.at(60_006, exited(1, signaled(15))),
        ["lane_exited card0 pid 101 (signal 15)", "spawn 2 regular on 0"]
    );
}

#[test]
fn a_hung_case_is_diagnosed_before_its_lane_is_ended_and_its_attempt_carries_the_diagnosis() {
    let mut settings = settings();
    settings.stack_tool = Some("eu-stack");
    let mut sim = Sim::with(&suite(&[("A", &["x"])]), 1, settings, &[]);
    #[rustfmt::skip]
    sim.table(vec![
        (0,      begin(),                  &["spawn 0 regular on 0"]),
        (0,      spawned(0, 100),          &["lane_started card0 pid 100", "run 0: A::x"]),
        (100,    started(0, "A::x"),       &["started A::x card0 #1"]),
        (10_099, tick(),                   &[]),
        // Its 10 s are up: where is it, and its stacks, before any signal.
        (10_100, tick(),                   &["where 0", "stacks 0"]),
        (10_200, answer(0, "A::x"),        &[]),
        (10_300, Event::Stacks(0, Ok("#0 spin()".into())), &["term 0"]),
        (12_300, tick(),                   &["kill 0"]),
        (12_301, exited(0, signaled(9)),   &["lane_exited card0 pid 100 (signal 9)", "finished A::x card0 #1 timed_out", "retry A::x",
                                             "spawn 1 regular on 0"]),
    ]);
    let r = sim.report();
    let d = r.cases[0].attempts[0]
        .output
        .diagnostics
        .as_ref()
        .expect("a diagnosis");
    assert!(d.answered);
    assert_eq!(d.stacks.as_deref(), Some("#0 spin()"));
    assert_eq!(d.stack_tool.as_deref(), Some("eu-stack"));
}

#[test]
fn a_diagnosis_that_gets_no_answer_ends_the_lane_at_its_bound() {
    let mut settings = settings();
    settings.stack_tool = Some("gdb");
    let mut sim = Sim::with(&suite(&[("A", &["x"])]), 1, settings, &[]);
    sim.at(0, begin());
    sim.at(0, spawned(0, 100));
    sim.at(0, started(0, "A::x"));
    assert_eq!(sim.at(10_000, tick()), ["where 0", "stacks 0"]);
    // Neither the answer nor the stacks: the stack tool's 5 s and half a second more.
    assert_eq!(
        sim.state.next_deadline(),
        Some(std::time::Duration::from_millis(15_500))
    );
    assert_eq!(sim.at(15_499, tick()), Vec::<String>::new());
    assert_eq!(sim.at(15_500, tick()), ["term 0"]);
    sim.at(15_501, exited(0, signaled(15)));
    let r = sim.report();
    let d = r.cases[0].attempts[0]
        .output
        .diagnostics
        .as_ref()
        .expect("a diagnosis");
    assert!(!d.answered);
    assert_eq!(
        d.notes,
        [
            "the lane did not say where it was within 1 s",
            "gdb did not report the stacks within 5 s"
        ]
    );
}

#[test]
fn a_silent_lane_with_work_is_ended_by_the_watchdog_and_its_next_case_pays() {
    let mut sim = Sim::new(&suite(&[("A", &["x"])]), 1);
    #[rustfmt::skip]
    sim.table(vec![
        (0,      begin(),                  &["spawn 0 regular on 0"]),
        (0,      spawned(0, 100),          &["lane_started card0 pid 100", "run 0: A::x"]),
        // Nothing heard for the case timeout, outside any case and any init.
        (10_000, tick(),                   &["term 0"]),
        (10_001, exited(0, signaled(15)),  &["lane_exited card0 pid 100 (signal 15)", "finished A::x card0 #1 timed_out", "retry A::x",
                                             "spawn 1 regular on 0"]),
    ]);
}

#[test]
fn a_closed_lane_that_does_not_exit_in_time_is_killed_at_once() {
    let mut sim = Sim::new(&suite(&[("A", &["x"])]), 1);
    #[rustfmt::skip]
    sim.table(vec![
        (0,      begin(),                  &["spawn 0 regular on 0"]),
        (0,      spawned(0, 100),          &["lane_started card0 pid 100", "run 0: A::x"]),
        (1,      started(0, "A::x"),       &["started A::x card0 #1"]),
        (2,      passed(0, "A::x"),        &["finished A::x card0 #1 passed", "close 0"]),
        // The close timeout (60 s here) passes: SIGKILL, no grace.
        (60_002, tick(),                   &["kill 0"]),
        (60_003, exited(0, signaled(9)),   &["lane_exited card0 pid 100 (signal 9)", "finish"]),
    ]);
    assert_eq!(sim.verdicts(), ["A::x passed"]);
}
