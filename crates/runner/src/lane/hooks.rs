//! Test-only hooks of a lane, so a test can kill it deterministically at each protocol point of
//! DESIGN section 5 (before a case starts, during a case, between a result and the next
//! assignment, while writing the sink), or make it misbehave.
//!
//! Inactive unless the lane was started with [`crate::protocol::TEST_HOOKS_FLAG`] (which the
//! dispatcher passes on only when it was given the flag itself): a stray variable in a production
//! environment never parks or ends a lane. With the flag:
//! - [`ENV_PAUSE`] (`POINT:DIR`): the first lane process to reach `POINT` creates `DIR/fired`
//!   exclusively (so a replacement lane never pauses again), writes `PID POINT CASE` to the FIFO
//!   `DIR/announce` (which the test reads) and then blocks forever, until the test kills it.
//! - [`ENV_EXIT`] (`DEVICE:COUNT:DIR`): a lane on card `DEVICE` exits with status 0 before its
//!   first case, with its assignment unfinished, up to `COUNT` lane processes in all (each takes
//!   a slot `DIR/exited.N` exclusively).
//!
//! This file never changes what a lane does otherwise.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use platform_common::DeviceId;

/// `POINT:DIR`: pause at `POINT` (see [`Point`]), announcing through `DIR/announce`.
pub const ENV_PAUSE: &str = "ONBOARD_TEST_LANE_PAUSE";

/// `DEVICE:COUNT:DIR`: lanes on card `DEVICE` exit 0 before their first case, `COUNT` times.
pub const ENV_EXIT: &str = "ONBOARD_TEST_LANE_EXIT";

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

/// The hook configuration of this lane.
#[derive(Debug, Default)]
pub struct Hooks {
    pause: Option<(String, PathBuf)>,
    exit: Option<(u32, PathBuf)>,
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
        Self { pause, exit }
    }

    /// Pauses forever at `point` if so configured and no lane paused before; before a case,
    /// exits 0 if so configured and a slot is left.
    pub fn reach(&self, point: Point, case: &str) {
        if point == Point::BeforeCase {
            self.maybe_exit();
        }
        let Some((want, dir)) = &self.pause else { return };
        if want != point.name() {
            return;
        }
        if OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join("fired"))
            .is_err()
        {
            return;
        }
        if let Ok(mut fifo) = OpenOptions::new().write(true).open(dir.join("announce")) {
            let _ = writeln!(fifo, "{} {} {case}", std::process::id(), point.name());
        }
        loop {
            std::thread::park();
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
