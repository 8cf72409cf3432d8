//! The report dir (issue 8, item 6): a run holds it for its whole length (a second run on it exits
//! 2 naming the holder), clears an earlier run's files and only those before it starts, refuses a
//! symlink in a report's place instead of following it, and exits 110 when its reports cannot be
//! written (after the summary when the run ran).

mod common;

use std::process::{Child, Stdio};
use std::time::Duration;

use common::*;
use platform_common::lease::LeaseConfig;
use platform_common::DeviceLease;
use runner::report::model::Event;

/// Starts a run of `VectorAdd` on cards 0 and 1 whose first lane to start a case pauses in it;
/// returns the dispatcher and the paused lane's pid once it has paused.
fn paused_run(sb: &Sandbox) -> (Child, i32) {
    let hook = sb.pause_hook();
    let child = sb
        .command(
            "a5",
            &Sandbox::selection("0,1", &["VectorAdd"], &["--test-hooks"]),
        )
        .env("ONBOARD_TEST_LANE_PAUSE", hook.at("during_case"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = hook
        .announcement()
        .recv_timeout(Duration::from_secs(120))
        .expect("a lane paused in a case");
    let pid = line.split_whitespace().next().unwrap().parse().unwrap();
    (child, pid)
}

fn sigkill(pid: i32) {
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::Kill,
    )
    .unwrap();
}

fn one_line(run: &Run) -> String {
    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {}", run.dump());
    lines[0].to_owned()
}

/// Every card of the sandbox can be taken at once: the run left none held.
fn cards_free(sb: &Sandbox) {
    let cfg = LeaseConfig { dir: sb.lock_dir() };
    for card in 0..sb.cards {
        DeviceLease::try_acquire(&cfg, card, "after").unwrap_or_else(|e| panic!("card {card}: {e}"));
    }
}

#[test]
fn a_second_run_on_a_held_report_dir_exits_2_naming_the_holder() {
    let sb = Sandbox::new();
    let (first, paused) = paused_run(&sb);
    let second = sb.run_cases("a5", "2", &["VectorAdd"], &[]);
    second.expect_code(2);
    let line = one_line(&second);
    assert!(
        line.contains("is in use by run ") && line.contains(&sb.report_dir().display().to_string()),
        "{line}"
    );
    sigkill(paused);
    let first = sb.finish(first.wait_with_output().unwrap());
    let r = first.consistent_report(0);
    assert!(line.contains(&r.run_id), "names the holder's run: {line}");
    let starts: Vec<String> = first
        .journal()
        .into_iter()
        .filter_map(|e| match e {
            Event::RunStarted { run_id, .. } => Some(run_id),
            _ => None,
        })
        .collect();
    assert_eq!(starts, std::slice::from_ref(&r.run_id), "one run in the journal");
    assert_eq!(
        first.report_files(),
        ["journal.jsonl", "junit.xml", "report.json", "timeline.svg"],
        "the lock file goes with the run"
    );
    cards_free(&sb);
}

#[test]
fn a_rerun_clears_the_earlier_runs_files_and_only_those() {
    let sb = Sandbox::new();
    let first = sb.run_cases("a5", "0", &["VectorAdd"], &[]);
    let first_id = first.consistent_report(0).run_id;
    let dir = sb.report_dir();
    std::fs::write(dir.join("notes.txt"), "the user's").unwrap();
    std::fs::write(dir.join(".cardguard-stale1.tmp"), "a killed run's").unwrap();

    let (second, paused) = paused_run(&sb);
    // Mid-run: the first run's reports are gone, so a re-run that dies here never leaves an old
    // report.json beside its new journal.
    for f in [
        "report.json",
        "junit.xml",
        "timeline.svg",
        ".cardguard-stale1.tmp",
    ] {
        assert!(!dir.join(f).exists(), "{f} of the earlier run is gone");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "the user's"
    );
    sigkill(paused);
    let second = sb.finish(second.wait_with_output().unwrap());
    let r = second.consistent_report(0);
    assert_ne!(r.run_id, first_id);
    assert_eq!(
        runner::report::journal_run_id(&dir.join("journal.jsonl")).unwrap(),
        Some(r.run_id.clone())
    );
    assert!(
        runner::report::read_run_dirs(std::slice::from_ref(&dir)).is_ok(),
        "merge takes it"
    );
    assert_eq!(
        second.report_files(),
        [
            "journal.jsonl",
            "junit.xml",
            "notes.txt",
            "report.json",
            "timeline.svg"
        ]
    );
}

#[test]
fn a_symlink_in_a_reports_place_is_refused_not_followed() {
    for name in ["journal.jsonl", "report.json", "junit.xml"] {
        let sb = Sandbox::new();
        let target = sb.dir.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        std::fs::create_dir(sb.report_dir()).unwrap();
        std::os::unix::fs::symlink(&target, sb.report_dir().join(name)).unwrap();
        let run = sb.run_cases("a5", "0", &["VectorAdd"], &[]);
        run.expect_code(110);
        let line = one_line(&run);
        assert!(
            line.starts_with("error: failed to write the reports: ")
                && line.contains(&format!("{name} is a symlink")),
            "{line}"
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "keep",
            "{name} not followed"
        );
        assert!(sb.report_dir().join(name).is_symlink(), "{name} left alone");
        cards_free(&sb);
    }
}

#[test]
fn reports_that_cannot_be_written_exit_110_whatever_the_verdicts() {
    // Before the run: the report dir cannot be made (a file is in its way): nothing runs.
    let sb = Sandbox::new();
    std::fs::write(sb.report_dir(), "a file").unwrap();
    let run = sb.run_cases("a5", "0", &["VectorAdd"], &[]);
    run.expect_code(110);
    let line = one_line(&run);
    assert!(line.contains(&sb.report_dir().display().to_string()), "{line}");
    assert!(run.stdout.is_empty(), "nothing ran: {}", run.dump());
    cards_free(&sb);

    // After the run: the report dir was replaced by a file while it ran. The verdicts pass; the
    // summary is printed, then the error, and the status is 110.
    let sb = Sandbox::new();
    let (child, paused) = paused_run(&sb);
    let dir = sb.report_dir();
    std::fs::rename(&dir, sb.dir.path().join("moved")).unwrap();
    std::fs::write(&dir, "in the way").unwrap();
    sigkill(paused);
    let run = sb.finish(child.wait_with_output().unwrap());
    run.expect_code(110);
    assert!(
        run.stdout.starts_with("PASS "),
        "the summary first: {}",
        run.dump()
    );
    let line = one_line(&run);
    assert!(line.starts_with("error: failed to write the reports: "), "{line}");
    assert!(run.temp_left().is_empty(), "no sink left: {:?}", run.temp_left());
    cards_free(&sb);
}
