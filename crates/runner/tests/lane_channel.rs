//! The lane's channel is private and bounded, and a dead lane is seen dead (issue 8, item 5):
//!
//! - a lane that writes junk without a newline on fd 1 and fd 2 before and during every case
//!   changes no verdict, quarantines no card, and its failing attempts carry exactly what was
//!   written during them (in `report.json` and `junit.xml`), passing attempts nothing;
//! - a lane that writes an endless protocol line is killed, and its case gets a `crashed` attempt
//!   naming the reason;
//! - a lane that dies leaving a child that holds its stdout, stderr and channel (in its process
//!   group, or outside it) is handled as dead: the run ends with every verdict.
//!
//! Each run is waited for with a generous bound, so a run that would hang fails the test instead.

mod common;

use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use runner::report::model::{AttemptOutcome, Outcome};

/// Far longer than any of these runs takes; only a hang reaches it.
const BOUND: Duration = Duration::from_secs(240);

/// Runs `cmd` to its end, or kills it past [`BOUND`] and fails.
fn run_bounded(sb: &Sandbox, mut cmd: Command) -> Run {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(Child::wait_with_output(child));
    });
    let out: Output = match rx.recv_timeout(BOUND) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::Kill);
            panic!("the run did not end within {BOUND:?}");
        }
    };
    sb.finish(out)
}

/// A run of `VectorAdd` on `devices` with `--test-hooks`, the hook variable `var=value` and
/// `extra` flags.
fn hooked(sb: &Sandbox, devices: &str, var: &str, value: &str, extra: &[&str]) -> (Vec<String>, Run) {
    let ids = list(sb, "a5", &["--case", "VectorAdd"]);
    let mut args = Sandbox::selection(devices, &["VectorAdd"], extra);
    args.push("--test-hooks");
    let mut cmd = sb.command("a5", &args);
    cmd.env(var, value);
    (ids, run_bounded(sb, cmd))
}

fn no_quarantine(r: &runner::report::model::RunReport) {
    for (card, events) in &r.devices_health {
        assert!(
            events.iter().all(|e| e.name() != "quarantined"),
            "card {card}: {:?}",
            events.iter().map(|e| e.name()).collect::<Vec<_>>()
        );
    }
}

/// The `system-out` / `system-err` texts under `node` (its own children only).
fn system_texts<'a>(node: roxmltree::Node<'a, 'a>, tag: &str) -> Vec<&'a str> {
    node.children()
        .filter(|n| n.has_tag_name(tag))
        .map(|n| n.text().unwrap_or_default())
        .collect()
}

#[test]
fn lane_noise_on_stdout_and_stderr_changes_no_verdict_and_is_kept_with_failed_attempts() {
    let sb = Sandbox::new();
    // On card 0, the 2nd case's kernel computes a wrong result (failed, not retried) and the 4th
    // case's launch fails (failed, retried: flaky).
    let plan = "dev=0:corrupt@2;dev=0:launch_fail@4";
    let (ids, run) = hooked(&sb, "0,1", "ONBOARD_TEST_LANE_NOISE", "NZ", &["--faults", plan]);
    let r = run.consistent_report(1);
    no_quarantine(&r);
    let (wrong, flaky) = (&ids[1], &ids[3]);
    assert_eq!(attempts(&r, wrong), [AttemptOutcome::Failed], "{}", run.dump());
    assert_eq!(outcome(&r, wrong), Outcome::Failed);
    assert_eq!(
        attempts(&r, flaky),
        [AttemptOutcome::Failed, AttemptOutcome::Passed]
    );
    for id in ids.iter().filter(|i| *i != wrong && *i != flaky) {
        assert_eq!(attempts(&r, id), [AttemptOutcome::Passed], "{id}\n{}", run.dump());
    }

    // A failed attempt carries exactly what the lane wrote while it ran (not the junk written
    // before it, nor any other case's); a passing attempt carries nothing.
    for id in [wrong, flaky] {
        let a = &case(&r, id).attempts[0];
        assert_eq!(
            a.output.stdout.as_deref(),
            Some(format!("NZ:out:during:{id}").as_str()),
            "{id}"
        );
        let err = a.output.stderr.as_deref().unwrap_or_default();
        assert!(err.starts_with(&format!("NZ:err:during:{id}")), "{id}: {err:?}");
        assert!(!err.contains("before"), "{id}: {err:?}");
        assert_eq!(
            (a.output.stdout_dropped_bytes, a.output.stderr_dropped_bytes),
            (0, 0)
        );
    }
    for c in &r.cases {
        for a in c.attempts.iter().filter(|a| a.outcome == AttemptOutcome::Passed) {
            assert!(
                a.output.is_empty(),
                "{}: a passing attempt keeps no output: {a:?}",
                c.id
            );
        }
    }

    // JUnit: the failed case's testcase has the output; the flaky one's flakyFailure has it.
    let xml = std::fs::read_to_string(run.report_dir.join("junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let testcase = |id: &str| {
        let name = id.split("::").nth(1).unwrap();
        doc.descendants()
            .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no testcase {id}"))
    };
    let tc = testcase(wrong);
    assert_eq!(system_texts(tc, "system-out"), [format!("NZ:out:during:{wrong}")]);
    assert!(system_texts(tc, "system-err")[0].starts_with(&format!("NZ:err:during:{wrong}")));
    let tc = testcase(flaky);
    assert!(
        system_texts(tc, "system-out").is_empty(),
        "the passing retry keeps none"
    );
    let rerun = tc
        .children()
        .find(|n| n.has_tag_name("flakyFailure"))
        .expect("a flakyFailure");
    assert_eq!(
        system_texts(rerun, "system-out"),
        [format!("NZ:out:during:{flaky}")]
    );
    let passed = testcase(&ids[0]);
    assert!(system_texts(passed, "system-out").is_empty());
    assert!(system_texts(passed, "system-err").is_empty());

    // The console: output outside a case is logged by the dispatcher (stderr lines as warnings);
    // a case's own output is never printed.
    assert!(
        run.stderr
            .contains(&format!("lane stderr: NZ:err:before:{}", ids[0])),
        "{}",
        run.dump()
    );
    assert!(!run.stderr.contains(":during:"), "{}", run.dump());
    assert!(!run.stdout.contains("NZ:"), "{}", run.dump());
}

#[test]
fn an_endless_protocol_line_kills_the_lane_and_its_case_is_crashed_naming_why() {
    let sb = Sandbox::new();
    let dir = sb.dir.path().join("flood");
    std::fs::create_dir(&dir).unwrap();
    let (ids, run) = hooked(&sb, "0", "ONBOARD_TEST_LANE_FLOOD", dir.to_str().unwrap(), &[]);
    let r = run.consistent_report(0);
    assert_retried_once(&r, &ids[0], AttemptOutcome::Crashed);
    let first = &case(&r, &ids[0]).attempts[0];
    let err = first.error.as_ref().unwrap();
    assert_eq!(err.class, platform_common::FailureClass::DeviceRuntime);
    assert!(
        err.message.contains("lane protocol line over 1 MiB"),
        "{err}\n{}",
        run.dump()
    );
    assert_others_passed_once(&r, &ids, &ids[0]);
    assert!(health(&r, 0).contains(&"fresh_process"), "{:?}", health(&r, 0));
}

/// The orphan hook's child: its pid, and whether it is still running (a zombie is not).
fn orphan(dir: &std::path::Path) -> (i32, bool) {
    let pid: i32 = std::fs::read_to_string(dir.join("orphan.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let running = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|rest| rest.trim_start().starts_with(|c| c != 'Z' && c != 'X'))
        })
        .unwrap_or(false);
    (pid, running)
}

/// The lane leaves a child holding its stdout, stderr and channel, then exits 1 mid-case.
fn a_lane_that_dies_leaving(group: &str) -> (i32, bool) {
    let sb = Sandbox::new();
    let dir = sb.dir.path().join("orphan");
    std::fs::create_dir(&dir).unwrap();
    let value = format!("{group}:{}", dir.display());
    let (ids, run) = hooked(&sb, "0", "ONBOARD_TEST_LANE_ORPHAN", &value, &[]);
    let r = run.consistent_report(0);
    assert_retried_once(&r, &ids[0], AttemptOutcome::Crashed);
    assert_others_passed_once(&r, &ids, &ids[0]);
    let err = case(&r, &ids[0]).attempts[0].error.clone().unwrap();
    assert!(err.message.contains("died (exit 1)"), "{err}");
    orphan(&dir)
}

#[test]
fn a_dead_lane_whose_child_in_its_group_holds_its_pipes_is_handled_and_the_child_dies() {
    let (pid, running) = a_lane_that_dies_leaving("group");
    assert!(
        !running,
        "the child in the lane's group (pid {pid}) died with the group"
    );
}

#[test]
fn a_dead_lane_whose_child_outside_its_group_holds_its_pipes_does_not_hang_the_run() {
    let (pid, running) = a_lane_that_dies_leaving("outside");
    // Outside the lane's group, the child survived (the run did not wait for it) and still holds
    // the pipes; it is ended here.
    assert!(
        running,
        "the child outside the group (pid {pid}) is still running"
    );
    let pid = rustix::process::Pid::from_raw(pid).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::Kill).unwrap();
}
