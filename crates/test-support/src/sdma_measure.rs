//! The SDMA measurements (issue 22), one row each, against fresh simulated processes of a
//! [`SimBench`] (in process, or through `libsim_acl.so` with
//! [`crate::containment::through_acl`]), returned as data without timings: the shared tests
//! (`suites::sdma_tables`) assert on them, `cargo xtask sim-probe` prints them. The caller starts
//! the run with the row's plan first. Nothing here asserts or panics.
//!
//! What each row reproduces is upstream's measurement (hw-native-sys/simpler
//! `src/a2a3/platform/onboard/host/device_runner.cpp`, `create_run_stream` and `finalize`;
//! #1124, #1664, #1896; pypto-lib #1240), cited in `platform_common::sdma`.

use std::sync::{mpsc, Arc};

use platform_common::driver::{DeviceId, Driver, SdmaOrigin, StreamFailureMode};
use platform_common::error::{Code, DriverError};
use platform_common::health::HealthSubscriber;
use platform_common::runner_base::{probe_card, FinalizeError, FinalizeReport, InitError, RunError};
use platform_common::sdma::SDMA_PROBE_BYTES;
use platform_common::sim::card_state;

use crate::bench::{SimBench, TestkitError};
use crate::containment::{untimed, EventView};

/// How long the mode row's sync waits (a stream that continues on failure stalls into it).
const MODE_SYNC_MS: u32 = 100;

/// One SDMA fault on a stream of `mode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeRow {
    /// The stream sync after the faulting copy.
    pub sync: Result<(), DriverError>,
    /// The context's sticky error afterwards.
    pub sticky: Option<Code>,
    /// Whether the card file says the host observed the fault (`None`: no wedge).
    pub observed: Option<bool>,
}

/// In a fresh process: a stream in `mode`, one case SDMA copy (the plan faults it), its sync.
pub fn fault_by_stream_mode(
    bench: &SimBench,
    card: DeviceId,
    mode: StreamFailureMode,
) -> Result<ModeRow, TestkitError> {
    let p = bench.try_process()?;
    let sync = copy_once(p.as_ref(), card, mode, SdmaOrigin::Case, MODE_SYNC_MS);
    Ok(ModeRow {
        sync,
        sticky: p.sticky_error(card),
        observed: card_state(&bench.sim, card)?.sdma_wedge.map(|w| w.observed),
    })
}

/// Set device, a stream in `mode`, two buffers, one copy of `origin`, the stream's sync.
fn copy_once(
    d: &dyn Driver,
    card: DeviceId,
    mode: StreamFailureMode,
    origin: SdmaOrigin,
    sync_ms: u32,
) -> Result<(), DriverError> {
    d.set_device(card)?;
    let s = d.create_stream()?;
    d.set_stream_failure_mode(s, mode)?;
    let (a, b) = (d.malloc(SDMA_PROBE_BYTES)?, d.malloc(SDMA_PROBE_BYTES)?);
    d.sdma_copy(s, b, a, SDMA_PROBE_BYTES, origin)?;
    d.synchronize_stream_with_timeout(s, sync_ms)
}

/// A force reset made at once after an SDMA fault (no handoff wait).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlyResetRow {
    /// The faulting copy's sync (stop-on-failure: 507015).
    pub fault: Result<(), DriverError>,
    /// The first force reset's return (it blocks, then returns 0).
    pub first_reset: Result<(), DriverError>,
    /// The post-reset probe with SDMA after it.
    pub probe: Result<(), DriverError>,
    /// A second attempt's return (it blocks again).
    pub second_reset: Result<(), DriverError>,
    /// `aclFinalize` after the unconfirmed resets (it blocks the same way).
    pub finalize: Result<(), DriverError>,
    /// Calls that blocked for the remote-event timeout, by the card file.
    pub remote_event_waits: u64,
}

/// In one process: the fault, a force reset, the probe, a second reset, `aclFinalize`.
pub fn reset_without_the_handoff(bench: &SimBench, card: DeviceId) -> Result<EarlyResetRow, TestkitError> {
    let p = bench.try_process()?;
    let lease = bench.lease(card)?;
    let t = bench.sim.timeouts;
    let fault = copy_once(
        p.as_ref(),
        card,
        StreamFailureMode::StopOnFailure,
        SdmaOrigin::Case,
        t.stream_sync_ms(),
    );
    let first_reset = p.reset_device_force(&lease);
    let probe = probe_card(p.as_ref(), card, None, &t, true);
    let second_reset = p.reset_device_force(&lease);
    let finalize = p.finalize();
    Ok(EarlyResetRow {
        fault,
        first_reset,
        probe,
        second_reset,
        finalize,
        remote_event_waits: card_state(&bench.sim, card)?.counters.remote_event_waits,
    })
}

/// An SDMA runner's fault and its finalize, which waits the handoff first.
#[derive(Debug, Clone, PartialEq)]
pub struct HandoffRow {
    /// The case's SDMA copy.
    pub copy: Result<(), RunError>,
    /// Finalize with the lease, every attempt's duration zeroed.
    pub finalize: Result<FinalizeReport, FinalizeError>,
    /// The runner's health events.
    pub events: Vec<EventView>,
    /// The handoff wait the event recorded, in ms.
    pub wait_ms: Option<u64>,
    /// Calls that blocked for the remote-event timeout, by the card file.
    pub remote_event_waits: u64,
    /// Whether the card's SDMA engine is still wedged afterwards.
    pub wedged_after: bool,
}

/// A runner with the SDMA option, one case SDMA copy (the plan faults it), finalize.
pub fn sdma_runner_fault_then_finalize(bench: &SimBench, card: DeviceId) -> Result<HandoffRow, TestkitError> {
    let p = bench.try_process()?;
    let lease = bench.lease(card)?;
    let (tx, rx) = mpsc::channel();
    let mut cfg = bench.config(card, Some(HealthSubscriber::channel(tx)))?;
    cfg.sdma = true;
    let mut runner = bench.runner(&p, cfg)?;
    let copy = match (
        runner.alloc_buffer(SDMA_PROBE_BYTES),
        runner.alloc_buffer(SDMA_PROBE_BYTES),
    ) {
        (Ok(a), Ok(b)) => runner.sdma_copy(b, a, SDMA_PROBE_BYTES),
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    let finalize = untimed(&runner.finalize(&lease));
    let events: Vec<_> = rx.try_iter().collect();
    let wait_ms = events.iter().find_map(|e| match e.kind {
        platform_common::health::HealthEventKind::SdmaHandoffWait { wait_ms, .. } => Some(wait_ms),
        _ => None,
    });
    let state = card_state(&bench.sim, card)?;
    Ok(HandoffRow {
        copy,
        finalize,
        events: events.iter().map(|e| (e.kind_name(), e.call, e.code)).collect(),
        wait_ms,
        remote_event_waits: state.counters.remote_event_waits,
        wedged_after: state.sdma_wedge.is_some(),
    })
}

/// The two probes of a card whose SDMA engine another process wedged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WedgedProbeRow {
    /// The fault, in the first process.
    pub fault: Result<(), DriverError>,
    /// A compute-only probe in a fresh process.
    pub compute_only: Result<(), DriverError>,
    /// The probe with SDMA in another fresh process.
    pub with_sdma: Result<(), DriverError>,
}

/// One process faults the engine; two fresh ones probe the card, without and with SDMA.
pub fn probes_on_a_wedged_engine(bench: &SimBench, card: DeviceId) -> Result<WedgedProbeRow, TestkitError> {
    let t = bench.sim.timeouts;
    let first = bench.try_process()?;
    let fault = copy_once(
        first.as_ref(),
        card,
        StreamFailureMode::StopOnFailure,
        SdmaOrigin::Case,
        t.stream_sync_ms(),
    );
    let compute_only = probe_card(bench.try_process()?.as_ref(), card, None, &t, false);
    let with_sdma = probe_card(bench.try_process()?.as_ref(), card, None, &t, true);
    Ok(WedgedProbeRow {
        fault,
        compute_only,
        with_sdma,
    })
}

/// Inits after an SDMA warm-up fault.
#[derive(Debug, Clone, PartialEq)]
pub struct WarmupRow {
    /// The SDMA runner's init, whose warm-up the plan faults.
    pub init: Result<(), InitError>,
    /// An SDMA runner's init in a fresh process (a fresh lane) on the wedged card.
    pub fresh_sdma_init: Result<(), InitError>,
    /// A runner without SDMA in a fresh process: compute is untouched.
    pub fresh_compute_init: Result<(), InitError>,
}

/// An SDMA runner's init (the plan faults its warm-up), then a fresh lane's, with and without
/// SDMA.
pub fn warmup_fault_at_init(bench: &SimBench, card: DeviceId) -> Result<WarmupRow, TestkitError> {
    let init = |sdma: bool| -> Result<Result<(), InitError>, TestkitError> {
        let p = bench.try_process()?;
        let mut cfg = bench.config(card, None)?;
        cfg.sdma = sdma;
        let driver = Arc::clone(&p).driver();
        Ok(match (bench.entry.init_runner)(driver, cfg) {
            Ok(runner) => {
                let _ = runner.finalize(&bench.lease(card)?);
                Ok(())
            }
            Err(e) => Err(e),
        })
    };
    Ok(WarmupRow {
        init: init(true)?,
        fresh_sdma_init: init(true)?,
        fresh_compute_init: init(false)?,
    })
}
