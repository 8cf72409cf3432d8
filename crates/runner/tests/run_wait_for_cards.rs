//! Queue for busy cards (issue 9, item 3): `--wait-for-cards SECS` waits for a card another run
//! holds instead of exiting 2, in the host-wide queue of the lock dir, so waiters are served in
//! arrival order; at the deadline it gives up with exit 2 naming the holder; SIGINT ends the wait
//! with 130. Every test waits on events: the holder's paused lane announcing itself on a FIFO, a
//! waiter's printed `waiting` line, child exits.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use rustix::process::{kill_process, Pid, Signal};

/// A run of VectorAdd on card 0 with its own report dir `name` in the sandbox, plus `extra`.
fn run_on_card0(sb: &Sandbox, name: &str, extra: &[&str]) -> Command {
    let mut c = sb.bare();
    c.args([
        "--arch",
        "a5",
        "--platform",
        "sim",
        "--no-progress",
        "--devices",
        "0",
    ])
    .args(["--case", "VectorAdd", "--report-dir"])
    .arg(report_dir(sb, name))
    .args(extra)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

fn report_dir(sb: &Sandbox, name: &str) -> PathBuf {
    sb.dir.path().join(name)
}

/// A holder run on card 0 whose lane pauses mid-case: returned once it holds the card, with the
/// paused lane's pid.
fn holder(sb: &Sandbox) -> (Child, i32) {
    holder_under(sb, "")
}

/// [`holder`] under `ASCEND_RT_VISIBLE_DEVICES=map`.
fn holder_under(sb: &Sandbox, map: &str) -> (Child, i32) {
    let hook = sb.pause_hook();
    let child = run_on_card0(sb, "holder", &["--test-hooks"])
        .env("ONBOARD_TEST_LANE_PAUSE", hook.at("during_case"))
        .env("ASCEND_RT_VISIBLE_DEVICES", map)
        .spawn()
        .unwrap();
    let line = hook
        .announcement()
        .recv_timeout(Duration::from_secs(120))
        .expect("the holder's lane paused mid-case");
    let pid = line.split_whitespace().next().unwrap().parse().unwrap();
    (child, pid)
}

/// Ends the holder: its paused lane is killed from outside, the retry passes, the run ends and
/// frees card 0.
fn release(mut holder: Child, lane: i32) {
    kill_process(Pid::from_raw(lane).unwrap(), Signal::Kill).unwrap();
    assert!(holder.wait().unwrap().success(), "the holder finished");
}

/// A waiter's stderr, line by line, on a thread of its own; its stdout is drained too.
struct Waiter {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Waiter {
    fn start(mut cmd: Command) -> Self {
        let mut child = cmd.spawn().unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Blocks until the waiter prints a line starting with `prefix`; returns it.
    fn until(&mut self, prefix: &str) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("no line starting {prefix:?}; saw {:?}", self.seen));
            self.seen.push(line.clone());
            if line.starts_with(prefix) {
                return line;
            }
        }
    }

    /// Waits for its exit; its status and every stderr line.
    fn finish(mut self) -> (Option<i32>, Vec<String>) {
        let status = self.child.wait().unwrap();
        self.seen.extend(self.lines.iter());
        (status.code(), self.seen)
    }
}

fn report(sb: &Sandbox, name: &str) -> runner::report::model::RunReport {
    runner::report::read_report(&report_dir(sb, name).join("report.json")).unwrap()
}

#[test]
fn a_second_run_waits_for_the_card_and_then_runs() {
    let sb = Sandbox::new();
    let (h, lane) = holder(&sb);
    let holder_pid = h.id();
    let mut w = Waiter::start(run_on_card0(&sb, "waiter", &["--wait-for-cards", "300"]));
    let line = w.until("waiting");
    assert!(
        line.starts_with("waiting up to 300 s for card 0 (ticket ")
            && line.contains(&format!(
                "card 0 is held by uid {} pid {holder_pid} ",
                rustix::process::getuid().as_raw()
            )),
        "names the holder once: {line}"
    );
    release(h, lane);
    let (code, lines) = w.finish();
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("took card(s) 0 after waiting")),
        "{lines:?}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("waiting up to")).count(),
        1,
        "said once: {lines:?}"
    );
    let (hr, wr) = (report(&sb, "holder"), report(&sb, "waiter"));
    assert_eq!(wr.devices, [0]);
    assert!(
        wr.started_at > hr.started_at,
        "{} then {}",
        hr.started_at,
        wr.started_at
    );
    assert!(wr.summary.passed > 0 && !wr.summary.has_failures());
    assert_queue_empty(&sb);
}

#[test]
fn three_waiters_are_served_in_arrival_order() {
    let sb = Sandbox::new();
    let (h, lane) = holder(&sb);
    let mut waiters = Vec::new();
    for name in ["w1", "w2", "w3"] {
        let mut w = Waiter::start(run_on_card0(&sb, name, &["--wait-for-cards", "300"]));
        // In the queue before the next one starts: the arrival order is this one.
        w.until("waiting");
        waiters.push(w);
    }
    release(h, lane);
    for w in waiters {
        let (code, lines) = w.finish();
        assert_eq!(code, Some(0), "{lines:?}");
    }
    let starts: Vec<String> = ["w1", "w2", "w3"]
        .iter()
        .map(|n| report(&sb, n).started_at)
        .collect();
    let mut sorted = starts.clone();
    sorted.sort();
    assert_eq!(starts, sorted, "served in arrival order");
    assert_queue_empty(&sb);
}

#[test]
fn a_wait_that_runs_out_exits_2_naming_the_holder() {
    let sb = Sandbox::new();
    let (h, lane) = holder(&sb);
    let w = Waiter::start(run_on_card0(&sb, "waiter", &["--wait-for-cards", "0.5"]));
    let (code, lines) = w.finish();
    assert_eq!(code, Some(2), "{lines:?}");
    let err = lines.last().unwrap();
    assert!(
        err.starts_with(
            "error: --wait-for-cards 0.5: gave up after 0.5 s waiting for card 0: card 0 is held by uid "
        ) && err.contains(&format!(" pid {} ", h.id())),
        "{err}"
    );
    assert!(
        !report_dir(&sb, "waiter").exists(),
        "the empty report dir was removed"
    );
    assert_queue_empty(&sb);
    release(h, lane);
}

/// Issue 18 item 5, end to end: the holder's card 0 under `ASCEND_RT_VISIBLE_DEVICES=3` is
/// physical card 3; a run under `1,3` asking for its card 1 (the same physical card) is refused,
/// while its card 0 (physical 1) runs.
#[test]
fn runs_whose_maps_name_the_same_physical_card_exclude_each_other() {
    let sb = Sandbox::new();
    let (h, lane) = holder_under(&sb, "3");
    let mut same = sb.bare();
    same.args([
        "--arch",
        "a5",
        "--platform",
        "sim",
        "--no-progress",
        "--devices",
        "1",
    ])
    .args(["--case", "VectorAdd", "--report-dir"])
    .arg(report_dir(&sb, "same"))
    .env("ASCEND_RT_VISIBLE_DEVICES", "1,3")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let (code, lines) = Waiter::start(same).finish();
    assert_eq!(code, Some(2), "{lines:?}");
    let last = lines.last().unwrap();
    // The lease names the physical card, whose lock file both runs share.
    assert!(
        last.starts_with("error: --devices: card 3 is held by uid "),
        "{lines:?}"
    );
    assert!(last.contains("card-3.lock"), "{lines:?}");
    let other = run_on_card0(&sb, "other", &[])
        .env("ASCEND_RT_VISIBLE_DEVICES", "1,3")
        .output()
        .unwrap();
    assert!(
        other.status.success(),
        "physical card 1 is free: {}",
        String::from_utf8_lossy(&other.stderr)
    );
    release(h, lane);
}

#[test]
fn without_a_wait_a_busy_card_is_still_refused_at_once() {
    let sb = Sandbox::new();
    let (h, lane) = holder(&sb);
    let w = Waiter::start(run_on_card0(&sb, "waiter", &[]));
    let (code, lines) = w.finish();
    assert_eq!(code, Some(2), "{lines:?}");
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("error: --devices: card 0 is held by uid "),
        "{lines:?}"
    );
    assert!(
        last.ends_with("; --wait-for-cards SECS waits for it"),
        "{lines:?}"
    );
    release(h, lane);
}

#[test]
fn sigint_ends_a_wait_with_130() {
    let sb = Sandbox::new();
    let (h, lane) = holder(&sb);
    let mut w = Waiter::start(run_on_card0(&sb, "waiter", &["--wait-for-cards", "300"]));
    w.until("waiting");
    let pid = Pid::from_raw(i32::try_from(w.child.id()).unwrap()).unwrap();
    kill_process(pid, Signal::Int).unwrap();
    let (code, lines) = w.finish();
    assert_eq!(code, Some(130), "{lines:?}");
    assert!(
        lines.last().unwrap().contains("SIGINT while waiting for cards"),
        "{lines:?}"
    );
    assert!(
        !report_dir(&sb, "waiter").exists(),
        "the empty report dir was removed"
    );
    assert_queue_empty(&sb);
    release(h, lane);
}

/// Every ticket left the queue.
fn assert_queue_empty(sb: &Sandbox) {
    let left: Vec<_> = std::fs::read_dir(sb.lock_dir().join("queue"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
