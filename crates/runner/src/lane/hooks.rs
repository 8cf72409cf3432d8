//! Test-only pause points of a lane, so a test can kill it deterministically at each protocol point
//! of DESIGN section 5 (before a case starts, during a case, between a result and the next
//! assignment, while writing the sink).
//!
//! Inactive unless [`ENV_PAUSE`] is set (`POINT:DIR`). The first lane process to reach `POINT`
//! creates `DIR/fired` exclusively (so a replacement lane never pauses again), writes
//! `PID POINT CASE` to the FIFO `DIR/announce` (which the test reads) and then blocks forever,
//! until the test kills it. This file never changes what a lane does otherwise.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

/// `POINT:DIR`: pause at `POINT` (see [`Point`]), announcing through `DIR/announce`.
pub const ENV_PAUSE: &str = "ONBOARD_TEST_LANE_PAUSE";

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

/// The pause configuration of this lane.
#[derive(Debug, Default)]
pub struct Hooks {
    at: Option<(String, PathBuf)>,
}

impl Hooks {
    /// Reads [`ENV_PAUSE`].
    pub fn from_env() -> Self {
        let at = std::env::var(ENV_PAUSE)
            .ok()
            .and_then(|v| v.split_once(':').map(|(p, d)| (p.to_owned(), PathBuf::from(d))));
        Self { at }
    }

    /// Pauses forever at `point` if so configured and no lane paused before.
    pub fn reach(&self, point: Point, case: &str) {
        let Some((want, dir)) = &self.at else { return };
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
}
