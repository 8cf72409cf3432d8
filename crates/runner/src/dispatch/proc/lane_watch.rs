//! One lane's watcher: a thread that polls the lane's channel, its two capture pipes and its exit
//! together, and feeds the event loop in the order things happened in the lane.
//!
//! - The channel is read in bounded lines ([`crate::protocol::MAX_LINE`], `lane_chan`): past the bound the watcher reports
//!   [`LaneEvent::LineTooLong`] (the event loop kills the lane) and reads no more of it.
//! - Output is split at the lane's marks ([`crate::protocol::MarkScanner`]): before forwarding a
//!   `started` or `finished` message with mark `k`, the watcher reads each pipe up to mark `k`
//!   (it is already there: the lane wrote it before the message) and forwards what came before;
//!   what came after is held until the message is forwarded. So a case's output reaches the event
//!   loop between its `started` and its `finished`. A pipe whose held bytes pass a bound is not
//!   read until its message comes (the lane then waits on a full pipe, never the dispatcher).
//! - A pipe that gives nothing but marks goes quiet: it is read when a message needs its mark and
//!   every 20 ms, not polled, so a lane that prints nothing costs no wake-up per case boundary;
//!   its first output bytes make it polled again.
//! - The lane's device log (its private `ASCEND_PROCESS_LOG_PATH`, `device_log`) is read at the
//!   same boundaries: before a marked message is forwarded, what the runtime appended since the
//!   last one goes as [`Stream::DeviceLog`] output, and once more before the exit is reported;
//!   the directory is removed with the watcher.
//! - The lane's exit is watched on its own (a pidfd; a thread blocked in `waitid` on kernels
//!   without one), not at the pipes' end of file: a descendant that keeps them open cannot hang
//!   the run. At the exit the lane's process group is killed, what is readable is drained for at
//!   most [`EXIT_DRAIN_GRACE`], and then the lane is reaped and reported exited, whatever a
//!   descendant outside its group still holds open. The lane stays a zombie until then, so its
//!   pid, which is its group's id, cannot be reused while anyone (this thread, or the event loop
//!   ending it) may still signal that group.
//!
//! This file owns that thread. It never interprets a message beyond its mark and never decides
//! what a death means (the state machine does).

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::Child;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use platform_common::DeviceId;
use rustix::event::{poll, PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::Signal;

use super::device_log::DeviceLogDir;
use super::exit_signal::ExitSignal;
use super::kill::signal_group;
use super::lane_chan::Chan;
use super::lane_event::LaneEvent;
use super::lane_pipe::{Pipe, Read, HOLD_LIMIT};
use crate::dispatch::state::{LaneId, Stream};
use crate::protocol::FromLane;
use crate::report::model::LaneStatus;

/// How long a dead lane's output and channel are drained before it is reported exited.
pub const EXIT_DRAIN_GRACE: Duration = Duration::from_secs(1);

/// Bytes read at once.
const CHUNK: usize = 64 * 1024;

/// How often a quiet pipe (see [`Pipe::eager`]) is read when no message comes.
const QUIET_DRAIN: Duration = Duration::from_millis(20);

/// Which descriptor a poll slot is.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Chan,
    Out(usize),
    Exit,
}

/// The watcher of one lane (see the module docs).
#[derive(Debug)]
pub struct Watch {
    id: LaneId,
    device: DeviceId,
    pid: u32,
    child: Child,
    exit: ExitSignal,
    chan: Chan,
    outs: Vec<Pipe>,
    /// The lane's private device-log directory (none when it could not be made).
    device_log: Option<DeviceLogDir>,
    nonce: String,
    /// The mark of the last message forwarded.
    released: u64,
    /// When the lane exited (it is reaped at the end).
    dead_at: Option<Instant>,
    buf: Vec<u8>,
}

impl Watch {
    /// The watcher of lane `id` (process `child`) on `device`: its exit signal, the dispatcher's
    /// end of its channel, and the nonce of its output marks.
    pub fn new(
        id: LaneId,
        device: DeviceId,
        child: Child,
        exit: ExitSignal,
        chan: UnixStream,
        nonce: &str,
    ) -> Self {
        Self {
            id,
            device,
            pid: child.id(),
            child,
            exit,
            chan: Chan::new(chan, id, device),
            outs: Vec::new(),
            device_log: None,
            nonce: nonce.to_owned(),
            released: 0,
            dead_at: None,
            buf: vec![0; CHUNK],
        }
    }

    /// The same watcher reading the read end `fd` (non-blocking) of the lane's `stream`.
    pub fn with_output(mut self, stream: Stream, fd: OwnedFd) -> Self {
        self.outs.push(Pipe::new(stream, fd, &self.nonce));
        self
    }

    /// The same watcher reading the lane's device-log directory `dir` at each boundary (and
    /// removing it at the end).
    pub fn with_device_log(mut self, dir: Option<DeviceLogDir>) -> Self {
        self.device_log = dir;
        self
    }

    /// Forwards what the runtime logged since the last boundary.
    fn release_device_log(&mut self, tx: &Sender<LaneEvent>) {
        if let Some(d) = &mut self.device_log {
            let bytes = d.read_new();
            if !bytes.is_empty() {
                let _ = tx.send(LaneEvent::Output(self.id, Stream::DeviceLog, bytes));
            }
        }
    }

    /// Runs until the lane has exited and its output is drained (or the grace is over); the last
    /// event sent is [`LaneEvent::Exited`].
    pub fn run(mut self, tx: &Sender<LaneEvent>) {
        loop {
            let dead = self.dead_at.is_some();
            let quiet = self.outs.iter().any(|o| o.fd.is_some() && !o.eager);
            let timeout = match self.dead_at {
                Some(t) => {
                    let left = EXIT_DRAIN_GRACE.saturating_sub(t.elapsed());
                    if left.is_zero() {
                        break;
                    }
                    i32::try_from(left.as_millis() + 1).unwrap_or(i32::MAX)
                }
                None if quiet => QUIET_DRAIN.as_millis() as i32,
                None => -1,
            };
            let mut slots = Vec::new();
            let ready: Vec<bool> = {
                let mut fds = Vec::new();
                if let Some(c) = self.chan.sock() {
                    fds.push(PollFd::new(c, PollFlags::IN));
                    slots.push(Slot::Chan);
                }
                for (i, o) in self.outs.iter().enumerate() {
                    if let Some(fd) = &o.fd {
                        if dead || (o.eager && o.held < HOLD_LIMIT) {
                            fds.push(PollFd::new(fd, PollFlags::IN));
                            slots.push(Slot::Out(i));
                        }
                    }
                }
                if !dead {
                    fds.push(PollFd::new(&self.exit, PollFlags::IN));
                    slots.push(Slot::Exit);
                }
                if fds.is_empty() {
                    // Dead, and everything it held is closed.
                    break;
                }
                match poll(&mut fds, timeout) {
                    Ok(0) if !dead => {
                        // Nothing for a while: read the quiet pipes once.
                        for i in 0..self.outs.len() {
                            if !self.outs[i].eager && self.outs[i].held < HOLD_LIMIT {
                                self.read_out(i);
                                self.release(i, false, tx);
                            }
                        }
                        continue;
                    }
                    Ok(_) => fds.iter().map(|f| !f.revents().is_empty()).collect(),
                    Err(Errno::INTR) => continue,
                    Err(e) => {
                        tracing::error!(lane = self.id, device = self.device, "cannot poll the lane: {e}");
                        break;
                    }
                }
            };
            for (slot, ready) in slots.into_iter().zip(ready) {
                if !ready {
                    continue;
                }
                match slot {
                    Slot::Exit => self.exited(),
                    Slot::Chan => self.read_chan(tx),
                    Slot::Out(i) => {
                        self.read_out(i);
                        self.release(i, false, tx);
                    }
                }
            }
        }
        self.finish(tx);
    }

    /// The lane exited: its group is killed, so a descendant in it goes too (the lane is a zombie
    /// until [`finish`](Self::finish) reaps it, so the group id is still its own).
    fn exited(&mut self) {
        signal_group(self.pid, Signal::Kill);
        self.dead_at = Some(Instant::now());
    }

    fn read_chan(&mut self, tx: &Sender<LaneEvent>) {
        let got = self.chan.read(&mut self.buf);
        for msg in got.msgs {
            self.forward(msg, tx);
        }
        if let Some(e) = got.too_long {
            tracing::warn!(
                lane = self.id,
                device = self.device,
                pid = self.pid,
                "{e}: ending the lane"
            );
            let _ = tx.send(LaneEvent::LineTooLong(self.id));
        }
    }

    /// Forwards a message: for a marked one, first the output before its mark, after it the
    /// output that follows.
    fn forward(&mut self, msg: FromLane, tx: &Sender<LaneEvent>) {
        let mark = msg.mark();
        if mark <= self.released {
            let _ = tx.send(LaneEvent::Msg(self.id, msg));
            return;
        }
        for i in 0..self.outs.len() {
            // The mark is already in the pipe (written before the message): read up to it. A pipe
            // that runs dry first lost its mark (the lane's fd was redirected): nothing to wait for.
            while self.outs[i].seen < mark && self.read_out(i) == Read::Data {
                self.release(i, false, tx);
            }
            self.release(i, false, tx);
        }
        self.release_device_log(tx);
        let _ = tx.send(LaneEvent::Msg(self.id, msg));
        self.released = mark;
        for i in 0..self.outs.len() {
            self.release(i, false, tx);
        }
    }

    /// One read of pipe `i` into its queue.
    fn read_out(&mut self, i: usize) -> Read {
        self.outs[i].read(&mut self.buf, self.id)
    }

    /// Forwards the output of pipe `i` that may go now (`all`: everything, at the end).
    fn release(&mut self, i: usize, all: bool, tx: &Sender<LaneEvent>) {
        let o = &mut self.outs[i];
        if let Some(bytes) = o.ready(self.released, all) {
            let _ = tx.send(LaneEvent::Output(self.id, o.stream, bytes));
        }
    }

    /// Forwards whatever is left and reports the exit.
    fn finish(mut self, tx: &Sender<LaneEvent>) {
        for i in 0..self.outs.len() {
            self.outs[i].finish();
            self.release(i, true, tx);
        }
        self.release_device_log(tx);
        // At once for a lane that exited; after a failed poll, the plain way.
        let status = match self.child.wait() {
            Ok(s) => LaneStatus::from_exit_status(s),
            Err(e) => {
                tracing::error!(lane = self.id, device = self.device, "cannot reap the lane: {e}");
                LaneStatus::Exited(-1)
            }
        };
        let _ = tx.send(LaneEvent::Exited(self.id, status));
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::sync::mpsc;

    use rustix::pipe::{pipe_with, PipeFlags};
    use rustix::process::{pidfd_open, PidfdFlags};

    use super::super::exit_signal::to_pid;
    use super::*;

    /// A lane whose in-group descendant keeps its pipes open: the exit is reported with the output
    /// written before it, and the group kill ends the descendant (whose pipe end then closes).
    #[test]
    fn a_descendant_holding_the_pipes_does_not_hold_the_exit() {
        let (r, w) = pipe_with(PipeFlags::CLOEXEC).unwrap();
        rustix::io::ioctl_fionbio(&r, true).unwrap();
        let c = Command::new("sh")
            .args(["-c", "sleep 1000 & echo $!; printf 'last words'; exit 3"])
            .stdin(Stdio::null())
            .stdout(Stdio::from(w))
            .process_group(0)
            .spawn()
            .unwrap();
        let exit = ExitSignal::open(c.id()).unwrap();
        let (ours, theirs) = UnixStream::pair().unwrap();
        drop(theirs);
        let watch = Watch::new(0, 0, c, exit, ours, "n").with_output(Stream::Stdout, r);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || watch.run(&tx));
        let mut out = Vec::new();
        let status = loop {
            match rx.recv().unwrap() {
                LaneEvent::Output(0, Stream::Stdout, b) => out.extend(b),
                LaneEvent::Exited(0, s) => break s,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(status, LaneStatus::Exited(3));
        let out = String::from_utf8(out).unwrap();
        let (sleeper, rest) = out.split_once('\n').unwrap();
        assert_eq!(rest, "last words");
        // The sleeper died of the group kill: its pidfd turns readable (it would not for 1000 s).
        match pidfd_open(to_pid(sleeper.parse().unwrap()).unwrap(), PidfdFlags::empty()) {
            Err(Errno::SRCH) => {} // dead and reaped already
            Ok(sleeper) => {
                let mut fds = [PollFd::new(&sleeper, PollFlags::IN)];
                assert_eq!(
                    poll(&mut fds, 60_000).unwrap(),
                    1,
                    "the descendant outlived the group kill"
                );
            }
            Err(e) => panic!("{e}"),
        }
    }
}
