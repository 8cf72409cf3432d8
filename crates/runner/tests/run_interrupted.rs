//! SIGINT and SIGTERM end a run cleanly (issue 8, item 4): at a random protocol point of a run
//! whose other card has a stalled case, a signal to the dispatcher ends every lane, gives every
//! case without a verdict `skipped` with the signal's reason, writes every report (with
//! `interrupted`), leaves nothing else on disk, frees every card at once and exits 130 / 143.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use platform_common::lease::LeaseConfig;
use platform_common::DeviceLease;
use rand::Rng;
use runner::report::model::{Event, Interruption, Outcome};
use rustix::process::{kill_process, Pid, Signal};

const POINTS: [&str; 3] = ["before_case", "during_case", "after_result"];

/// Starts a run of two classes on cards 0 and 1, card 1 stalling at its `stall`-th launch, with
/// the pause hook at `point`; once a lane has paused there, sends `signals` to the dispatcher.
fn interrupt(sb: &Sandbox, point: &str, stall: u32, signals: &[Signal]) -> (Vec<String>, Run) {
    let cases = ["VectorAdd", "Softmax"];
    let ids = list(sb, "a5", &selectors(&cases));
    let hook = sb.pause_hook();
    let plan = format!("dev=1:stall@{stall}");
    let child = sb
        .command(
            "a5",
            &Sandbox::selection("0,1", &cases, &["--test-hooks", "--faults", &plan]),
        )
        .env("ONBOARD_TEST_LANE_PAUSE", hook.at(point))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    hook.announcement()
        .recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("no lane reached {point}"));
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    for &sig in signals {
        kill_process(pid, sig).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    (ids, sb.finish(out))
}

/// Every card of the sandbox can be taken at once.
fn cards_free(sb: &Sandbox) {
    let cfg = LeaseConfig { dir: sb.lock_dir() };
    for card in 0..sb.cards {
        DeviceLease::try_acquire(&cfg, card, "next-run").unwrap_or_else(|e| panic!("card {card}: {e}"));
    }
}

fn ends_cleanly(signal: Signal, interruption: Interruption, code: i32) {
    let mut rng = rand::thread_rng();
    let point = POINTS[rng.gen_range(0..POINTS.len())];
    let stall = rng.gen_range(1..=3);
    let sb = Sandbox::new();
    let (ids, run) = interrupt(&sb, point, stall, &[signal]);
    let what = format!("{interruption} at {point}, card 1 stalled at launch {stall}");
    run.expect_code(code);
    assert!(
        run.stdout.starts_with(&format!("INTERRUPTED by {interruption}:")),
        "{what}: {}",
        run.dump()
    );

    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.report_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(raw["interrupted"], interruption.name(), "{what}");
    let r = run.report();
    assert_consistent(&r);
    assert_eq!(r.cases.len(), ids.len(), "{what}: every case has a verdict");
    let reason = interruption.skip_reason();
    let skipped: Vec<_> = r.cases_with(Outcome::Skipped).collect();
    assert!(
        !skipped.is_empty(),
        "{what}: the paused and the stalled cases had no verdict"
    );
    for c in &skipped {
        assert_eq!(
            c.skip_reason.as_deref(),
            Some(reason.as_str()),
            "{what}: {}",
            c.id
        );
    }
    for c in &r.cases {
        assert!(
            matches!(c.outcome, Outcome::Passed | Outcome::Skipped),
            "{what}: {} {:?} {:?}",
            c.id,
            c.outcome,
            c.attempts
        );
    }

    let journal = run.journal();
    assert!(
        journal
            .iter()
            .any(|e| matches!(e, Event::RunInterrupted { signal, .. } if *signal == interruption)),
        "{what}"
    );
    assert!(
        matches!(journal.last(), Some(Event::RunFinished { .. })),
        "{what}"
    );

    assert_eq!(
        run.report_files(),
        ["journal.jsonl", "junit.xml", "report.json", "timeline.svg"],
        "{what}: nothing but the reports"
    );
    assert!(
        run.temp_left().is_empty(),
        "{what}: no sink left: {:?}",
        run.temp_left()
    );
    cards_free(&sb);
}

#[test]
fn sigint_ends_a_run_cleanly_with_130() {
    ends_cleanly(Signal::Int, Interruption::Sigint, 130);
}

#[test]
fn sigterm_ends_a_run_cleanly_with_143() {
    ends_cleanly(Signal::Term, Interruption::Sigterm, 143);
}

/// Two signals at once: the second exits at once, with the first's status; the cards are free
/// (the kernel released them) and the private sink directory is gone.
#[test]
fn a_second_signal_exits_at_once() {
    let sb = Sandbox::new();
    let (_ids, run) = interrupt(&sb, "during_case", 1, &[Signal::Term, Signal::Int]);
    assert!(
        matches!(run.code, Some(143 | 130)),
        "a signal's status: {}",
        run.dump()
    );
    assert!(run.temp_left().is_empty(), "no sink left: {:?}", run.temp_left());
    cards_free(&sb);
}
