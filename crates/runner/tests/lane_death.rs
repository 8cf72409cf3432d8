//! A lane that dies: `crash@K` inside a case, `stall@K` past `--case-timeout`, and a SIGKILL from
//! outside at each protocol point of DESIGN section 5 (before a case starts, during a case, between
//! a result and the next assignment, while writing the sink). The dying case's attempt is crashed
//! or timed out and retried; nothing else is lost.

mod common;

use std::time::Duration;

use common::*;
use runner::report::model::{AttemptOutcome, Event, Outcome};

/// Sinks (and their private directory, under the run's temp dir) left after the run; the report
/// dir holds the reports only.
fn sink_files_left(run: &Run) -> Vec<String> {
    let mut left = run.temp_left();
    left.extend(
        run.report_files()
            .into_iter()
            .filter(|n| !["report.json", "junit.xml", "journal.jsonl", "timeline.svg"].contains(&n.as_str())),
    );
    left
}

#[test]
fn crash_inside_a_case_is_a_crashed_attempt_then_a_retry() {
    let sb = Sandbox::new();
    let (ids, run) = sb.run_faulted("a5", &["VectorAdd"], "dev=0:crash@2");
    let r = run.consistent_report(0);
    assert_retried_once(&r, &ids[1], AttemptOutcome::Crashed);
    assert_others_passed_once(&r, &ids, &ids[1]);
    assert!(health(&r, 0).contains(&"fresh_process"), "{:?}", health(&r, 0));
    assert!(
        !run.sink_reads(Some(0)).is_empty(),
        "the sink is read after a crash too"
    );
    assert!(sink_files_left(&run).is_empty());
}

#[test]
fn a_crash_on_every_retry_ends_crashed_after_the_bounded_retries() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &["--case", "VectorAdd"]);
    // Card 0 crashes its first three launches and card 1 its first: the retries crash wherever
    // they land (their own card's fresh lanes first, as retry placement prefers).
    let plan = "dev=0:crash@1;dev=0:crash@2;dev=0:crash@3;dev=1:crash@1";
    let run = sb.run_cases("a5", "0,1", &[&ids[0]], &["--retries", "2", "--faults", plan]);
    run.expect_code(1);
    let r = run.report();
    assert_eq!(attempts(&r, &ids[0]), [AttemptOutcome::Crashed; 3]);
    assert_eq!(outcome(&r, &ids[0]), Outcome::Crashed);
}

#[test]
fn a_stall_past_the_case_timeout_is_timed_out_and_retried() {
    let sb = Sandbox::new();
    let extra = ["--case-timeout", "1", "--faults", "dev=0:stall@2"];
    let (ids, run) = sb.list_and_run("a5", "0,1", &["VectorAdd"], &extra);
    let r = run.consistent_report(0);
    assert_retried_once(&r, &ids[1], AttemptOutcome::TimedOut);
    let first = &case(&r, &ids[1]).attempts[0];
    assert!(first.duration_ms >= 1000, "{first:?}");
    assert_others_passed_once(&r, &ids, &ids[1]);
    assert!(health(&r, 0).contains(&"fresh_process"), "lane replaced");
    let exits: Vec<_> = run
        .journal()
        .into_iter()
        .filter(|e| matches!(e, Event::LaneExited { device: 0, .. }))
        .collect();
    assert!(
        exits.len() >= 2,
        "the stalled lane and its replacement exited: {exits:?}"
    );
    assert!(
        run.sink_reads(Some(0)).len() >= 2,
        "the sink is read after the timeout too"
    );
    assert!(sink_files_left(&run).is_empty());
}

/// Lists the ids of `cases`, runs them on cards 0 and 1 (plus `extra`) with the lane pause hook at
/// `point`, kills the paused lane with SIGKILL, and returns the ids, the run and the case the lane
/// paused at.
fn kill_at(sb: &Sandbox, point: &str, cases: &[&str], extra: &[&str]) -> (Vec<String>, Run, String) {
    let ids = list(sb, "a5", &selectors(cases));
    let hook = sb.pause_hook();
    let mut cmd = sb.command("a5", &Sandbox::selection("0,1", cases, extra));
    cmd.arg("--test-hooks")
        .env("ONBOARD_TEST_LANE_PAUSE", hook.at(point));
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let line = hook
        .announcement()
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("no lane reached {point}"));
    let mut parts = line.split_whitespace();
    let pid: i32 = parts.next().unwrap().parse().unwrap();
    assert_eq!(parts.next(), Some(point));
    let at_case = parts.next().unwrap_or_default().to_owned();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::Kill,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    (ids, sb.finish(out), at_case)
}

fn nothing_lost(run: &Run, ids: &[String]) {
    let r = run.report();
    assert_consistent(&r);
    assert_eq!(r.cases.len(), ids.len());
    for c in &r.cases {
        assert!(
            matches!(c.outcome, Outcome::Passed | Outcome::Flaky),
            "{}: {:?}\n{}",
            c.id,
            c.attempts,
            run.dump()
        );
    }
    assert!(sink_files_left(run).is_empty());
}

#[test]
fn sigkill_before_a_case_starts_loses_nothing() {
    let sb = Sandbox::new();
    let (ids, run, at) = kill_at(&sb, "before_case", &["VectorAdd"], &[]);
    run.expect_code(0);
    nothing_lost(&run, &ids);
    let r = run.report();
    // The case never started in the killed lane: it has exactly one attempt, which passed.
    assert_eq!(attempts(&r, &at), [AttemptOutcome::Passed]);
}

#[test]
fn sigkill_during_a_case_is_a_crashed_attempt_then_a_retry() {
    let sb = Sandbox::new();
    let (ids, run, at) = kill_at(&sb, "during_case", &["VectorAdd"], &[]);
    run.expect_code(0);
    nothing_lost(&run, &ids);
    let r = run.report();
    // A SIGKILL from outside (the test's, as an OOM killer's would be) is an infrastructure
    // crash of the case, retried; a pass after it is no flaky test (issue 9, item 6).
    assert_passed_after_infrastructure_kill(&r, &at);
    assert_others_passed_once(&r, &ids, &at);
}

#[test]
fn sigkill_between_a_result_and_the_next_assignment_loses_nothing() {
    let sb = Sandbox::new();
    let classes = ["VectorAdd", "Matmul", "Softmax"];
    let (ids, run, _) = kill_at(&sb, "after_result", &classes, &[]);
    run.expect_code(0);
    nothing_lost(&run, &ids);
    let r = run.report();
    for id in &ids {
        assert_eq!(
            attempts(&r, id),
            [AttemptOutcome::Passed],
            "{id}: no attempt was running"
        );
    }
}

#[test]
fn sigkill_while_writing_the_sink_loses_nothing() {
    let sb = Sandbox::new();
    // The reset after the op-timeout fails, so the lane escalates and writes the sink; it is
    // killed after the first record.
    let plan = "dev=0:op_timeout@1;dev=0:force_reset_fail=3";
    let (ids, run, _) = kill_at(&sb, "sink_write", &["VectorAdd"], &["--faults", plan]);
    assert!(ids.len() >= 4, "{ids:?}");
    run.expect_code(0);
    nothing_lost(&run, &ids);
    let r = run.report();
    assert_eq!(outcome(&r, &ids[0]), Outcome::Flaky);
    for id in &ids[1..] {
        assert_eq!(attempts(&r, id), [AttemptOutcome::Passed], "{id}");
    }
    let reads = run.sink_reads(Some(0));
    assert!(
        reads.iter().any(|s| s.len() == 1),
        "the partial sink (one record) was read: {reads:?}"
    );
}

/// A lane that exits 0 with its assignment unfinished died as much as a crashed one: it counts
/// towards the card's lane deaths, so a card whose lanes keep doing it is quarantined instead of
/// getting replacement lanes forever (the hook lets 6 lanes do it; the 4th quarantines the card).
#[test]
fn lanes_that_exit_0_with_work_unfinished_count_as_deaths() {
    let sb = Sandbox::new();
    let hook = sb.dir.path().join("exit-hook");
    std::fs::create_dir(&hook).unwrap();
    let mut cmd = sb.command("a5", &["--devices", "0", "--case", "VectorAdd", "--test-hooks"]);
    cmd.env("ONBOARD_TEST_LANE_EXIT", format!("0:6:{}", hook.display()));
    let run = sb.finish(cmd.output().unwrap());
    run.expect_code(1);
    let r = run.report();
    assert_consistent(&r);
    let h = health(&r, 0);
    assert_eq!(h.last(), Some(&"quarantined"), "{h:?}\n{}", run.dump());
    let exits: Vec<_> = run
        .journal()
        .into_iter()
        .filter_map(|e| match e {
            Event::LaneExited { status, .. } => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(
        exits,
        [runner::report::model::LaneStatus::Exited(0); 4],
        "four lanes exited 0 with work unfinished, then the card was quarantined"
    );
    let fresh = r.devices_health["0"]
        .iter()
        .filter(|e| e.name() == "fresh_process")
        .count();
    assert_eq!(fresh, 3, "each replacement is a fresh process");
    for c in &r.cases {
        assert_eq!(c.outcome, Outcome::Failed, "{}", c.id);
    }
}

/// Without `--test-hooks` a stray hook variable is ignored: no lane pauses (or exits), the run
/// ends normally.
#[test]
fn hook_variables_without_the_test_hooks_flag_are_ignored() {
    let sb = Sandbox::new();
    let hook = sb.dir.path().join("hook");
    std::fs::create_dir(&hook).unwrap();
    // Were a hook honoured, the watchdog would end the parked lane after 2 s (and the check below
    // fail) rather than the run hanging.
    let mut cmd = sb.command(
        "a5",
        &["--devices", "0,1", "--case", "VectorAdd", "--case-timeout", "2"],
    );
    cmd.env(
        "ONBOARD_TEST_LANE_PAUSE",
        format!("before_case:{}", hook.display()),
    )
    .env("ONBOARD_TEST_LANE_EXIT", format!("0:6:{}", hook.display()));
    let run = sb.finish(cmd.output().unwrap());
    run.expect_code(0);
    assert!(
        std::fs::read_dir(&hook).unwrap().next().is_none(),
        "no hook fired"
    );
    let r = run.report();
    for c in &r.cases {
        assert_eq!(attempts(&r, &c.id), [AttemptOutcome::Passed], "{}", c.id);
    }
}
