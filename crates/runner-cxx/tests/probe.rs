//! The C++ example host program (`cardguard-cxx-probe`, `cxx/probe_main.cc`) run on simulated
//! cards of both arches: over the in-process simulated card and over the acl driver (a copy of
//! `libsim_acl.so`), each step's line checked (the exception types, their class, call, code and
//! name, the reset report, the health events), and a held lease reaching C++ as
//! `cardguard::LeaseError` naming its holder.

use std::process::{Command, Output};
use std::time::Duration;

use cardguard_test_support::locate::sim_instance;
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::sim::SimConfig;
use platform_common::timeouts::Timeouts;
use platform_common::ArchFacts;

const PROBE: &str = env!("CARGO_BIN_EXE_cardguard-cxx-probe");

fn text(out: &Output) -> String {
    format!(
        "{}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn probe(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(PROBE);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The lines of a contained probe on `facts`' arch: the hang's `DeviceError` and the noop's
/// `Unusable` carry the arch's op-timeout (call, code, name), finalize force-reset with one
/// confirmed attempt, the events are the chain's, the new runner's noop passed.
fn assert_contained(out: &Output, facts: &ArchFacts, card: u32) {
    let all = text(out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let code = facts.op_timeout;
    let fault = format!(
        "class=device_runtime call=aclrtSynchronizeStreamWithTimeout code={} name={} card=",
        code.raw,
        code.name()
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let expect = [
        format!("hang: ok: DeviceError {fault}{card}"),
        format!("noop: ok: Unusable {fault}{card}"),
        "finalize: ok: force_reset=yes attempts=1 [attempt 1 rc=0 probe confirmed]".to_owned(),
        "events: ok: poisoned marked_unusable force_reset probe recovered".to_owned(),
        "new runner noop: ok: passed".to_owned(),
        "new runner finalize: ok: torn down, no force reset".to_owned(),
        format!("probe {} card {card}: contained", facts.arch),
    ];
    assert_eq!(lines.len(), expect.len(), "{all}");
    for (line, want) in lines.iter().zip(&expect) {
        assert!(line.starts_with(want.as_str()), "{line:?} is not {want:?}\n{all}");
    }
}

fn on_sim(facts: &ArchFacts) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sim");
    let locks = dir.path().join("locks");
    let out = probe(
        &[
            "--arch",
            facts.arch.name(),
            "--sim-root",
            root.to_str().unwrap(),
            "--lock-dir",
            locks.to_str().unwrap(),
            "--card",
            "3",
        ],
        &[],
    );
    assert_contained(&out, facts, 3);
}

#[test]
fn the_cxx_probe_is_contained_on_a_simulated_a5_card() {
    on_sim(&platform_a5::FACTS);
}

#[test]
fn the_cxx_probe_is_contained_on_a_simulated_a2a3_card() {
    on_sim(&platform_a2a3::FACTS);
}

/// Short real-card timeouts (the acl driver holds them to the real-card rules: stream sync >
/// scheduler + 1500 ms), for the child's environment only.
fn acl_timeouts() -> Timeouts {
    Timeouts {
        scheduler: Duration::from_millis(50),
        op_execute: Duration::from_millis(100),
        stream_sync: Duration::from_millis(1600),
    }
}

fn through_acl(facts: &ArchFacts) {
    let dir = tempfile::tempdir().unwrap();
    let t = acl_timeouts();
    let cfg = SimConfig::new(*facts, dir.path().join("sim"))
        .with_timeouts(t)
        .unwrap();
    let lib = sim_instance(dir.path(), &cfg).unwrap();
    let locks = dir.path().join("locks");
    let out = probe(
        &[
            "--arch",
            facts.arch.name(),
            "--acl",
            lib.to_str().unwrap(),
            "--lock-dir",
            locks.to_str().unwrap(),
        ],
        &[
            (
                "ONBOARD_SCHEDULER_TIMEOUT_MS",
                t.scheduler.as_millis().to_string(),
            ),
            (
                "ONBOARD_OP_EXECUTE_TIMEOUT_US",
                t.op_execute.as_micros().to_string(),
            ),
            (
                "ONBOARD_STREAM_SYNC_TIMEOUT_MS",
                t.stream_sync.as_millis().to_string(),
            ),
        ],
    );
    assert_contained(&out, facts, 0);
}

#[test]
fn the_cxx_probe_is_contained_through_the_acl_driver_on_a5() {
    through_acl(&platform_a5::FACTS);
}

#[test]
fn the_cxx_probe_is_contained_through_the_acl_driver_on_a2a3() {
    through_acl(&platform_a2a3::FACTS);
}

#[test]
fn a_held_lease_is_a_lease_error_naming_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let locks = dir.path().join("locks");
    let held = DeviceLease::try_acquire(&LeaseConfig { dir: locks.clone() }, 1, "other-run-42").unwrap();
    let root = dir.path().join("sim");
    let out = probe(
        &[
            "--arch",
            "a5",
            "--sim-root",
            root.to_str().unwrap(),
            "--lock-dir",
            locks.to_str().unwrap(),
            "--card",
            "1",
        ],
        &[],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().next().unwrap_or_default();
    assert!(line.starts_with("error: "), "{all}");
    assert!(line.contains("other-run-42"), "the holder is not named: {all}");
    assert!(
        line.ends_with("(class=infrastructure call= code=0 name= card=1)"),
        "{all}"
    );
    drop(held);
}

#[test]
fn bad_usage_exits_2_naming_the_bad_part() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sim");
    let out = probe(&["--arch", "a6", "--sim-root", root.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: arch \"a6\": expected a5 or a2a3\n"),
        "{stderr}"
    );
}
