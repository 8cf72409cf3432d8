//! Ending a lane's process group: SIGTERM, a grace period, then SIGKILL (or SIGKILL at once).
//!
//! This file owns the signals and the grace deadline of one termination, driven by the event loop's
//! clock (it never sleeps): [`Termination::poll`] sends SIGKILL once the grace period is over. It
//! never decides *why* a lane is ended (the event loop does, and keeps the [`KillReason`]).

use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};

/// Why a lane is being ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReason {
    /// The running case exceeded `--case-timeout`.
    CaseTimeout,
    /// The lane had work outstanding but sent nothing for `--case-timeout` outside a case
    /// (building, switching or retiring a worker, or closing one before the multi-card phase).
    Watchdog,
    /// The lane was told to close (its channel shut down) and did not exit in time.
    CloseLate,
    /// Building a worker (an init) exceeded `--init-timeout`: the card's problem, no case's.
    InitTimeout,
    /// A signal interrupted the run: every lane is ended.
    Interrupted,
    /// The lane broke its protocol: a line longer than [`crate::protocol::MAX_LINE`].
    ProtocolLine,
}

/// One termination of a lane's process group.
#[derive(Debug)]
pub struct Termination {
    pgid: u32,
    sigkill_at: Instant,
    sent_kill: bool,
    /// Why.
    pub reason: KillReason,
}

impl Termination {
    /// Sends SIGTERM to the process group `pgid` now and SIGKILL at `now + grace` (see
    /// [`Termination::poll`]); a zero grace sends SIGKILL at once.
    pub fn begin(pgid: u32, reason: KillReason, now: Instant, grace: Duration) -> Self {
        let mut t = Self {
            pgid,
            sigkill_at: now + grace,
            sent_kill: false,
            reason,
        };
        if grace.is_zero() {
            t.kill();
        } else {
            signal_group(pgid, Signal::Term);
        }
        t
    }

    /// When SIGKILL is due, while it has not been sent.
    pub fn deadline(&self) -> Option<Instant> {
        (!self.sent_kill).then_some(self.sigkill_at)
    }

    /// Sends SIGKILL if the grace period is over at `now`. Returns whether it was sent now.
    pub fn poll(&mut self, now: Instant) -> bool {
        if self.sent_kill || now < self.sigkill_at {
            return false;
        }
        self.kill();
        true
    }

    fn kill(&mut self) {
        signal_group(self.pgid, Signal::Kill);
        self.sent_kill = true;
    }
}

/// Sends `sig` to the process group `pgid` (a group already gone is no error).
pub fn signal_group(pgid: u32, sig: Signal) {
    let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) else {
        return;
    };
    if let Err(e) = kill_process_group(pid, sig) {
        tracing::debug!(pgid, ?sig, "cannot signal the lane's group: {e}");
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read};
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::{Command, Stdio};

    use super::*;

    /// A process group that ignores SIGTERM (a shell and its child `sleep`, both with TERM
    /// ignored) dies of the SIGKILL sent after the grace period; both processes go (the pipe
    /// they share reaches end of file only when every holder has exited).
    #[test]
    fn a_group_that_ignores_sigterm_dies_of_sigkill_after_the_grace() {
        let mut child = Command::new("sh")
            .args(["-c", "trap '' TERM; sleep 30 & echo ready; wait"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "the trap is set and the child started");

        let start = Instant::now();
        let grace = Duration::from_secs(2);
        let mut t = Termination::begin(child.id(), KillReason::CaseTimeout, start, grace);
        assert_eq!(t.deadline(), Some(start + grace));
        assert!(!t.poll(start + grace / 2), "no SIGKILL within the grace period");
        assert!(t.poll(start + grace), "SIGKILL once the grace period is over");
        assert_eq!(t.deadline(), None);
        assert!(!t.poll(start + grace * 2), "SIGKILL is sent once");

        let mut rest = Vec::new();
        out.read_to_end(&mut rest).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(9),
            "SIGTERM was ignored and SIGKILL ended the group leader: {status:?}"
        );
    }

    #[test]
    fn a_zero_grace_kills_at_once() {
        let mut child = Command::new("sh")
            .args(["-c", "trap '' TERM; echo ready; exec sleep 30"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let t = Termination::begin(child.id(), KillReason::CloseLate, Instant::now(), Duration::ZERO);
        assert_eq!(t.deadline(), None);
        assert_eq!(child.wait().unwrap().signal(), Some(9));
    }
}
