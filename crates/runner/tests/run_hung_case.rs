//! A hung case says where it hangs (issue 9 item 2): before the dispatcher ends a lane for a case
//! timeout it asks the lane for its breadcrumb (the driver call in flight, since when, the case
//! launch) and, with a stack tool (`eu-stack` or `gdb`) on the search path, takes the native
//! stacks of every lane thread; both go into the timed-out attempt, the console and JUnit.
//! Without a tool the breadcrumb alone is reported and the run says so once; a lane that cannot
//! answer is still ended in time.

mod common;

use std::time::Duration;

use common::*;
use platform_common::driver::DriverCall;
use runner::report::model::{AttemptOutcome, Diagnostics};

/// The diagnostics of `id`'s first attempt, which timed out.
fn first_diagnosis(run: &Run, id: &str) -> Diagnostics {
    let r = run.report();
    let a = &case(&r, id).attempts[0];
    assert_eq!(a.outcome, AttemptOutcome::TimedOut, "{id}: {a:?}");
    let d = a.output.diagnostics.as_deref().cloned();
    d.unwrap_or_else(|| panic!("{id}: no diagnostics: {a:?}"))
}

/// Asserts the breadcrumb names the stalled launch (the cases of `VectorAdd` make one launch).
fn assert_stalled_in_the_launch(d: &Diagnostics, what: &str) {
    assert!(d.answered, "{what}: {d:?}");
    assert_eq!(d.in_call, Some(DriverCall::LaunchAicore), "{what}: {d:?}");
    assert_eq!((d.launch, d.launches), (Some(1), Some(1)), "{what}: {d:?}");
    assert!(d.since_ms.is_some(), "{what}: {d:?}");
}

#[test]
fn a_stalled_case_names_its_call_its_launch_and_with_a_stack_tool_its_frame() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let tool = ["eu-stack", "gdb"]
        .into_iter()
        .find(|t| std::env::split_paths(&path).any(|d| d.join(t).is_file()))
        .expect("no stack tool (eu-stack or gdb) on PATH: install elfutils or gdb (.ci/run does)");
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::new();
        let extra = ["--case-timeout", "1", "--faults", "dev=0:stall@2"];
        let (ids, run) = sb.list_and_run(arch, "0", &["VectorAdd"], &extra);
        let r = run.consistent_report(0);
        let stalled = started_on_card0(&run)[1].clone();
        assert_retried_once(&r, &stalled, AttemptOutcome::TimedOut);
        assert_others_passed_once(&r, &ids, &stalled);
        let d = first_diagnosis(&run, &stalled);
        assert_stalled_in_the_launch(&d, arch);
        assert_eq!(d.stack_tool.as_deref(), Some(tool), "{arch}: {d:?}");
        let stacks = d
            .stacks
            .clone()
            .unwrap_or_else(|| panic!("{arch}: no stacks: {d:?}"));
        assert!(
            stacks.contains("sim_stall_forever"),
            "{arch}: the stalled frame is named:\n{stacks}"
        );
        assert!(
            stacks.contains("lane-channel"),
            "{arch}: every lane thread is there:\n{stacks}"
        );
        let line = d.summary();
        assert!(
            line.starts_with("stuck ") && line.ends_with(" s in rtKernelLaunchWithHandleV2 (launch 1 of 1)"),
            "{line}"
        );
        assert!(
            run.stdout.contains(&line),
            "{arch}: the console says it:\n{}",
            run.stdout
        );
        let junit = std::fs::read_to_string(run.report_dir.join("junit.xml")).unwrap();
        assert!(junit.contains(&line), "{arch}: JUnit says it");
        assert!(
            junit.contains("sim_stall_forever"),
            "{arch}: JUnit has the stacks"
        );
    }
}

#[test]
fn without_a_stack_tool_the_breadcrumb_alone_is_reported_and_the_run_says_so_once() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &["--case", "VectorAdd"]);
    // Two stalls on card 0 (its count of case launches goes on across its lanes).
    let args = Sandbox::selection(
        "0",
        &["VectorAdd"],
        &["--case-timeout", "1", "--faults", "dev=0:stall@2;dev=0:stall@4"],
    );
    let out = sb
        .command("a5", &args)
        .env("ONBOARD_STACK_TOOL_PATH", "")
        .output()
        .unwrap();
    let run = sb.finish(out);
    let r = run.consistent_report(0);
    let timed_out: Vec<&str> = r
        .cases
        .iter()
        .filter(|c| c.attempts[0].outcome == AttemptOutcome::TimedOut)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(timed_out.len(), 2, "{timed_out:?} of {ids:?}\n{}", run.dump());
    for id in timed_out {
        let d = first_diagnosis(&run, id);
        assert_stalled_in_the_launch(&d, id);
        assert_eq!(d.stacks, None, "{id}");
        assert!(
            d.notes.iter().any(|n| n.contains("no stack tool")),
            "{id}: {:?}",
            d.notes
        );
    }
    assert_eq!(
        run.stderr.matches("no stack tool (eu-stack or gdb)").count(),
        1,
        "said once:\n{}",
        run.stderr
    );
}

#[test]
fn a_lane_that_cannot_answer_is_still_ended_and_its_attempt_says_so() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &["--case", "VectorAdd"]);
    let hook = sb.pause_hook();
    let mut cmd = sb.command(
        "a5",
        &Sandbox::selection("0", &["VectorAdd"], &["--case-timeout", "4"]),
    );
    cmd.arg("--test-hooks")
        .env("ONBOARD_TEST_LANE_PAUSE", hook.at("during_case"))
        .env("ONBOARD_STACK_TOOL_PATH", "")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let line = hook
        .announcement()
        .recv_timeout(Duration::from_secs(60))
        .expect("a lane paused during its case");
    let mut parts = line.split_whitespace();
    let pid: i32 = parts.next().unwrap().parse().unwrap();
    let paused = parts.nth(1).unwrap().to_owned();
    // Stopped, the lane's channel reader cannot answer either.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::Stop,
    )
    .unwrap();
    let run = sb.finish(child.wait_with_output().unwrap());
    let r = run.consistent_report(0);
    assert_retried_once(&r, &paused, AttemptOutcome::TimedOut);
    assert_others_passed_once(&r, &ids, &paused);
    let d = first_diagnosis(&run, &paused);
    assert!(!d.answered, "{d:?}");
    assert_eq!((d.in_call, d.launch), (None, None), "{d:?}");
    assert!(
        d.notes.iter().any(|n| n.contains("did not say where it was")),
        "{:?}",
        d.notes
    );
    assert!(
        run.stdout.contains("the lane did not say where it was stuck"),
        "{}",
        run.stdout
    );
}

/// A case of five launches stalled in its third: `launch 3 of 5`.
#[test]
fn a_case_of_several_launches_says_which_one_stalled() {
    let sb = Sandbox::new();
    let id = "MultiLaunch::noops_between";
    let args = Sandbox::selection("0", &[id], &["--case-timeout", "1", "--faults", "dev=0:stall@3"]);
    let out = sb
        .command("a2a3", &args)
        .env("ONBOARD_STACK_TOOL_PATH", "")
        .output()
        .unwrap();
    let run = sb.finish(out);
    let r = run.consistent_report(0);
    assert_retried_once(&r, id, AttemptOutcome::TimedOut);
    let d = first_diagnosis(&run, id);
    assert_eq!(d.in_call, Some(DriverCall::LaunchAicore), "{d:?}");
    assert_eq!((d.launch, d.launches), (Some(3), Some(5)), "{d:?}");
    assert!(
        d.summary()
            .ends_with("in rtKernelLaunchWithHandleV2 (launch 3 of 5)"),
        "{}",
        d.summary()
    );
    assert!(run.stdout.contains("(launch 3 of 5)"), "{}", run.stdout);
}
