//! Exclusion holds across cleaners (issue 8, item 7, the dispatcher's side): the run holds its lock
//! dir with a shared `flock` (so `systemd-tmpfiles` skips it), and a card whose lock file is
//! deleted under the run gets no more work: its cases go to the other card, every case still gets
//! a verdict, and the run ends with exit 2 and an error naming the lock dir.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use runner::report::model::Outcome;

const CASES: [&str; 4] = ["VectorAdd", "Softmax", "RmsNorm", "Matmul"];

/// The card a lane process was started for (its `--device N` argument).
fn lane_card(pid: u32) -> u32 {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let i = args
        .iter()
        .position(|a| a == "--device")
        .expect("a lane has --device");
    args[i + 1].parse().unwrap()
}

#[test]
fn a_lock_file_deleted_under_the_run_takes_its_card_out_and_ends_the_run_with_exit_2() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &selectors(&CASES));
    let hook = sb.pause_hook();
    let child = sb
        .command("a5", &Sandbox::selection("0,1", &CASES, &["--test-hooks"]))
        .env("ONBOARD_TEST_LANE_PAUSE", hook.at("after_result"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = hook
        .announcement()
        .recv_timeout(Duration::from_secs(120))
        .expect("a lane paused after a result");
    let pid: u32 = line.split_whitespace().next().unwrap().parse().unwrap();
    let card = lane_card(pid);

    // The run holds its lock dir shared: an exclusive lock (a cleaner's) is refused meanwhile.
    let cleaner = Command::new("flock")
        .args(["-n", "-x"])
        .arg(sb.lock_dir())
        .arg("true")
        .status()
        .unwrap();
    assert_eq!(
        cleaner.code(),
        Some(1),
        "flock -n -x on the held lock dir must fail"
    );

    // A cleaner deletes the paused lane's lock file; the lane dies; its card must get no more work.
    std::fs::remove_file(sb.lock_dir().join(format!("card-{card}.lock"))).unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::Kill,
    )
    .unwrap();
    let run = sb.finish(child.wait_with_output().unwrap());
    run.expect_code(2);
    let lock_dir = sb.lock_dir().display().to_string();
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("error: ") && l.contains(&lock_dir)),
        "the error names the lock dir {lock_dir}:\n{}",
        run.dump()
    );

    let r = run.report();
    assert_consistent(&r);
    assert_eq!(r.cases.len(), ids.len(), "every case has a verdict");
    for c in &r.cases {
        assert!(
            matches!(c.outcome, Outcome::Passed | Outcome::Flaky),
            "{}: {:?}\n{}",
            c.id,
            c.attempts,
            run.dump()
        );
    }
    assert!(
        health(&r, card).contains(&"quarantined"),
        "card {card} is out of the run: {:?}",
        health(&r, card)
    );
    // No attempt ran on the card after its lock file went: the replacement lane never started.
    let started_after = run
        .journal()
        .iter()
        .filter(|e| matches!(e, runner::report::model::Event::LaneStarted { device, .. } if *device == card))
        .count();
    assert_eq!(
        started_after, 1,
        "no lane started on card {card} after its lease was lost"
    );
}
