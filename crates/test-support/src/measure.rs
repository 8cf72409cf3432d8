//! The seed's measurements, one iteration of one row each ("hang then noop on one context",
//! "soft reset then re-init", "force-reset recovery", ...), against a fresh simulated process of a
//! [`SimBench`], returned as data: the shared tests iterate them as the seed did and assert on the
//! tallies with each arch's expectations. Nothing here asserts or panics.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use platform_common::driver::{DeviceId, Driver, DriverCall};
use platform_common::error::{Code, DriverError};
use platform_common::health::{HealthEvent, HealthSubscriber};
use platform_common::kernel::KernelBlob;
use platform_common::runner_base::{
    FinalizeError, FinalizeReport, InitError, RawWorkerOpener, RunError, RunOutput, RunRequest,
};
use platform_common::timeouts::Timeouts;

use crate::bench::{
    compute_case, hang_request, noop_request, run_case, CaseOutcome, SimBench, TestkitError, WORKLOAD_KERNELS,
};

/// One iteration of the seed's within-process probe without containment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawProbe {
    /// The hang run: the op-timeout as its stream sync reported it.
    pub hang: Result<(), DriverError>,
    /// The noop run on the same context afterwards: the first call that failed.
    pub noop: Result<(), DriverError>,
}

impl RawProbe {
    /// The seed's "cascade": the hang poisoned the context and the noop failed on it.
    pub fn cascaded(&self) -> bool {
        self.hang.is_err() && self.noop.is_err()
    }
}

/// The seed's within-process probe on the raw driver: in a fresh process, hang then noop on one
/// context.
pub fn raw_hang_then_noop(bench: &SimBench, card: DeviceId) -> Result<RawProbe, TestkitError> {
    let process = bench.try_process()?.driver();
    let hang = bench.kernel("hang")?;
    let noop = bench.kernel("noop")?;
    let open = bench.entry.open_raw_worker;
    raw_probe(process, open, card, &bench.sim.timeouts, &hang, &noop).map_err(|error| {
        TestkitError::Init(InitError::Driver {
            device: card,
            arch: bench.arch(),
            error,
            logged: Vec::new(),
            capability: platform_common::health::Capability::Compute,
        })
    })
}

/// The within-process probe on any driver (a simulated process or a real card): the naive
/// worker of the arch (`open`, its arch crate's `ENTRY.open_raw_worker`) opens `card` (an error
/// here is returned), then runs `hang` and `noop`, one block each, on the same context. Nothing is
/// torn down or reset afterwards.
pub fn raw_probe(
    driver: Arc<dyn Driver>,
    open: RawWorkerOpener,
    card: DeviceId,
    timeouts: &Timeouts,
    hang: &KernelBlob,
    noop: &KernelBlob,
) -> Result<RawProbe, DriverError> {
    let mut worker = open(driver, card, timeouts, &mut Vec::new())?;
    Ok(RawProbe {
        hang: worker.run(hang, 1),
        noop: worker.run(noop, 1),
    })
}

/// One iteration of the within-process probe through the runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardedProbe {
    /// The hang run.
    pub hang: Result<RunOutput, RunError>,
    /// The noop run afterwards on the same runner.
    pub noop: Result<RunOutput, RunError>,
    /// Driver calls the noop run made (0 when refused at the guard).
    pub noop_driver_calls: u64,
    /// Whether the runner was marked unusable after the hang.
    pub unusable: bool,
}

/// The within-process probe through the runner: in a fresh process, hang then noop on one runner.
/// The runner is then dropped without finalize (the process ends).
pub fn guarded_hang_then_noop(bench: &SimBench, card: DeviceId) -> Result<GuardedProbe, TestkitError> {
    let process = bench.try_process()?;
    let mut runner = bench.runner(&process, bench.config(card, None)?)?;
    let hang = runner.run(&hang_request());
    let unusable = runner.is_unusable();
    let before = process.stats().calls;
    let noop = runner.run(&noop_request());
    let noop_driver_calls = process.stats().calls - before;
    Ok(GuardedProbe {
        hang,
        noop,
        noop_driver_calls,
        unusable,
    })
}

/// In a fresh process: a runner, the compute case once, finalize.
pub fn compute_in_fresh_process(
    bench: &SimBench,
    card: DeviceId,
    seed: u64,
) -> Result<CaseOutcome, TestkitError> {
    let process = bench.try_process()?;
    let lease = bench.lease(card)?;
    let mut runner = bench.runner(&process, bench.config(card, None)?)?;
    let outcome = run_case(runner.as_mut(), &compute_case(seed));
    let _ = runner.finalize(&lease);
    Ok(outcome)
}

/// One iteration of the seed's soft-reset measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoftResetProbe {
    /// The hang run that poisoned the context.
    pub hang: Result<RunOutput, RunError>,
    /// The soft reset (`aclrtResetDevice`), as the old finalize did it.
    pub soft_reset: Result<(), DriverError>,
    /// A new runner's init on the same card in the same process afterwards.
    pub reinit: Result<(), InitError>,
}

/// The seed's soft-reset path: hang, then the old `finalize` (handles dropped, soft device reset,
/// no force reset), then a new runner on the same card in the same process.
pub fn soft_reset_then_reinit(bench: &SimBench, card: DeviceId) -> Result<SoftResetProbe, TestkitError> {
    let process = bench.try_process()?;
    let mut runner = bench.runner(&process, bench.config(card, None)?)?;
    let hang = runner.run(&hang_request());
    // Dropping an unusable runner abandons its handles without a driver call.
    drop(runner);
    let soft_reset = process.reset_device(card);
    let driver = Arc::clone(&process).driver();
    let reinit = (bench.entry.init_runner)(driver, bench.config(card, None)?).map(|_| ());
    Ok(SoftResetProbe {
        hang,
        soft_reset,
        reinit,
    })
}

/// What poisons the card in a recovery measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The `hang` kernel (an op-timeout).
    Hang,
    /// The compute case (poisons only when the run's fault plan says so, e.g. `launch_fail@1`).
    Compute,
}

/// Options of a recovery measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecoveryOptions {
    /// Build the runner with the SDMA option (one force-reset attempt).
    pub sdma: bool,
    /// Build the poisoned runner without a probe kernel: its post-reset probe checks streams and
    /// memory only (as on a real card without kernels), so finalize launches and syncs nothing.
    pub streams_only_probe: bool,
}

/// One iteration of the force-reset recovery.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryProbe {
    /// The trigger's run.
    pub trigger: Result<RunOutput, RunError>,
    /// Whether the runner was marked unusable after the trigger.
    pub unusable_after_trigger: bool,
    /// A noop tried between trigger and finalize (refused at the guard when the runner is unusable).
    pub refused_noop: Result<RunOutput, RunError>,
    /// Finalize with the card's lease.
    pub finalize: Result<FinalizeReport, FinalizeError>,
    /// How long finalize took.
    pub finalize_took: Duration,
    /// Syncs of an error-state stream during finalize (the simulator counts them).
    pub finalize_error_state_syncs: u64,
    /// Every `aclrtSynchronizeStreamWithTimeout` finalize made, whatever the stream's state (the
    /// simulator's per-call count; only the post-reset probe's kernel run, on its own fresh
    /// streams, makes any). Zero when read through `libsim_acl.so`, whose stats carry no
    /// per-call counts.
    pub finalize_stream_syncs: u64,
    /// The sticky error this process's context on the card still has after finalize.
    pub sticky_after_finalize: Option<Code>,
    /// A new runner on the same card in the same process, after finalize.
    pub rebuilt: Option<Result<(), InitError>>,
    /// The noop on the new runner.
    pub noop_after: Option<Result<RunOutput, RunError>>,
    /// The compute case on the new runner.
    pub compute_after: Option<CaseOutcome>,
    /// Every health event of the poisoned runner, in order.
    pub events: Vec<HealthEvent>,
}

impl RecoveryProbe {
    /// Whether the card recovered in place: finalize confirmed a reset and the new runner ran the
    /// noop and the compute case.
    pub fn recovered(&self) -> bool {
        self.finalize.as_ref().is_ok_and(|r| r.reset.is_some())
            && matches!(self.rebuilt, Some(Ok(())))
            && matches!(self.noop_after, Some(Ok(_)))
            && self.compute_after.as_ref().is_some_and(CaseOutcome::passed)
    }
}

/// Force-reset recovery in a fresh process: trigger, a refused noop, finalize with the lease, then
/// a new runner on the same card in the same process that, when its init succeeds, runs the noop
/// and the compute case.
/// The caller starts the run (and its fault plan) first.
pub fn trigger_then_recover(
    bench: &SimBench,
    card: DeviceId,
    trigger: Trigger,
    opts: RecoveryOptions,
) -> Result<RecoveryProbe, TestkitError> {
    let process = bench.try_process()?;
    let lease = bench.lease(card)?;
    let (tx, rx) = mpsc::channel();
    let mut cfg = bench.config(card, Some(HealthSubscriber::channel(tx)))?;
    cfg.sdma = opts.sdma;
    if opts.streams_only_probe {
        cfg.probe_kernel = None;
    }
    let mut runner = bench.runner(&process, cfg)?;
    let trigger = match trigger {
        Trigger::Hang => runner.run(&hang_request()),
        Trigger::Compute => runner.run(&RunRequest::from(&compute_case(7))),
    };
    let unusable_after_trigger = runner.is_unusable();
    let refused_noop = runner.run(&noop_request());
    let before = process.stats();
    let start = Instant::now();
    let finalize = runner.finalize(&lease);
    let finalize_took = start.elapsed();
    let after = process.stats();
    let finalize_error_state_syncs = after.error_state_syncs - before.error_state_syncs;
    let sync = DriverCall::SynchronizeStreamWithTimeout;
    let finalize_stream_syncs = after.calls_of(sync) - before.calls_of(sync);
    let events: Vec<HealthEvent> = rx.try_iter().collect();
    let mut probe = RecoveryProbe {
        trigger,
        unusable_after_trigger,
        refused_noop,
        finalize,
        finalize_took,
        finalize_error_state_syncs,
        finalize_stream_syncs,
        sticky_after_finalize: process.sticky_error(card),
        rebuilt: None,
        noop_after: None,
        compute_after: None,
        events,
    };
    let driver = Arc::clone(&process).driver();
    match (bench.entry.init_runner)(driver, bench.config(card, None)?) {
        Err(e) => probe.rebuilt = Some(Err(e)),
        Ok(mut fresh) => {
            probe.rebuilt = Some(Ok(()));
            let mut refused = None;
            for name in WORKLOAD_KERNELS {
                if let Err(e) = fresh.register_kernel(&bench.kernel(name)?) {
                    refused = Some(e);
                    break;
                }
            }
            match refused {
                None => {
                    probe.noop_after = Some(fresh.run(&noop_request()));
                    probe.compute_after = Some(run_case(fresh.as_mut(), &compute_case(11)));
                }
                Some(e) => probe.noop_after = Some(Err(e)),
            }
            let _ = fresh.finalize(&lease);
        }
    }
    Ok(probe)
}
