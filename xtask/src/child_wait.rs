//! Waiting for a child process with a bound, for the soak and chaos commands.
//!
//! This module owns one thing: waiting for a child's exit or a bound, whichever comes first,
//! without polling (a waiter thread owns the child and reports its exit on a channel). Past the
//! bound it calls the caller's kill and waits for the exit the kill brings. While the waiter has
//! not reaped the child its pid cannot be reused, so a kill by that pid (or process group) can only
//! reach the child's own processes. It never decides what to kill.

use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::Duration;

/// How a bounded wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// The child exited within the bound.
    Exited(ExitStatus),
    /// The bound passed; the kill was made and the child then exited with this status.
    Killed(ExitStatus),
}

/// Waits for `child` up to `bound`; past it calls `kill(pid)` and waits for the exit.
pub fn wait_bounded(mut child: Child, bound: Duration, kill: impl FnOnce(u32)) -> std::io::Result<Waited> {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let waited = match rx.recv_timeout(bound) {
        Ok(status) => status.map(Waited::Exited),
        Err(_) => {
            kill(pid);
            match rx.recv() {
                Ok(status) => status.map(Waited::Killed),
                Err(_) => Err(std::io::Error::other("the waiter thread ended without a status")),
            }
        }
    };
    let _ = waiter.join();
    waited
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn a_quick_child_exits_and_a_stuck_one_is_killed_past_the_bound() {
        let quick = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        match wait_bounded(quick, Duration::from_secs(600), |_| panic!("no kill")).unwrap() {
            Waited::Exited(s) => assert_eq!(s.code(), Some(3)),
            Waited::Killed(_) => panic!("killed"),
        }
        // Blocks reading a pipe that this test keeps open (`Child::wait` would close a stdin it
        // holds): only the kill ends it.
        let mut stuck = Command::new("sh")
            .args(["-c", "read x"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let _stdin = stuck.stdin.take();
        let kill = |pid: u32| {
            let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
            rustix::process::kill_process(pid, rustix::process::Signal::Kill).unwrap();
        };
        match wait_bounded(stuck, Duration::from_millis(100), kill).unwrap() {
            Waited::Killed(s) => {
                use std::os::unix::process::ExitStatusExt;
                assert_eq!(s.signal(), Some(9));
            }
            Waited::Exited(s) => panic!("a stuck child exited by itself: {s}"),
        }
    }
}
