//! A lane's exit, watched on its own: a pidfd of the lane, or, on kernels without one (before
//! 5.3), a pipe whose write end a thread blocked in `waitid(WNOWAIT)` drops at the exit. Either
//! turns readable when the lane has exited and before it is reaped, so the watcher can kill the
//! lane's group while its pid is still its group's id.
//!
//! This file owns that signal. It never reaps the lane (its watcher does, `lane_watch`).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::Errno;
use rustix::pipe::{pipe_with, PipeFlags};
use rustix::process::{pidfd_open, waitid, Pid, PidfdFlags, WaitId, WaitidOptions};

/// Becomes readable when the lane process has exited (before it is reaped).
#[derive(Debug)]
pub enum ExitSignal {
    /// A pidfd of the lane.
    Pidfd(OwnedFd),
    /// A pipe whose write end a thread blocked in `waitid(WNOWAIT)` on the lane drops at its exit
    /// (kernels before 5.3 have no pidfd).
    Waiter(OwnedFd),
}

impl ExitSignal {
    /// The exit signal of child `pid`: a pidfd, or a waiter thread where the kernel has none.
    pub fn open(pid: u32) -> io::Result<Self> {
        match pidfd_open(to_pid(pid)?, PidfdFlags::empty()) {
            Ok(fd) => Ok(Self::Pidfd(fd)),
            Err(Errno::NOSYS | Errno::PERM) => Self::waiter(pid),
            Err(e) => Err(e.into()),
        }
    }

    /// The waiter-thread signal of child `pid` (what [`open`](Self::open) falls back to).
    pub fn waiter(pid: u32) -> io::Result<Self> {
        let p = to_pid(pid)?;
        let (r, w) = pipe_with(PipeFlags::CLOEXEC)?;
        std::thread::Builder::new()
            .name(format!("lane-wait-{pid}"))
            .spawn(move || {
                // Waits without reaping: the watcher reaps, after killing the lane's group.
                while let Err(Errno::INTR) =
                    waitid(WaitId::Pid(p), WaitidOptions::EXITED | WaitidOptions::NOWAIT)
                {}
                drop(w);
            })?;
        Ok(Self::Waiter(r))
    }
}

impl AsFd for ExitSignal {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Self::Pidfd(fd) | Self::Waiter(fd) => fd.as_fd(),
        }
    }
}

/// `pid` as rustix's pid.
pub fn to_pid(pid: u32) -> io::Result<Pid> {
    i32::try_from(pid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::other(format!("not a pid: {pid}")))
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};

    use rustix::event::{poll, PollFd, PollFlags};

    use super::*;

    /// A child from `script`.
    fn child(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    }

    #[test]
    fn both_exit_signals_fire_at_the_exit_and_leave_the_child_to_reap() {
        for waiter in [false, true] {
            let mut c = child("read x < /dev/null; exit 7");
            let pid = c.id();
            let exit = if waiter {
                ExitSignal::waiter(pid).unwrap()
            } else {
                ExitSignal::open(pid).unwrap()
            };
            let mut fds = [PollFd::new(&exit, PollFlags::IN)];
            poll(&mut fds, -1).unwrap();
            assert!(!fds[0].revents().is_empty());
            let status = c.wait().unwrap();
            assert_eq!(
                status.code(),
                Some(7),
                "waiter {waiter}: not reaped by the signal"
            );
        }
    }
}
