//! Finding the lane processes of a run and SIGKILLing one.
//!
//! This module owns the `--kill` targets: a lane is a child of the suite process whose command
//! line has `--lane` (its card follows `--device`); the kill goes through
//! [`procs::kill_if_child_of`], which re-checks that the process is still that run's child. It
//! never decides when to kill (see `run`).

use crate::procs;

/// A lane process of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    /// Its pid.
    pub pid: u32,
    /// Its card (`--device N`), when its command line names one.
    pub device: Option<u32>,
}

/// Whether a NUL-separated command line is a lane's, and its `--device`.
pub fn lane_args(cmdline: &[u8]) -> Option<Option<u32>> {
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    // A suite binary's lane (`--lane ... --device N`) or a pytest lane (`--cardguard-device N`).
    if !args
        .iter()
        .any(|a| *a == b"--lane" || *a == b"--cardguard-device")
    {
        return None;
    }
    let device = args
        .windows(2)
        .find(|w| w[0] == b"--device" || w[0] == b"--cardguard-device")
        .and_then(|w| std::str::from_utf8(w[1]).ok())
        .and_then(|d| d.parse().ok());
    Some(device)
}

/// The lanes alive now among the children of `parent`, by pid.
pub fn lanes_of(parent: u32) -> Vec<Lane> {
    procs::children_of(parent)
        .into_iter()
        .filter_map(|pid| {
            let device = lane_args(&procs::cmdline(pid)?)?;
            Some(Lane { pid, device })
        })
        .collect()
}

/// SIGKILLs `lane` if it is still a child of `parent`; returns whether the signal was sent.
pub fn kill_lane(lane: Lane, parent: u32) -> bool {
    procs::kill_if_child_of(lane.pid, parent)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn lane_command_lines_are_read_as_proc_writes_them() {
        let lane = b"/t/cardguard-suite\0--lane\0--device\x003\0--arch\0a5\0";
        assert_eq!(lane_args(lane), Some(Some(3)));
        assert_eq!(lane_args(b"/t/cardguard-suite\0--arch\0a5\0"), None);
        let py = b"python3\0-m\0pytest\0-p\0cardguard_pytest.lane\0.\0--cardguard-device\x002\0";
        assert_eq!(lane_args(py), Some(Some(2)));
        assert_eq!(lane_args(b"x\0--lane\0"), Some(None));
    }

    #[test]
    fn a_lane_child_is_found_and_killed() {
        let me = std::process::id();
        // A child whose command line has `--lane --device 5`; it says it runs, then blocks
        // reading its stdin (kept open by this test) until killed.
        let mut child = Command::new("sh")
            .args(["-c", "echo running; read x", "sh", "--lane", "--device", "5"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let _stdin = child.stdin.take();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "running\n");
        let pid = child.id();
        let lane = lanes_of(me)
            .into_iter()
            .find(|l| l.pid == pid)
            .expect("the child is found as a lane of this process");
        assert_eq!(lane.device, Some(5));
        assert!(!kill_lane(lane, pid), "a lane of another parent is not killed");
        assert!(kill_lane(lane, me));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(child.wait().unwrap().signal(), Some(9));
        assert!(!kill_lane(lane, me), "a reaped lane is not signalled");
    }
}
