//! An infrastructure kill is not a test failure (issue 9, item 6): a lane SIGKILLed from outside
//! the run (as the OOM killer or an operator would) gives its running case an `infrastructure`
//! attempt naming the signal, the case is retried, and the card is not counted as faulty: five
//! such kills in a row (more than the four lane deaths that quarantine a card) leave it in the run.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use platform_common::FailureClass;
use runner::report::model::{AttemptOutcome, Event, Outcome};

/// Kills in a row, each of a new lane in the first case it started.
const KILLS: usize = 5;

#[test]
fn sigkills_from_outside_are_infrastructure_attempts_retried_and_never_quarantine_the_card() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &selectors(&["VectorAdd"]));
    let hook = sb.pause_hook();
    let child = sb
        .command("a5", &Sandbox::selection("0", &["VectorAdd"], &["--test-hooks"]))
        .env("ONBOARD_TEST_LANE_PAUSE", hook.at("during_case"))
        .env("ONBOARD_TEST_LANE_PAUSE_TIMES", KILLS.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut killed = Vec::new();
    for _ in 0..KILLS {
        let line = hook
            .announcement()
            .recv_timeout(Duration::from_secs(120))
            .expect("a lane paused mid-case");
        let mut parts = line.split_whitespace();
        let pid: i32 = parts.next().unwrap().parse().unwrap();
        let case = parts.nth(1).unwrap().to_owned();
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid).unwrap(),
            rustix::process::Signal::Kill,
        )
        .unwrap();
        killed.push((pid as u32, case));
    }
    let run = sb.finish(child.wait_with_output().unwrap());
    let r = run.consistent_report(0);
    // Each new lane paused in the first case it started: no case finished between the kills.
    for (pid, id) in &killed {
        let c = case(&r, id);
        assert_eq!(c.attempts.len(), 2, "{id}: {:?}\n{}", c.attempts, run.dump());
        let a = &c.attempts[0];
        assert_eq!((a.outcome, a.pid), (AttemptOutcome::Crashed, Some(*pid)), "{id}");
        let e = a.error.as_ref().unwrap();
        assert_eq!(e.class, FailureClass::Infrastructure, "{e}");
        assert!(
            e.message
                .contains("killed by signal 9 (SIGKILL), which the dispatcher did not send"),
            "{e}"
        );
        assert_eq!(
            c.attempts[1].outcome,
            AttemptOutcome::Passed,
            "{id}: the retry passed"
        );
        assert_eq!(
            c.outcome,
            Outcome::Passed,
            "{id}: a pass after an infrastructure kill is no flaky test"
        );
    }
    for id in ids.iter().filter(|i| !killed.iter().any(|(_, k)| k == *i)) {
        assert_eq!(attempts(&r, id), [AttemptOutcome::Passed], "{id}");
    }
    let journal = run.journal();
    // In a row: no case passed before the last of the kills was filed.
    let outcomes: Vec<AttemptOutcome> = journal
        .iter()
        .filter_map(|e| match e {
            Event::CaseFinished { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes[..KILLS],
        [AttemptOutcome::Crashed; KILLS],
        "{outcomes:?}"
    );
    let h = health(&r, 0);
    assert!(
        !h.contains(&"quarantined"),
        "five kills from outside are no card fault: {h:?}\n{}",
        run.dump()
    );
    assert_eq!(
        h.iter().filter(|e| **e == "fresh_process").count(),
        KILLS,
        "each killed lane was replaced: {h:?}"
    );
    let retries: Vec<String> = journal
        .into_iter()
        .filter_map(|e| match e {
            Event::RetryScheduled { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), KILLS);
    assert!(
        retries.iter().all(|r| r.contains("infrastructure kill")),
        "{retries:?}"
    );
    assert!(
        run.stdout.contains("passed after an infrastructure kill"),
        "the summary lists it: {}",
        run.dump()
    );
    // No card was recorded as faulty either.
    assert!(
        !std::fs::read_dir(sb.lock_dir()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".health-")),
        "no health record"
    );
}
