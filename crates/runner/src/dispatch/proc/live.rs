//! The process groups of the run's live lanes, shared between the event loop and the signal
//! thread, so a second SIGINT / SIGTERM that ends the dispatcher at once still ends its lanes
//! first and frees their cards before the process is gone.
//!
//! This file owns the set and the last-resort kill. It never decides when a lane ends (the state
//! machine does) and never reaps one (the lane's watch thread does).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags};
use rustix::process::{pidfd_open, Pid, PidfdFlags, Signal};

use super::kill::signal_group;

/// The pids (= process group ids) of the lanes that have not exited yet.
#[derive(Debug, Clone, Default)]
pub struct LiveLanes(Arc<Mutex<BTreeSet<u32>>>);

impl LiveLanes {
    /// A lane started.
    pub fn add(&self, pid: u32) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(pid);
    }

    /// A lane exited (was reaped).
    pub fn remove(&self, pid: u32) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(&pid);
    }

    /// SIGKILLs every live lane's process group and waits, up to `bound`, until each lane process
    /// has exited (its pidfd turns readable): a process that has exited holds no descriptor, so
    /// its leases are free on return. Returns the pids still running at the bound.
    pub fn kill_all_and_wait(&self, bound: Duration) -> Vec<u32> {
        let pids: Vec<u32> = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect();
        // Open the pidfds before the kill: a reaped pid is never confused with a new process.
        let fds: Vec<(u32, Option<rustix::fd::OwnedFd>)> = pids
            .iter()
            .map(|&p| {
                let fd = i32::try_from(p)
                    .ok()
                    .and_then(Pid::from_raw)
                    .and_then(|pid| pidfd_open(pid, PidfdFlags::empty()).ok());
                (p, fd)
            })
            .collect();
        for &p in &pids {
            signal_group(p, Signal::Kill);
        }
        let deadline = Instant::now() + bound;
        let mut left = Vec::new();
        for (pid, fd) in fds {
            let Some(fd) = fd else { continue };
            loop {
                let ms = deadline.saturating_duration_since(Instant::now()).as_millis();
                let mut set = [PollFd::new(&fd, PollFlags::IN)];
                match poll(&mut set, i32::try_from(ms).unwrap_or(i32::MAX)) {
                    Ok(0) => {
                        left.push(pid);
                        break;
                    }
                    Ok(_) => break,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => break,
                }
            }
        }
        left
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use super::*;

    /// A group that ignores SIGTERM is gone when `kill_all_and_wait` returns, and a removed pid is
    /// left alone.
    #[test]
    fn every_live_group_is_killed_and_waited_for() {
        let mut child = Command::new("sh")
            .args(["-c", "trap '' TERM; exec sleep 30"])
            .process_group(0)
            .spawn()
            .unwrap();
        let mut spared = Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let live = LiveLanes::default();
        live.add(child.id());
        live.add(spared.id());
        live.remove(spared.id());
        assert!(live.kill_all_and_wait(Duration::from_secs(30)).is_empty());
        // It has exited: reaping it does not block.
        let status = child.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));
        assert!(
            spared.try_wait().unwrap().is_none(),
            "a removed lane is not killed"
        );
        spared.kill().unwrap();
        spared.wait().unwrap();
    }
}
