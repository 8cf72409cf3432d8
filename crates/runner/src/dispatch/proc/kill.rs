//! Signalling a lane's process group: the state machine's [`LaneSignal`]s carried out.
//!
//! The termination itself (SIGTERM, a grace period, then SIGKILL, on the run's clock) is the state
//! machine's ([`crate::dispatch::state::Ending`]); this file sends the signals it asks for. It
//! never decides when or why a lane is ended.

use rustix::process::{kill_process_group, Pid, Signal};

use crate::dispatch::state::LaneSignal;

/// Sends `sig` to the process group `pgid` (a group already gone is no error).
pub fn signal_group(pgid: u32, sig: Signal) {
    let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) else {
        return;
    };
    if let Err(e) = kill_process_group(pid, sig) {
        tracing::debug!(pgid, ?sig, "cannot signal the lane's group: {e}");
    }
}

/// Sends the state machine's `signal` to the process group `pgid`.
pub fn signal_lane(pgid: u32, signal: LaneSignal) {
    let sig = match signal {
        LaneSignal::Term => Signal::Term,
        LaneSignal::Kill => Signal::Kill,
    };
    signal_group(pgid, sig);
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read};
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::{Command, Stdio};
    use std::time::Duration;

    use super::*;
    use crate::dispatch::policy::KillReason;
    use crate::dispatch::state::Ending;

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

        let start = Duration::from_secs(100);
        let grace = Duration::from_secs(2);
        let (mut t, first) = Ending::begin(KillReason::CaseTimeout, start, grace);
        signal_lane(child.id(), first);
        assert_eq!(t.deadline(), Some(start + grace));
        assert!(!t.poll(start + grace / 2), "no SIGKILL within the grace period");
        assert!(t.poll(start + grace), "SIGKILL once the grace period is over");
        signal_lane(child.id(), LaneSignal::Kill);
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
        let (t, first) = Ending::begin(KillReason::CloseLate, Duration::ZERO, Duration::ZERO);
        signal_lane(child.id(), first);
        assert_eq!(t.deadline(), None);
        assert_eq!(child.wait().unwrap().signal(), Some(9));
    }
}
