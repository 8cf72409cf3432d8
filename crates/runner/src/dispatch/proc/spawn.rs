//! Starting lanes for the whole run: always from the binary the run started with, and with a few
//! tries before a failed start costs a card.
//!
//! - The binary: the dispatcher opens `/proc/self/exe` once (it names the running image, whatever
//!   has since been written at its path) and execs every lane through that descriptor
//!   (`/proc/self/fd/N`), so a rebuild of the suite binary mid-run neither changes nor breaks the
//!   lanes started after it. Where `/proc` is missing, lanes start from the path, with a warning.
//! - Tries: a transient failure (`EAGAIN` and the like, [`super::policy::spawn`]) is tried again
//!   after a short blocking backoff, up to 5 tries in about 0.75 s. The backoff blocks the event
//!   loop: spawns are rare, a transient failure rarer, and 0.75 s is far below any deadline the loop
//!   keeps (the other lanes' output and exits wait in their watchers meanwhile), so the loop needs
//!   no state for a spawn in progress.
//! - Test hook: with `--test-hooks`, [`ENV_SPAWN_EAGAIN`]`=N` fails the run's first N spawn tries
//!   with `EAGAIN` before any process is made, so tests see the retries without starving the host.
//!
//! This file owns those two rules. It never chooses the card or the kind of lane (the state
//! machine does).

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc::Sender;

use rustix::io::Errno;

use super::lane_event::LaneEvent;
use super::lane_proc::{LaneCommand, LaneProc, LaneSpec};
use crate::dispatch::policy;

/// Test-only (`--test-hooks`): the number of spawn tries that fail with `EAGAIN`.
pub const ENV_SPAWN_EAGAIN: &str = "ONBOARD_TEST_SPAWN_EAGAIN";

/// A spawn that failed every try.
#[derive(Debug)]
pub struct SpawnFailed {
    /// The last try's error.
    pub error: io::Error,
    /// Tries made.
    pub tries: u32,
}

/// Starts the run's lanes (see the module docs).
#[derive(Debug)]
pub struct Spawner {
    command: LaneCommand,
    /// The running binary, opened once.
    exe: Option<OwnedFd>,
    /// Tries still to fail (the test hook).
    inject_eagain: u32,
}

impl Spawner {
    /// A spawner of `command`'s lanes from the running binary.
    pub fn new(command: LaneCommand) -> Self {
        let exe = match File::open("/proc/self/exe") {
            Ok(f) => Some(OwnedFd::from(f)),
            Err(e) => {
                tracing::warn!(
                    exe = %command.exe.display(),
                    "cannot open the running binary ({e}); lanes start from its path, so a \
                     rebuild during the run changes them"
                );
                None
            }
        };
        let inject_eagain = if command.test_hooks() {
            std::env::var(ENV_SPAWN_EAGAIN)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        } else {
            0
        };
        Self {
            command,
            exe,
            inject_eagain,
        }
    }

    /// Starts the lane `spec`, trying again after a transient failure.
    pub(super) fn spawn(
        &mut self,
        spec: &LaneSpec<'_>,
        tx: &Sender<LaneEvent>,
    ) -> Result<LaneProc, SpawnFailed> {
        let mut tries = 0;
        loop {
            tries += 1;
            let error = match self.try_once(spec, tx) {
                Ok(p) => return Ok(p),
                Err(e) => e,
            };
            match policy::spawn_retry_after(tries, &error) {
                Some(delay) => {
                    tracing::warn!(
                        device = spec.device,
                        tries,
                        "cannot start a lane ({error}); trying again in {} ms",
                        delay.as_millis()
                    );
                    std::thread::sleep(delay);
                }
                None => return Err(SpawnFailed { error, tries }),
            }
        }
    }

    fn try_once(&mut self, spec: &LaneSpec<'_>, tx: &Sender<LaneEvent>) -> io::Result<LaneProc> {
        if self.inject_eagain > 0 {
            self.inject_eagain -= 1;
            return Err(io::Error::from_raw_os_error(Errno::AGAIN.raw_os_error()));
        }
        LaneProc::spawn(
            &self.command,
            self.exe.as_ref().map(AsFd::as_fd),
            spec,
            tx.clone(),
        )
    }
}
