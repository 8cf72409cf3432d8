//! The host's faults, never the card's: a lane killed by a signal the dispatcher did not send (its
//! case's attempt is `infrastructure` and retried, the card gets no death, and only
//! [`MAX_INFRA_KILLS`] such kills in a row take the card out, unremembered); a card whose lease no
//! longer holds (no more work for it, the run's closing error names it); a lane that cannot be
//! started.

use platform_common::lease::{LeaseError, LockFileNow};

use super::harness::*;
use crate::dispatch::policy::MAX_INFRA_KILLS;
use crate::dispatch::state::{Event, NotSpawned};
use crate::protocol::ToLane;

fn lost(card: u32) -> LeaseError {
    LeaseError::LockFileReplaced {
        card,
        path: format!("/locks/card-{card}.lock").into(),
        now: LockFileNow::Missing,
    }
}

#[test]
fn a_kill_from_outside_retries_its_case_and_is_no_death_of_the_card() {
    let mut sim = Sim::new(&suite_ab(), 2);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                   &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, spawned(0, 100),           &["lane_started card0 pid 100"]),
        (0, spawned(1, 101),           &["lane_started card1 pid 101", "run 0: A::x A::y", "run 1: B::z"]),
        (1, started(0, "A::x"),        &["started A::x card0 #1"]),
        // SIGKILL, which the dispatcher did not send (the OOM killer, an operator).
        (2, exited(0, signaled(9)),    &["lane_exited card0 pid 100 (signal 9)", "finished A::x card0 #1 crashed", "retry A::x",
                                         "spawn 2 regular on 0"]),
        (2, spawned(2, 102),           &["lane_started card0 pid 102", "health card0 fresh_process", "run 1: A::y", "run 2: A::x"]),
    ]);
    let r = sim.report();
    let error = r.cases[0].attempts[0].error.as_ref().unwrap();
    assert_eq!(error.class, platform_common::FailureClass::Infrastructure);
}

#[test]
fn kills_from_outside_in_a_row_take_the_card_out_at_their_bound_unremembered() {
    let mut sim = Sim::new(&suite(&[("A", &["x"]), ("B", &["y"]), ("C", &["z"])]), 2);
    sim.at(0, begin());
    sim.at(0, spawned(0, 100));
    sim.at(0, spawned(1, 101));
    // Between cases, again and again: no attempt pays, the card only counts them.
    let mut lane = 0;
    for n in 1..MAX_INFRA_KILLS {
        let got = sim.at(u64::from(n), exited(lane, signaled(9)));
        let next = lane.max(1) + 1;
        assert_eq!(
            got.last().unwrap(),
            &format!("spawn {next} regular on 0"),
            "kill {n}"
        );
        sim.at(u64::from(n), spawned(next, 100 + next as u32));
        lane = next;
    }
    let got = sim.at(100, exited(lane, signaled(9)));
    assert_eq!(
        got,
        [
            format!("lane_exited card0 pid {} (signal 9)", 100 + lane),
            "health card0 quarantined".to_owned()
        ],
        "blamed on the host: no health record is written for the card"
    );
}

#[test]
fn a_card_whose_lease_is_lost_gets_no_more_work_and_the_run_keeps_the_loss() {
    let mut sim = Sim::new(&suite(&[("A", &["x"]), ("B", &["y"]), ("C", &["z"])]), 2);
    let refused = ToLane::Run {
        batch: 3,
        cases: vec!["C::z".into()],
    };
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                   &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, spawned(0, 100),           &["lane_started card0 pid 100"]),
        (0, spawned(1, 101),           &["lane_started card1 pid 101", "run 0: A::x", "run 1: B::y", "run 0: C::z"]),
        // The process layer found card 0's lock file gone as it was to send C::z.
        (0, Event::NotSent { lane: 0, msg: refused, lost: lost(0) },
                                       &["health card0 quarantined", "run 1: C::z"]),
        (1, started(0, "A::x"),        &["started A::x card0 #1"]),
        (2, passed(0, "A::x"),         &["finished A::x card0 #1 passed"]),
        (3, started(1, "B::y"),        &["started B::y card1 #1"]),
        (4, passed(1, "B::y"),         &["finished B::y card1 #1 passed"]),
        (5, started(1, "C::z"),        &["started C::z card1 #1"]),
        (6, passed(1, "C::z"),         &["finished C::z card1 #1 passed", "close 0", "close 1"]),
    ]);
    assert_eq!(sim.verdicts(), ["A::x passed", "B::y passed", "C::z passed"]);
    let lost = sim.state.take_leases_lost();
    assert_eq!(lost.len(), 1);
    assert!(lost[0].to_string().contains("card-0.lock"), "{}", lost[0]);
}

#[test]
fn a_lane_that_cannot_be_started_takes_its_card_out_and_its_work_goes_elsewhere() {
    let mut sim = Sim::new(&suite_ab(), 2);
    let eagain = std::io::Error::from_raw_os_error(11);
    #[rustfmt::skip]
    sim.table(vec![
        (0, begin(),                   &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, Event::NotSpawned { lane: 0, why: NotSpawned::Failed { error: eagain, tries: 5 } },
                                       &["health card0 quarantined"]),
        (0, spawned(1, 101),           &["lane_started card1 pid 101", "run 1: A::x A::y", "run 1: B::z"]),
    ]);
    assert!(sim.state.take_leases_lost().is_empty());
}
