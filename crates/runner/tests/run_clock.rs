//! One clock (issue 8, item 8): a lane's health events and the dispatcher's attempts are stamped on
//! one monotonic clock, so a step of the lane's wall clock (here an hour ahead, through the test
//! hook that shifts the wall-clock stamp the lane sends) reorders nothing: every device event
//! falls inside the life of the lane that saw it, a poisoning inside the attempt that caused it,
//! and a lane's events keep their order.

mod common;

use std::collections::HashMap;

use common::*;
use runner::report::model::{AttemptOutcome, CardEvent, Event};

#[test]
fn health_events_and_attempts_share_one_clock_across_a_wall_clock_step() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &["--case", "VectorAdd"]);
    let args = [
        "--devices",
        "0",
        "--case",
        "VectorAdd",
        "--faults",
        "dev=0:op_timeout@2",
        "--test-hooks",
    ];
    let mut cmd = sb.command("a5", &args);
    cmd.env("ONBOARD_TEST_LANE_CLOCK_STEP", "3600000");
    let run = sb.finish(cmd.output().unwrap());
    let r = run.consistent_report(0);
    assert_retried_once(&r, &ids[1], AttemptOutcome::Failed);

    // Each lane's life and each attempt's end, on the dispatcher's clock (journal).
    let mut life: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut finished: HashMap<(String, u32), u64> = HashMap::new();
    for e in run.journal() {
        match e {
            Event::LaneStarted { at_ms, pid, .. } => {
                life.insert(pid, (at_ms, u64::MAX));
            }
            Event::LaneExited { at_ms, pid, .. } => life.get_mut(&pid).unwrap().1 = at_ms,
            Event::CaseFinished {
                at_ms, id, attempt, ..
            } => {
                finished.insert((id, attempt), at_ms);
            }
            _ => {}
        }
    }

    let events = &r.devices_health["0"];
    let device: Vec<_> = events
        .iter()
        .filter(|h| matches!(h.event, CardEvent::Device(_)))
        .collect();
    let names: Vec<&str> = device.iter().map(|h| h.name()).collect();
    assert!(
        names.starts_with(&["poisoned", "marked_unusable", "force_reset", "probe", "recovered"]),
        "{names:?}"
    );
    for h in &device {
        let CardEvent::Device(ev) = &h.event else {
            unreachable!()
        };
        assert!(
            ev.unix_ms > 0,
            "the lane's wall clock stays in the record, as the lane sent it"
        );
        let (born, died) = life[&h.pid.expect("a device event names its lane")];
        assert!(
            born <= h.at_ms && h.at_ms <= died,
            "{} at {} ms outside its lane's life {born}..{died} ms",
            h.name(),
            h.at_ms
        );
        assert!(h.at_ms <= r.duration_ms, "{} after the run's end", h.name());
    }
    let poisoned = device[0];
    assert_eq!(poisoned.case.as_deref(), Some(ids[1].as_str()));
    let end = finished[&(ids[1].clone(), 1)];
    assert!(
        poisoned.at_ms <= end,
        "poisoned at {} ms, after its attempt ended at {end} ms",
        poisoned.at_ms
    );
    let times: Vec<u64> = device.iter().map(|h| h.at_ms).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "a lane's events keep their order: {times:?}"
    );
}
