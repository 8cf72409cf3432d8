//! Cross-process rules, with real processes (`sim-agent`): a force reset is per card; it releases
//! another process's context on the same card; launch counters hold across processes; `crash`
//! kills the launching process with SIGSEGV; `stall` blocks it forever; the same sim root means
//! the same card locks whatever `TMPDIR` says. Processes are
//! synchronised through their stdout lines and stdin, never by sleeping.

#![cfg(feature = "sim")]

mod sim_support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use platform_common::sim::card_state;
use platform_common::Arch;
use serde_json::Value;
use sim_support::Machine;

/// Generous bound on any one line, so a broken agent fails the test instead of hanging it.
const LINE_BOUND: Duration = Duration::from_secs(60);

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl Agent {
    fn spawn(m: &Machine, command: &str, card: u32, extra: &[&str]) -> Self {
        Self::spawn_with(m, command, card, extra, |cmd| {
            cmd.args(["--lock-dir", m.lock_dir().to_str().unwrap()]);
        })
    }

    /// Like [`Agent::spawn`], without `--lock-dir` unless `setup` adds it.
    fn spawn_with(
        m: &Machine,
        command: &str,
        card: u32,
        extra: &[&str],
        setup: impl FnOnce(&mut Command),
    ) -> Self {
        let mut cmd = Command::new(cardguard_test_support::bins::sim_agent().unwrap());
        cmd.arg(command)
            .args(["--root", m.cfg.root.to_str().unwrap()])
            .args(["--arch", m.cfg.arch.name()])
            .args(["--card", &card.to_string()])
            .args(extra);
        setup(&mut cmd);
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self { child, stdin, lines }
    }

    fn next(&self) -> Value {
        self.lines
            .recv_timeout(LINE_BOUND)
            .expect("agent printed nothing more")
    }

    /// Skips lines until an event named `name`.
    fn until(&self, name: &str) -> Value {
        loop {
            let v = self.next();
            if v["event"] == name {
                return v;
            }
        }
    }

    fn resume(&mut self) {
        writeln!(self.stdin.as_mut().unwrap(), "go").unwrap();
    }

    /// Closes stdin, reads every remaining line and waits for the exit.
    fn finish(mut self) -> (ExitStatus, Vec<Value>) {
        drop(self.stdin.take());
        let rest: Vec<Value> = self.lines.iter().collect();
        (self.child.wait().unwrap(), rest)
    }
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]["raw"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error code in {v}"))
}

#[test]
fn a_force_reset_of_one_card_leaves_another_process_on_another_card_alone() {
    let m = Machine::with_plan(Arch::A5, "");
    // B runs a noop loop on card 3 and stops half-way, its context live.
    let mut b = Agent::spawn(&m, "noop-loop", 3, &["--iters", "14", "--pause-after", "7"]);
    b.until("paused");
    // A force-resets card 2 while B is in the middle of its loop.
    let a = Agent::spawn(&m, "force-reset", 2, &[]);
    let reset = a.until("force_reset");
    assert_eq!(reset["ok"], true, "{reset}");
    let (status, _) = a.finish();
    assert!(status.success());
    assert_eq!(card_state(&m.cfg, 2).unwrap().generation, 1);
    b.resume();
    let (status, rest) = b.finish();
    let done = rest.iter().find(|v| v["event"] == "done").unwrap();
    assert_eq!(
        (done["passed"].as_u64(), done["failed"].as_u64()),
        (Some(14), Some(0)),
        "{rest:?}"
    );
    assert!(status.success());
    assert_eq!(
        card_state(&m.cfg, 3).unwrap().generation,
        0,
        "card 3 was never reset"
    );
}

#[test]
fn a_force_reset_releases_a_second_process_context_on_the_same_card() {
    let m = Machine::with_plan(Arch::A2a3, "");
    let mut b = Agent::spawn(&m, "hold-context", 1, &[]);
    assert_eq!(b.until("ready")["ok"], true);
    let a = Agent::spawn(&m, "force-reset", 1, &[]);
    assert_eq!(a.until("force_reset")["ok"], true);
    assert!(a.finish().0.success());
    b.resume();
    let first = b.until("call");
    assert_eq!(first["ok"], false);
    assert_eq!(code(&first), 507007, "{first}");
    assert_eq!(first["error"]["call"], "aclrtMalloc");
    let second = b.until("call");
    assert_eq!(code(&second), 507899, "{second}: the released context is sticky");
    assert!(!b.finish().0.success());
}

#[test]
fn launch_counters_hold_across_processes() {
    let m = Machine::with_plan(Arch::A2a3, "dev=0:op_timeout@2");
    let first = Agent::spawn(&m, "cases", 0, &["--kernel", "noop", "--count", "1"]);
    assert_eq!(first.until("case")["ok"], true);
    assert!(first.finish().0.success());
    // The second process's first launch is the card's second: it hangs and is reaped.
    let second = Agent::spawn(&m, "cases", 0, &["--kernel", "noop", "--count", "1"]);
    let case = second.until("case");
    assert_eq!(case["ok"], false);
    assert_eq!(code(&case), 507018, "{case}");
    assert_eq!(case["error"]["call"], "aclrtSynchronizeStreamWithTimeout");
    assert!(!second.finish().0.success());
    let st = card_state(&m.cfg, 0).unwrap();
    assert_eq!((st.counters.case_launches, st.fired.clone()), (2, vec![0]));
}

#[test]
fn crash_kills_the_launching_process_with_sigsegv() {
    let m = Machine::with_plan(Arch::A5, "dev=4:crash@2");
    let agent = Agent::spawn(&m, "cases", 4, &["--kernel", "noop", "--count", "3"]);
    assert_eq!(agent.until("case")["ok"], true);
    assert_eq!(agent.until("launching")["case"], 2);
    let (status, rest) = agent.finish();
    assert_eq!(status.signal(), Some(11), "{status:?}");
    assert!(rest.is_empty(), "nothing after the crash: {rest:?}");
    assert_eq!(card_state(&m.cfg, 4).unwrap().counters.case_launches, 2);
}

#[test]
fn stall_blocks_the_launching_thread_forever() {
    let m = Machine::with_plan(Arch::A2a3, "dev=5:stall@1");
    let mut agent = Agent::spawn(&m, "cases", 5, &["--kernel", "noop", "--count", "1"]);
    assert_eq!(agent.until("launching")["case"], 1);
    // Proving a non-event needs a bound: the launch must not return within it, nor the process end.
    assert_eq!(
        agent.lines.recv_timeout(Duration::from_millis(300)).unwrap_err(),
        RecvTimeoutError::Timeout
    );
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "a stalled host must still be alive"
    );
    agent.child.kill().unwrap();
    let (status, _) = agent.finish();
    assert_eq!(status.signal(), Some(9));
    assert_eq!(card_state(&m.cfg, 5).unwrap().fired, vec![0]);
}

#[test]
fn the_same_sim_root_means_the_same_locks_whatever_tmpdir_says() {
    let m = Machine::with_plan(Arch::A5, "");
    let tmpdirs = [m.dir.path().join("tmp-a"), m.dir.path().join("tmp-b")];
    for t in &tmpdirs {
        std::fs::create_dir(t).unwrap();
    }
    let with_tmpdir = |t: &std::path::Path| {
        let t = t.to_owned();
        move |cmd: &mut Command| {
            cmd.env("TMPDIR", t).env_remove("ONBOARD_LOCK_DIR");
        }
    };
    let mut first = Agent::spawn_with(&m, "hold-lease", 0, &[], with_tmpdir(&tmpdirs[0]));
    let taken = first.until("lease");
    assert_eq!(taken["ok"], true, "{taken}");
    assert_eq!(taken["dir"], m.cfg.root.join("locks").to_str().unwrap());
    let second = Agent::spawn_with(&m, "hold-lease", 0, &[], with_tmpdir(&tmpdirs[1]));
    let refused = second.until("lease");
    assert_eq!(
        refused["ok"], false,
        "{refused}: card 0 of one sim root was taken twice"
    );
    assert!(
        refused["error"].as_str().unwrap().contains("card 0 is held by"),
        "{refused}"
    );
    assert!(!second.finish().0.success());
    // Another sim root is another machine: its card 0 is free.
    let other = Machine::with_plan(Arch::A5, "");
    let mut third = Agent::spawn_with(&other, "hold-lease", 0, &[], with_tmpdir(&tmpdirs[1]));
    assert_eq!(third.until("lease")["ok"], true);
    first.resume();
    third.resume();
    assert!(first.finish().0.success());
    assert!(third.finish().0.success());
}
