//! SIGINT and SIGTERM during a run (issue 8, item 4).
//!
//! The handlers are signal-hook's (async-signal-safe: they only wake a pipe; no work happens in
//! a handler). This file's thread turns the first signal into [`LaneEvent::Interrupted`] on the
//! event loop's channel; the state machine then stops handing out work, ends every lane's process group
//! (SIGTERM, grace, SIGKILL), skips every case without a verdict and lets the run write its
//! reports and exit 130 or 143. A second signal ends the process at once with the same status,
//! after removing the run's private sink directory and SIGKILLing every live lane's process group
//! (waiting, up to [`LAST_KILL_BOUND`], until each lane has exited): so the run's cards are free
//! when the dispatcher is gone, whatever its lanes were doing.
//!
//! This file owns the registration and its thread. It never touches a lane or a report.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

use super::lane_event::LaneEvent;
use super::live::LiveLanes;
use crate::report::model::Interruption;

/// How long a second signal waits for the SIGKILLed lanes to exit.
pub const LAST_KILL_BOUND: std::time::Duration = std::time::Duration::from_secs(2);

/// SIGINT and SIGTERM watched for one run; dropping it stops the watch.
#[derive(Debug)]
pub struct SignalWatch {
    handle: Handle,
    thread: Option<JoinHandle<()>>,
}

impl SignalWatch {
    /// Watches SIGINT and SIGTERM: the first is sent to `tx`; a second removes `sink_dir`, kills
    /// the `live` lanes and exits at once.
    pub fn start(tx: Sender<LaneEvent>, live: LiveLanes, sink_dir: Option<PathBuf>) -> std::io::Result<Self> {
        let mut signals = Signals::new([SIGINT, SIGTERM])?;
        let handle = signals.handle();
        let thread = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut seen = false;
                for sig in signals.forever() {
                    let Some(i) = Interruption::from_signal(sig) else {
                        continue;
                    };
                    if seen {
                        tracing::warn!("second {i}: exiting at once");
                        if let Some(dir) = &sink_dir {
                            let _ = std::fs::remove_dir_all(dir);
                        }
                        let left = live.kill_all_and_wait(LAST_KILL_BOUND);
                        if !left.is_empty() {
                            tracing::warn!(?left, "lanes still running after SIGKILL");
                        }
                        std::process::exit(i32::from(i.exit_code()));
                    }
                    seen = true;
                    tracing::warn!("{i}: ending the run (a second signal exits at once)");
                    let _ = tx.send(LaneEvent::Interrupted(i));
                }
            })?;
        Ok(Self {
            handle,
            thread: Some(thread),
        })
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
