//! Lane processes as the dispatcher sees them: spawning one (its own process group, the card's
//! lease handed down, its sink named or not), writing assignments, and one reader thread per lane
//! feeding its events into the dispatcher's channel.
//!
//! This file owns the child process plumbing. It never interprets an event (the event loop does)
//! and never signals a lane (`kill` does).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::Sender;

use platform_common::{DeviceId, DeviceLease};

use crate::protocol::{FromLane, ToLane, ENV_POISON_SINK, LANE_FLAG};
use crate::report::model::{Interruption, LaneStatus};

/// A lane's serial number within a run.
pub type LaneId = usize;

/// What a lane's reader thread reports.
#[derive(Debug)]
pub enum LaneEvent {
    /// One decoded line.
    Msg(LaneId, FromLane),
    /// The lane closed its stdout and was reaped.
    Exited(LaneId, LaneStatus),
    /// SIGINT or SIGTERM reached the dispatcher (`dispatch::signals`): end the run.
    Interrupted(Interruption),
}

/// How to start lanes: the suite binary and the arguments every lane gets.
#[derive(Debug, Clone)]
pub struct LaneCommand {
    /// The suite binary (this executable).
    pub exe: PathBuf,
    /// Arguments after [`LANE_FLAG`] (arch, platform, suite, ...), without the card.
    pub args: Vec<OsString>,
    /// Extra environment for lanes.
    pub env: Vec<(OsString, OsString)>,
}

/// A live lane process.
#[derive(Debug)]
pub struct LaneProc {
    /// Its pid (also its process group id).
    pub pid: u32,
    stdin: Option<ChildStdin>,
}

impl LaneProc {
    /// Starts a lane on `device` holding `leases` (its own card's first; more for a multi-card
    /// lane), appending to `sink` when given.
    pub fn spawn(
        cmd: &LaneCommand,
        id: LaneId,
        device: DeviceId,
        leases: &[&DeviceLease],
        sink: Option<&Path>,
        tx: Sender<LaneEvent>,
    ) -> std::io::Result<Self> {
        let mut c = Command::new(&cmd.exe);
        c.arg(LANE_FLAG)
            .args(&cmd.args)
            .arg("--device")
            .arg(device.to_string())
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        DeviceLease::pass_all_to(leases, &mut c).map_err(std::io::Error::other)?;
        match sink {
            Some(p) => c.env(ENV_POISON_SINK, p),
            None => c.env_remove(ENV_POISON_SINK),
        };
        let mut child = c.spawn()?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("lane stdout was not piped"))?;
        std::thread::Builder::new()
            .name(format!("lane-{id}-card{device}"))
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    match reader.read_until(b'\n', &mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                    if line.last() != Some(&b'\n') {
                        // A torn last line: the lane died mid-write.
                        tracing::warn!(lane = id, device, "ignoring a torn line from a dying lane");
                        break;
                    }
                    match serde_json::from_slice::<FromLane>(&line) {
                        Ok(msg) => {
                            if tx.send(LaneEvent::Msg(id, msg)).is_err() {
                                break;
                            }
                        }
                        Err(e) => tracing::warn!(lane = id, device, "ignoring a malformed lane line: {e}"),
                    }
                }
                let status = match child.wait() {
                    Ok(s) => LaneStatus::from_exit_status(s),
                    Err(e) => {
                        tracing::error!(lane = id, device, "cannot reap the lane: {e}");
                        LaneStatus::Exited(-1)
                    }
                };
                let _ = tx.send(LaneEvent::Exited(id, status));
            })?;
        Ok(Self { pid, stdin })
    }

    /// Sends an assignment. A lane that is gone is reported by its exit, not here.
    pub fn send(&mut self, msg: &ToLane) {
        let Some(stdin) = &mut self.stdin else { return };
        let line = match msg.to_line() {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(pid = self.pid, "cannot encode an assignment: {e}");
                return;
            }
        };
        if let Err(e) = stdin.write_all(&line) {
            tracing::debug!(pid = self.pid, "cannot write to the lane (it is exiting): {e}");
        }
    }

    /// Closes the lane's stdin: it finishes what it has, closes its pool and exits.
    pub fn close(&mut self) {
        self.stdin = None;
    }
}
