//! Lane processes as the dispatcher sees them: starting one (its own process group, the card's
//! lease and its private channel handed down, its stdout and stderr on capture pipes, its sink
//! named or not, its private `ASCEND_PROCESS_LOG_PATH`, from the binary the run started with), writing assignments, and the watcher
//! thread that feeds its events into the event loop's channel (`lane_watch`).
//!
//! What a lane is started as ([`LaneCommand`]) is this layer's business alone: the state machine
//! asks for a lane of a kind on cards, never for a command line.
//!
//! This file owns the child process plumbing of one spawn. It never retries a spawn (`spawn`
//! does), never interprets an event (the state machine does) and never signals a lane (`kill`
//! does).

use std::ffi::OsString;
use std::io::Write;
use std::net::Shutdown;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::Sender;

use platform_common::lease::CHILD_LEASE_FD;
use platform_common::{DeviceId, DeviceLease};
use rustix::io::{fcntl_dupfd_cloexec, ioctl_fionbio};
use rustix::pipe::{pipe_with, PipeFlags};
use rustix::process::Signal;

use super::device_log::{DeviceLogDir, ENV_PROCESS_LOG_PATH};
use super::exit_signal::ExitSignal;
use super::kill::signal_group;
use super::lane_event::LaneEvent;
use super::lane_watch::Watch;
use crate::dispatch::state::{LaneId, Stream};
use crate::protocol::{self, ToLane, ENV_OUTPUT_MARK, ENV_POISON_SINK, LANE_FLAG};

/// What kind of program a lane is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LaneStyle {
    /// The suite binary itself, exec'd through the running image: `EXE --lane ARGS [--preflight]
    /// --device N`.
    #[default]
    SuiteBinary,
    /// Another program speaking the lane protocol (a pytest lane: `python -m pytest -p
    /// cardguard_pytest.lane ...`), started from its path: `EXE ARGS [--cardguard-preflight]
    /// --cardguard-device N`.
    Foreign,
}

/// The flag a [`LaneStyle::Foreign`] lane gets its card with.
pub const FOREIGN_DEVICE_FLAG: &str = "--cardguard-device";
/// The flag that makes a [`LaneStyle::Foreign`] lane a preflight lane.
pub const FOREIGN_PREFLIGHT_FLAG: &str = "--cardguard-preflight";

/// How to start lanes: the suite binary and the arguments every lane gets.
#[derive(Debug, Clone)]
pub struct LaneCommand {
    /// The kind of program.
    pub style: LaneStyle,
    /// The suite binary (this executable): its path, for the lanes' `argv[0]` and when the
    /// running binary cannot be opened (see `spawn`).
    pub exe: PathBuf,
    /// Arguments after [`LANE_FLAG`] (arch, platform, suite, ...), without the card.
    pub args: Vec<OsString>,
    /// Extra environment for lanes.
    pub env: Vec<(OsString, OsString)>,
}

impl LaneCommand {
    /// Whether the lanes get the test-only hooks ([`protocol::TEST_HOOKS_FLAG`]).
    pub fn test_hooks(&self) -> bool {
        self.args.iter().any(|a| a == protocol::TEST_HOOKS_FLAG)
    }
}

/// One lane to start.
#[derive(Debug)]
pub(super) struct LaneSpec<'a> {
    pub(super) id: LaneId,
    pub(super) device: DeviceId,
    /// Its own card's lease first; more for a multi-card lane.
    pub(super) leases: &'a [&'a DeviceLease],
    pub(super) sink: Option<&'a Path>,
    /// A preflight lane ([`protocol::PREFLIGHT_FLAG`]): it probes its card and exits.
    pub(super) preflight: bool,
    /// The lane's private device-log directory, to be made (none: the lane inherits the run's
    /// `ASCEND_PROCESS_LOG_PATH`, if any, and no attempt of it keeps a device log).
    pub(super) device_log: Option<PathBuf>,
}

/// A live lane process.
#[derive(Debug)]
pub struct LaneProc {
    /// Its pid (also its process group id).
    pub pid: u32,
    /// The dispatcher's end of the channel, for assignments; `None` once closed.
    chan: Option<UnixStream>,
}

impl LaneProc {
    /// Starts one lane from `cmd`, exec'd through `exe` (the running binary's descriptor) when
    /// given, else from `cmd.exe`; its watcher thread sends its events down `tx`.
    pub(super) fn spawn(
        cmd: &LaneCommand,
        exe: Option<BorrowedFd<'_>>,
        spec: &LaneSpec<'_>,
        tx: Sender<LaneEvent>,
    ) -> std::io::Result<Self> {
        // The child's descriptors: the leases at 3, 4, ... (their hand-off maps them), the channel
        // right after them; every descriptor of ours the child still needs at exec (the binary's)
        // sits above all of those, where no mapping overwrites it.
        let chan_fd = CHILD_LEASE_FD + spec.leases.len() as RawFd;
        let foreign = cmd.style == LaneStyle::Foreign;
        let exe = if foreign { None } else { exe };
        let exe_dup = exe.map(|fd| fcntl_dupfd_cloexec(fd, chan_fd + 1)).transpose()?;
        let mut c = match &exe_dup {
            Some(fd) => {
                let mut c = Command::new(format!("/proc/self/fd/{}", fd.as_raw_fd()));
                c.arg0(&cmd.exe);
                c
            }
            None => Command::new(&cmd.exe),
        };
        let (out_r, out_w) = capture_pipe()?;
        let (err_r, err_w) = capture_pipe()?;
        let nonce = protocol::new_nonce();
        if foreign {
            c.args(&cmd.args)
                .args(spec.preflight.then_some(FOREIGN_PREFLIGHT_FLAG))
                .arg(FOREIGN_DEVICE_FLAG);
        } else {
            c.arg(LANE_FLAG)
                .args(&cmd.args)
                .args(spec.preflight.then_some(protocol::PREFLIGHT_FLAG))
                .arg("--device");
        }
        c.arg(spec.device.to_string())
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .env(ENV_OUTPUT_MARK, &nonce)
            .stdin(Stdio::null())
            .stdout(Stdio::from(out_w))
            .stderr(Stdio::from(err_w))
            .process_group(0);
        DeviceLease::pass_all_to(spec.leases, &mut c).map_err(std::io::Error::other)?;
        let chan = protocol::hand_to(&mut c, chan_fd)?;
        match spec.sink {
            Some(p) => c.env(ENV_POISON_SINK, p),
            None => c.env_remove(ENV_POISON_SINK),
        };
        let device_log = spec
            .device_log
            .clone()
            .and_then(|dir| match DeviceLogDir::create(dir) {
                Ok(d) => Some(d),
                Err(e) => {
                    tracing::warn!(
                        device = spec.device,
                        "cannot make the lane's device-log directory ({e}); its attempts keep no device log"
                    );
                    None
                }
            });
        if let Some(d) = &device_log {
            c.env(ENV_PROCESS_LOG_PATH, d.path());
        }
        let child = c.spawn()?;
        // Our copies of the pipes' write ends and of the lane's channel end go with the command:
        // the lane (and what it starts) holds the only ones left.
        drop(c);
        drop(exe_dup);
        let pid = child.id();
        // From here on the lane must not outlive a failed start: it is killed and reaped.
        let abort = |mut child: std::process::Child, e: std::io::Error| {
            signal_group(pid, Signal::Kill);
            let _ = child.wait();
            e
        };
        let exit = match ExitSignal::open(pid) {
            Ok(x) => x,
            Err(e) => return Err(abort(child, e)),
        };
        let ours = match chan.try_clone() {
            Ok(c) => c,
            Err(e) => return Err(abort(child, e)),
        };
        let watch = Watch::new(spec.id, spec.device, child, exit, ours, &nonce)
            .with_output(Stream::Stdout, out_r)
            .with_output(Stream::Stderr, err_r)
            .with_device_log(device_log);
        let thread = std::thread::Builder::new()
            .name(format!("lane-{}-card{}", spec.id, spec.device))
            .spawn(move || watch.run(&tx));
        if let Err(e) = thread {
            // The watcher (and the child it held) went with the closure: the process is killed;
            // nobody reaps it before the dispatcher exits.
            signal_group(pid, Signal::Kill);
            return Err(e);
        }
        Ok(Self {
            pid,
            chan: Some(chan),
        })
    }

    /// Sends an assignment. A lane that is gone is reported by its exit, not here.
    pub fn send(&mut self, msg: &ToLane) {
        let Some(chan) = &mut self.chan else { return };
        let line = match msg.to_line() {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(pid = self.pid, "cannot encode an assignment: {e}");
                return;
            }
        };
        if let Err(e) = chan.write_all(&line) {
            tracing::debug!(pid = self.pid, "cannot write to the lane (it is exiting): {e}");
        }
    }

    /// Shuts the channel's writing half: the lane reads end of file, finishes what it has,
    /// closes its pool and exits (its events still come).
    pub fn close(&mut self) {
        if let Some(chan) = self.chan.take() {
            let _ = chan.shutdown(Shutdown::Write);
        }
    }
}

/// A capture pipe: the read end ours and non-blocking, the write end the lane's fd 1 or 2
/// (blocking, as a program's stdout is). Both close-on-exec here; the child gets its write end as
/// fd 1 or 2.
fn capture_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = pipe_with(PipeFlags::CLOEXEC)?;
    ioctl_fionbio(&r, true)?;
    Ok((r, w))
}
