//! Starting lanes (issue 8, item 8): a transient spawn failure is tried again before it costs a
//! card, and lanes run from the binary the run started with, whatever is written at its path
//! during the run.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use runner::report::model::{AttemptOutcome, Event, Outcome};

/// A run of `VectorAdd` on card 0 of `sb` whose first `fails` spawn tries fail with `EAGAIN`.
fn run_with_spawn_failures(sb: &Sandbox, fails: u32) -> (Vec<String>, Run) {
    let ids = list(sb, "a5", &["--case", "VectorAdd"]);
    let mut cmd = sb.command("a5", &["--devices", "0", "--case", "VectorAdd", "--test-hooks"]);
    cmd.env("ONBOARD_TEST_SPAWN_EAGAIN", fails.to_string());
    let run = sb.finish(cmd.output().unwrap());
    (ids, run)
}

fn lanes_started(run: &Run) -> usize {
    run.journal()
        .iter()
        .filter(|e| matches!(e, Event::LaneStarted { .. }))
        .count()
}

#[test]
fn four_transient_spawn_failures_in_a_row_cost_nothing() {
    let sb = Sandbox::new();
    let (ids, run) = run_with_spawn_failures(&sb, 4);
    let r = run.consistent_report(0);
    for id in &ids {
        assert_eq!(attempts(&r, id), [AttemptOutcome::Passed], "{id}");
    }
    assert!(!health(&r, 0).contains(&"quarantined"), "{:?}", health(&r, 0));
    assert_eq!(lanes_started(&run), 1, "the fifth try started the lane");
    let retries = run.stderr.matches("trying again").count();
    assert_eq!(retries, 4, "each failed try is a warning:\n{}", run.dump());
}

#[test]
fn a_spawn_that_fails_every_try_quarantines_the_card_naming_the_tries() {
    let sb = Sandbox::new();
    let (ids, run) = run_with_spawn_failures(&sb, 5);
    let r = run.consistent_report(1);
    assert_eq!(health(&r, 0), ["quarantined"]);
    let detail = serde_json::to_value(&r.devices_health["0"][0]).unwrap()["detail"].clone();
    let detail = detail.as_str().unwrap();
    assert!(
        detail.contains("cannot start a lane process (5 tries)"),
        "{detail}"
    );
    assert_eq!(lanes_started(&run), 0);
    for id in &ids {
        assert_eq!(outcome(&r, id), Outcome::Failed, "{id}");
    }
}

/// The suite binary is copied and started from the copy; while a lane is paused mid-case the copy
/// is replaced (rename over it, as a rebuild does) by a script that exits 1, and the paused lane
/// is killed. The replacement lane, started after the replacement, still runs the suite: the case
/// passes on its retry and the card is not quarantined.
#[test]
fn lanes_started_after_the_binary_is_replaced_run_the_binary_the_run_started_with() {
    let sb = Sandbox::new();
    let bin = sb.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let exe = bin.join("cardguard-suite");
    std::fs::copy(SUITE, &exe).unwrap();
    let ids = list(&sb, "a5", &["--case", "VectorAdd"]);
    let hook = sb.pause_hook();

    // The sandbox's command, from the copy.
    let template = sb.command("a5", &["--devices", "0", "--case", "VectorAdd", "--test-hooks"]);
    let mut cmd = Command::new(&exe);
    cmd.args(template.get_args());
    for (k, v) in template.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.env("ONBOARD_TEST_LANE_PAUSE", hook.at("during_case"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let dispatcher = cmd.spawn().unwrap();
    let line = hook
        .announcement()
        .recv_timeout(Duration::from_secs(60))
        .expect("a lane paused mid-case");
    let mut parts = line.split_whitespace();
    let pid: i32 = parts.next().unwrap().parse().unwrap();
    let paused_case = parts.nth(1).unwrap().to_owned();
    // Exec'd through a descriptor, the lane still goes by its binary's name.
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim(), "cardguard-suite");

    // A rebuild: a new file renamed over the old path.
    let new = bin.join("cardguard-suite.new");
    std::fs::write(&new, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&new, &exe).unwrap();
    let replaced = Command::new(&exe).status().unwrap();
    assert_eq!(replaced.code(), Some(1), "the path now names the script");

    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::Kill,
    )
    .unwrap();
    let run = sb.finish(dispatcher.wait_with_output().unwrap());
    let r = run.consistent_report(0);
    // The test's SIGKILL is an infrastructure kill (issue 9, item 6): retried, passed.
    assert_passed_after_infrastructure_kill(&r, &paused_case);
    assert_others_passed_once(&r, &ids, &paused_case);
    let h = health(&r, 0);
    assert!(h.contains(&"fresh_process"), "{h:?}");
    assert!(!h.contains(&"quarantined"), "{h:?}\n{}", run.dump());
    assert!(lanes_started(&run) >= 2, "a lane started after the replacement");
}
