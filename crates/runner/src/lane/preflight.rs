//! A preflight lane (started with [`crate::protocol::PREFLIGHT_FLAG`]): the check a card whose
//! health record says quarantined gets before any work (issue 9, item 4).
//!
//! It builds a chip worker on its card (an init, as the first case's would be: with SDMA, warm-up
//! included, when the run's selected cases use SDMA), closes it, and
//! runs the post-reset probe (a stream created and destroyed, 64 bytes allocated and freed, on sim
//! the `noop` kernel with `LaunchOrigin::Internal`, so no fault plan's launch count moves; and
//! when the run's selected cases use SDMA, the SDMA probe, a 64-byte SDMA copy: a compute-only
//! probe passes a wedged SDMA engine, hw-native-sys/pypto-lib #1240), all
//! between `init_started` and `init_done` (the dispatcher bounds it by `--init-timeout`), and
//! exits 0. Any failure is sent as `init_failed` (a health event of the card, never an attempt of
//! a case, naming the capability it failed in) and the lane exits [`EXIT_NEEDS_FRESH_PROCESS`];
//! the dispatcher decides what it means.
//!
//! This file owns the preflight's steps. It never reads an assignment and never runs a case.

use std::os::unix::net::UnixStream;

use platform_common::runner_base::{probe_capabilities, InitError};
use platform_common::{DeviceLease, FailureClass};

use super::input::EXIT_ORPHANED;
use super::stamp;
use crate::case::Runtime;
use crate::protocol::{FromLane, LaneOut, EXIT_NEEDS_FRESH_PROCESS};
use crate::report::model::{ErrorReport, WorkerAction};
use crate::worker::{ChipWorker, WorkerEnv};

/// The runtime name a preflight's worker is built and reported under.
pub const PREFLIGHT_RUNTIME: &str = "preflight";

/// Runs the preflight of `env.device` to the lane's exit code; with `sdma` (the run's selected
/// cases use SDMA) its probe is the SDMA probe too.
pub fn run(mut env: WorkerEnv, lease: &DeviceLease, chan: UnixStream, sdma: bool) -> i32 {
    let (events, health) = stamp::subscriber();
    env.events = Some(events);
    let mut out = LaneOut::new(chan);
    let mut send = |msg: &FromLane| {
        if let Err(e) = out.send(msg) {
            tracing::warn!("cannot write to the dispatcher ({e}): it is gone; exiting");
            std::process::exit(EXIT_ORPHANED);
        }
    };
    let device = env.device;
    // With SDMA the worker provisions it at init, as the run's SDMA workers will (its warm-up
    // included), and the probe runs the SDMA probe too.
    let runtime = if sdma {
        Runtime::sdma(PREFLIGHT_RUNTIME)
    } else {
        Runtime::new(PREFLIGHT_RUNTIME)
    };
    send(&FromLane::Ready {
        pid: std::process::id(),
    });
    send(&FromLane::InitStarted {
        device,
        runtime: runtime.name.clone(),
    });
    let checked = check(&env, &runtime, lease, sdma, &mut send);
    while let Ok((mono_ns, event)) = health.try_recv() {
        send(&FromLane::Health { event, mono_ns });
    }
    match checked {
        Ok(()) => {
            send(&FromLane::InitDone { device });
            tracing::debug!(device, "preflight passed");
            0
        }
        Err(error) => {
            send(&FromLane::InitFailed {
                device,
                runtime: runtime.name,
                error,
            });
            EXIT_NEEDS_FRESH_PROCESS
        }
    }
}

/// Init, close, probe: the first failure, as the card's health event reports it.
fn check(
    env: &WorkerEnv,
    runtime: &Runtime,
    lease: &DeviceLease,
    sdma: bool,
    send: &mut impl FnMut(&FromLane),
) -> Result<(), ErrorReport> {
    let worker = ChipWorker::init(env, runtime).map_err(|e| init_error(&e))?;
    send(&FromLane::Worker {
        device: env.device,
        runtime: runtime.name.clone(),
        action: WorkerAction::Built,
    });
    let closed = worker.close(lease);
    send(&FromLane::Worker {
        device: env.device,
        runtime: runtime.name.clone(),
        action: WorkerAction::Closed,
    });
    closed.map_err(|e| {
        ErrorReport::new(
            FailureClass::DeviceRuntime,
            format!("preflight: closing the worker failed: {e}"),
        )
    })?;
    probe_capabilities(
        env.driver.as_ref(),
        env.device,
        env.probe_kernel.as_ref(),
        &env.timeouts,
        sdma,
    )
    .map_err(|f| ErrorReport::from_driver(&f.error, format!("preflight {f}")).with_capability(f.capability))
}

fn init_error(e: &InitError) -> ErrorReport {
    match e.driver_error() {
        Some(d) => ErrorReport::from_driver(&d, e.to_string()),
        None => ErrorReport::new(e.class(), e.to_string()),
    }
    .with_capability(e.capability())
}
