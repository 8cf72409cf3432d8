//! Finding the lane processes of a run and SIGKILLing one.
//!
//! This module owns the `--kill` mechanics: a lane is a child of the suite process whose command
//! line has `--lane` (its card follows `--device`), found through `/proc`; the kill goes through a
//! pidfd opened first and re-checked (still that run's lane) so a pid reused after the lane's exit
//! is never signalled. It never decides when to kill (see `run`).

use std::path::Path;

use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};

/// A lane process of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    /// Its pid.
    pub pid: u32,
    /// Its card (`--device N`), when its command line names one.
    pub device: Option<u32>,
}

/// The parent pid in a `/proc/PID/stat` line (the field after the `(comm)`, which may itself
/// hold spaces and parentheses).
pub fn stat_ppid(stat: &str) -> Option<u32> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    fields.next()?.parse().ok()
}

/// Whether a NUL-separated command line is a lane's, and its `--device`.
pub fn lane_args(cmdline: &[u8]) -> Option<Option<u32>> {
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    if !args.iter().any(|a| *a == b"--lane") {
        return None;
    }
    let device = args
        .windows(2)
        .find(|w| w[0] == b"--device")
        .and_then(|w| std::str::from_utf8(w[1]).ok())
        .and_then(|d| d.parse().ok());
    Some(device)
}

fn lane_at(proc_dir: &Path, pid: u32, parent: u32) -> Option<Lane> {
    let dir = proc_dir.join(pid.to_string());
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    if stat_ppid(&stat)? != parent {
        return None;
    }
    let cmdline = std::fs::read(dir.join("cmdline")).ok()?;
    let device = lane_args(&cmdline)?;
    Some(Lane { pid, device })
}

/// The lanes alive now among the children of `parent`, by pid.
pub fn lanes_of(parent: u32) -> Vec<Lane> {
    let proc_dir = Path::new("/proc");
    let Ok(entries) = std::fs::read_dir(proc_dir) else {
        return Vec::new();
    };
    let mut lanes: Vec<Lane> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| lane_at(proc_dir, pid, parent))
        .collect();
    lanes.sort_by_key(|l| l.pid);
    lanes
}

/// SIGKILLs `lane` if it is still a lane of `parent`; returns whether the signal was sent.
pub fn kill_lane(lane: Lane, parent: u32) -> bool {
    let Some(pid) = i32::try_from(lane.pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    let Ok(fd) = pidfd_open(pid, PidfdFlags::empty()) else {
        return false; // gone already
    };
    // The pidfd pins this process: if it is still the run's lane now, the signal reaches it.
    if lane_at(Path::new("/proc"), lane.pid, parent).is_none() {
        return false;
    }
    pidfd_send_signal(&fd, Signal::Kill).is_ok()
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn stat_and_cmdline_are_read_as_proc_writes_them() {
        assert_eq!(stat_ppid("4242 (cardguard-suite) S 4000 4242 1 0"), Some(4000));
        assert_eq!(stat_ppid("7 (a (weird) name) R 1 7 7 0"), Some(1));
        assert_eq!(stat_ppid("garbage"), None);
        let lane = b"/t/cardguard-suite\0--lane\0--device\x003\0--arch\0a5\0";
        assert_eq!(lane_args(lane), Some(Some(3)));
        assert_eq!(lane_args(b"/t/cardguard-suite\0--arch\0a5\0"), None);
        assert_eq!(lane_args(b"x\0--lane\0"), Some(None));
    }

    #[test]
    fn a_lane_child_is_found_and_killed() {
        let me = std::process::id();
        // A child whose command line has `--lane --device 5`; it blocks reading its stdin until
        // killed (or until the pipe closes).
        let mut child = Command::new("sh")
            .args(["-c", "read x", "sh", "--lane", "--device", "5"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let lane = lanes_of(me)
            .into_iter()
            .find(|l| l.pid == pid)
            .expect("the child is found as a lane of this process");
        assert_eq!(lane.device, Some(5));
        assert!(!kill_lane(lane, pid), "a lane of another parent is not killed");
        assert!(kill_lane(lane, me));
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9));
        assert!(!kill_lane(lane, me), "a reaped lane is not signalled");
    }
}
