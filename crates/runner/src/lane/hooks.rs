//! Test-only hooks of a lane, so a test can kill it deterministically at each protocol point of
//! DESIGN section 5 (before a case starts, during a case, between a result and the next
//! assignment, while writing the sink), or make it misbehave.
//!
//! Inactive unless the lane was started with [`crate::protocol::TEST_HOOKS_FLAG`] (which the
//! dispatcher passes on only when it was given the flag itself): a stray variable in a production
//! environment never parks or ends a lane. With the flag:
//! - [`ENV_PAUSE`] (`POINT:DIR`): the first lane process to reach `POINT` creates `DIR/fired`
//!   exclusively (so a replacement lane never pauses again), writes `PID POINT CASE` to the FIFO
//!   `DIR/announce` (which the test reads) and then blocks forever, until the test kills it. With
//!   [`ENV_PAUSE_TIMES`] (`N`), the first N lane processes to reach it pause so, one after the
//!   other (slots `DIR/fired`, `DIR/fired.2`, ...).
//! - [`ENV_EXIT`] (`DEVICE:COUNT:DIR`): a lane on card `DEVICE` exits with status 0 before its
//!   first case, with its assignment unfinished, up to `COUNT` lane processes in all (each takes
//!   a slot `DIR/exited.N` exclusively).
//! - [`ENV_NOISE`] (`TAG`): every lane writes `TAG:out:before:CASE` to fd 1 and
//!   `TAG:err:before:CASE` to fd 2 (no newline) before each case, and the same with `during` once
//!   the case has started, as a kernel's `printf` or a chatty vendor library would.
//! - [`ENV_FLOOD`] (`DIR`): the first lane to start a case (it creates `DIR/flood.fired`) writes
//!   an endless line on its protocol channel.
//! - [`ENV_ORPHAN`] (`group:DIR` or `outside:DIR`): the first lane to start a case (it creates
//!   `DIR/orphan.fired`) starts a child that holds the lane's stdout, stderr and channel and
//!   sleeps, in the lane's process group (`group`) or in a process group of its own
//!   (`outside`), writes the child's pid to `DIR/orphan.pid`, and exits 1 (an unclean death with
//!   the case running).
//! - [`ENV_CLOCK_STEP`] (`MS`, signed): the lane's wall clock seems `MS` off: every health event's
//!   `unix_ms` is shifted by it as the lane sends it (a clock step, as NTP makes one).
//!
//! This file never changes what a lane does otherwise.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use command_fds::{CommandFdExt, FdMapping};
use platform_common::DeviceId;

/// `POINT:DIR`: pause at `POINT` (see [`Point`]), announcing through `DIR/announce`.
pub const ENV_PAUSE: &str = "ONBOARD_TEST_LANE_PAUSE";

/// `N`: up to `N` lane processes pause at [`ENV_PAUSE`]'s point (default 1).
pub const ENV_PAUSE_TIMES: &str = "ONBOARD_TEST_LANE_PAUSE_TIMES";

/// `DEVICE:COUNT:DIR`: lanes on card `DEVICE` exit 0 before their first case, `COUNT` times.
pub const ENV_EXIT: &str = "ONBOARD_TEST_LANE_EXIT";

/// `TAG`: lanes write tagged junk without a newline to fd 1 and fd 2 before and during cases.
pub const ENV_NOISE: &str = "ONBOARD_TEST_LANE_NOISE";

/// `DIR`: the first lane to start a case writes an endless line on its protocol channel.
pub const ENV_FLOOD: &str = "ONBOARD_TEST_LANE_FLOOD";

/// `group:DIR` or `outside:DIR`: the first lane to start a case leaves a sleeping child holding
/// its descriptors and exits 1.
pub const ENV_ORPHAN: &str = "ONBOARD_TEST_LANE_ORPHAN";

/// `MS` (signed): shift every health event's wall-clock stamp by `MS`.
pub const ENV_CLOCK_STEP: &str = "ONBOARD_TEST_LANE_CLOCK_STEP";

/// A protocol point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// An assignment was read; the case has not started.
    BeforeCase,
    /// The case's `started` line was sent; it has not run.
    DuringCase,
    /// A batch's last result was sent; the next assignment has not been read.
    AfterResult,
    /// The first poison-sink record was written; the others have not.
    SinkWrite,
}

impl Point {
    fn name(self) -> &'static str {
        match self {
            Point::BeforeCase => "before_case",
            Point::DuringCase => "during_case",
            Point::AfterResult => "after_result",
            Point::SinkWrite => "sink_write",
        }
    }
}

/// Where [`ENV_ORPHAN`]'s child lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OrphanGroup {
    /// In the lane's process group (the group kill ends it).
    Lane,
    /// In a group of its own (the group kill does not reach it).
    Own,
}

/// The hook configuration of this lane.
#[derive(Debug, Default)]
pub struct Hooks {
    pause: Option<(String, PathBuf)>,
    pause_times: u32,
    exit: Option<(u32, PathBuf)>,
    noise: Option<String>,
    flood: Option<PathBuf>,
    orphan: Option<(OrphanGroup, PathBuf)>,
    clock_step_ms: i64,
    /// The lane's channel (for the flood and the orphan).
    chan: Option<UnixStream>,
}

impl Hooks {
    /// No hooks (a production lane).
    pub fn none() -> Self {
        Self::default()
    }

    /// Reads [`ENV_PAUSE`] and [`ENV_EXIT`] (the latter only when it names `device`).
    pub fn from_env(device: DeviceId) -> Self {
        let pause = std::env::var(ENV_PAUSE)
            .ok()
            .and_then(|v| v.split_once(':').map(|(p, d)| (p.to_owned(), PathBuf::from(d))));
        let exit = std::env::var(ENV_EXIT).ok().and_then(|v| {
            let mut parts = v.splitn(3, ':');
            let dev: DeviceId = parts.next()?.parse().ok()?;
            let count: u32 = parts.next()?.parse().ok()?;
            let dir = PathBuf::from(parts.next()?);
            (dev == device).then_some((count, dir))
        });
        let orphan = std::env::var(ENV_ORPHAN).ok().and_then(|v| {
            let (group, dir) = v.split_once(':')?;
            let group = match group {
                "group" => OrphanGroup::Lane,
                "outside" => OrphanGroup::Own,
                _ => return None,
            };
            Some((group, PathBuf::from(dir)))
        });
        Self {
            pause,
            pause_times: std::env::var(ENV_PAUSE_TIMES)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1),
            exit,
            noise: std::env::var(ENV_NOISE).ok(),
            flood: std::env::var_os(ENV_FLOOD).map(PathBuf::from),
            orphan,
            clock_step_ms: std::env::var(ENV_CLOCK_STEP)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            chan: None,
        }
    }

    /// The same hooks with the lane's channel (a clone of it), for the flood and the orphan.
    pub fn with_channel(mut self, chan: &UnixStream) -> Self {
        if self.flood.is_some() || self.orphan.is_some() {
            self.chan = chan.try_clone().ok();
        }
        self
    }

    /// The wall-clock stamp `unix_ms` of a health event as this lane reports it (shifted by
    /// [`ENV_CLOCK_STEP`]).
    pub fn wall_clock(&self, unix_ms: u64) -> u64 {
        unix_ms.saturating_add_signed(self.clock_step_ms)
    }

    /// Pauses forever at `point` if so configured and no lane paused before; before a case,
    /// exits 0 if so configured and a slot is left; writes the noise, floods the channel or
    /// leaves an orphan where so configured.
    pub fn reach(&self, point: Point, case: &str) {
        match point {
            Point::BeforeCase => {
                self.maybe_exit();
                self.noise("before", case);
            }
            Point::DuringCase => {
                self.noise("during", case);
                self.maybe_flood();
                self.maybe_orphan();
            }
            Point::AfterResult | Point::SinkWrite => {}
        }
        let Some((want, dir)) = &self.pause else { return };
        if want != point.name() {
            return;
        }
        let slot = |n: u32| match n {
            1 => dir.join("fired"),
            n => dir.join(format!("fired.{n}")),
        };
        let took = (1..=self.pause_times).any(|n| {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(slot(n))
                .is_ok()
        });
        if !took {
            return;
        }
        if let Ok(mut fifo) = OpenOptions::new().write(true).open(dir.join("announce")) {
            let _ = writeln!(fifo, "{} {} {case}", std::process::id(), point.name());
        }
        loop {
            std::thread::park();
        }
    }

    fn noise(&self, when: &str, case: &str) {
        let Some(tag) = &self.noise else { return };
        // Through Rust's buffered stdout (flushed at the next mark) and unbuffered stderr.
        let _ = write!(std::io::stdout(), "{tag}:out:{when}:{case}");
        let _ = write!(std::io::stderr(), "{tag}:err:{when}:{case}");
    }

    fn maybe_flood(&self) {
        let (Some(dir), Some(chan)) = (&self.flood, &self.chan) else {
            return;
        };
        if !first_to(dir, "flood.fired") {
            return;
        }
        tracing::warn!("test hook {ENV_FLOOD}: writing an endless protocol line");
        let chunk = vec![b'x'; 64 * 1024];
        let mut chan = chan;
        loop {
            if chan.write_all(&chunk).is_err() {
                std::process::exit(1);
            }
        }
    }

    fn maybe_orphan(&self) {
        let (Some((group, dir)), Some(chan)) = (&self.orphan, &self.chan) else {
            return;
        };
        if !first_to(dir, "orphan.fired") {
            return;
        }
        let held = chan.try_clone().map(OwnedFd::from);
        let mut c = Command::new("sleep");
        c.arg("1000000").stdin(Stdio::null());
        if *group == OrphanGroup::Own {
            c.process_group(0);
        }
        let spawned = held.and_then(|fd| {
            c.fd_mappings(vec![FdMapping {
                parent_fd: fd,
                child_fd: 3,
            }])
            .map_err(std::io::Error::other)?;
            c.spawn()
        });
        match spawned {
            Ok(child) => {
                let _ = std::fs::write(dir.join("orphan.pid"), child.id().to_string());
                tracing::warn!(
                    "test hook {ENV_ORPHAN}: left pid {} behind; exiting 1",
                    child.id()
                );
                std::process::exit(1);
            }
            Err(e) => tracing::error!("test hook {ENV_ORPHAN}: cannot start the child: {e}"),
        }
    }

    fn maybe_exit(&self) {
        let Some((count, dir)) = &self.exit else { return };
        for n in 1..=*count {
            let slot = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(dir.join(format!("exited.{n}")));
            if slot.is_ok() {
                tracing::warn!("test hook {ENV_EXIT}: exiting 0 with the assignment unfinished");
                std::process::exit(0);
            }
        }
    }
}

/// Whether this lane is the first to get here: it creates `dir/name` exclusively.
fn first_to(dir: &Path, name: &str) -> bool {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(name))
        .is_ok()
}
