//! A lane whose poison sink cannot be written warns (on its stderr, which the dispatcher captures
//! and logs) and still leaves through its "needs fresh process" exit: a sink write failure never
//! becomes an error. The lane is started directly, as the dispatcher starts it (its card's lease
//! and its channel handed down, one assignment on the channel), on a card whose plan says `dead`,
//! so its first init fails and it escalates through the sink.

mod common;

use std::io::{Read, Write};
use std::process::Stdio;

use common::*;
use platform_common::lease::{LeaseConfig, CHILD_LEASE_FD};
use platform_common::sim::{start_run, FaultPlan};
use platform_common::DeviceLease;
use runner::protocol::{FromLane, ToLane, EXIT_NEEDS_FRESH_PROCESS};

#[test]
fn an_unwritable_sink_warns_and_the_lane_still_escalates() {
    let sb = Sandbox::new();
    let cfg = runner::platform::arch_entry(platform_common::Arch::A5)
        .sim_config(sb.sim_root())
        .with_cards(sb.cards);
    start_run(
        &cfg,
        &[0],
        &FaultPlan::parse_for_cards("dev=0:dead", sb.cards).unwrap(),
    )
    .unwrap();
    let lease = DeviceLease::try_acquire(&LeaseConfig { dir: sb.lock_dir() }, 0, "sink-test").unwrap();
    let sink = sb.dir.path().join("no-such-dir").join("sink.jsonl");

    let mut cmd = sb.bare();
    cmd.args(["--lane", "--arch", "a5", "--platform", "sim", "--device", "0"])
        .env("ONBOARD_POISON_SINK", &sink)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    DeviceLease::pass_all_to(&[&lease], &mut cmd).unwrap();
    let mut chan = runner::protocol::hand_to(&mut cmd, CHILD_LEASE_FD + 1).unwrap();
    let mut lane = cmd.spawn().unwrap();
    drop(cmd);
    let run = ToLane::Run {
        batch: 1,
        cases: vec![
            "VectorAdd::single_element".into(),
            "VectorAdd::n64_blocks4".into(),
        ],
    };
    chan.write_all(&run.to_line().unwrap()).unwrap();
    // The channel stays open for writing (its end with work pending means "dispatcher gone"); its
    // reading side ends when the lane exits.
    let mut out = String::new();
    chan.read_to_string(&mut out).unwrap();
    let mut err = String::new();
    lane.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let mut stdout = String::new();
    lane.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let status = lane.wait().unwrap();
    assert!(
        stdout.is_empty(),
        "nothing but the channel carries the protocol: {stdout}"
    );

    assert_eq!(
        status.code(),
        Some(EXIT_NEEDS_FRESH_PROCESS),
        "channel:\n{out}\nstderr:\n{err}"
    );
    let msgs: Vec<FromLane> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(
        msgs.iter()
            .any(|m| matches!(m, FromLane::InitFailed { device: 0, .. })),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| matches!(m, FromLane::Escalating { cases: 2, .. })),
        "{msgs:?}"
    );
    assert!(
        err.contains("WARN") && err.contains("cannot write the poison sink"),
        "the failed sink write warns on the lane's stderr:\n{err}"
    );
    assert!(
        !err.lines().any(|l| l.split_whitespace().nth(1) == Some("ERROR")),
        "a sink write failure is never an error:\n{err}"
    );
    assert!(!sink.exists());
}
