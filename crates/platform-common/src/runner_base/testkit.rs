//! The seed's measurements on the simulated card, as reusable functions (feature `sim`).
//!
//! Each function runs one iteration of one row of the seed's tables ("hang then noop on one
//! context", "soft reset then re-init", "force-reset recovery", ...) against a fresh simulated
//! process and returns what it observed, as data: the arch crates' tests iterate them as the seed
//! did and assert on the tallies with their own arch's expectations, and a command can print them.
//! Nothing here asserts or panics; every setting (sim root, lock directory, timeouts) is passed in,
//! nothing is read from or written to the environment. [`helper_main`] is the body of the arch
//! crates' helper binaries, the "other process" of the cross-process rows.
//!
//! [`suites`] is the exception, by design: the arch crates' integration tests themselves, which
//! assert on these measurements with each arch's expectations (written once, instantiated per
//! arch crate by [`arch_runner_tests!`](crate::arch_runner_tests)).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::arch::Arch;
use crate::driver::{DeviceId, Driver, DriverCall};
use crate::error::Code;
use crate::error::DriverError;
use crate::health::{HealthEvent, HealthSubscriber};
use crate::kernel::{built_blob_dir, load_named, KernelBlob, KernelError};
use crate::lease::{DeviceLease, LeaseConfig, LeaseError};
use crate::reference::{noop_case, vector_add_case, CaseMismatch, KernelCase};
use crate::sim::{start_run, FaultPlan, FaultPlanError, SimConfig, SimDriver, SimError, SimStats};
use crate::timeouts::Timeouts;

use super::config::RunnerConfig;
use super::errors::{FinalizeError, InitError, RunError};
use super::finalize::FinalizeReport;
use super::raw_worker::RawWorker;
use super::request::{RunOutput, RunRequest};
use super::runner::DeviceRunner;

pub mod suites;

/// Builds an arch's runner as a trait object (`platform_a5::DeviceRunner::init_boxed`, ...).
pub type RunnerFactory = fn(Arc<dyn Driver>, RunnerConfig) -> Result<Box<dyn DeviceRunner>, InitError>;

/// The kernels a bench's runners register: the probe, the trigger, the compute case.
pub const WORKLOAD_KERNELS: [&str; 3] = ["noop", "hang", "vector_add"];

/// Short, correctly ordered timeouts so a hang costs ~60 ms, not 500 ms: scheduler 20 ms,
/// op-execute 60 ms, stream-sync 1600 ms. They hold under both profiles' rules (stream-sync >
/// scheduler + 1500 ms too), because a runner on the `acl` driver is held to the real-card rules
/// even when `libsim_acl.so` is behind it. No sim measurement waits a stream-sync out: a hang is
/// reaped at the op-execute timeout and its sync returns then.
pub fn fast_timeouts() -> Timeouts {
    Timeouts {
        scheduler: Duration::from_millis(20),
        op_execute: Duration::from_millis(60),
        stream_sync: Duration::from_millis(1600),
    }
}

/// A failure of the bench itself (not of the thing measured).
#[derive(Debug, thiserror::Error)]
pub enum TestkitError {
    /// The simulator's setup failed.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A malformed fault plan.
    #[error(transparent)]
    Plan(#[from] FaultPlanError),
    /// The card's lease could not be taken.
    #[error(transparent)]
    Lease(#[from] LeaseError),
    /// A kernel blob could not be loaded.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A runner the measurement needs could not be initialised.
    #[error(transparent)]
    Init(#[from] InitError),
    /// A kernel registration the measurement needs failed.
    #[error("setup failed: {0}")]
    Setup(RunError),
    /// The bench's process factory could not make a process.
    #[error("cannot start a simulated process: {0}")]
    Process(String),
}

/// One simulated process as the measurements see it: its driver, and the simulator's own view
/// of it (counters, sticky error). The in-process [`SimDriver`] is one; with feature `onboard`,
/// an `AclDriver` loaded from a copy of `libsim_acl.so` is another (the same measurements through
/// the C ABI).
pub trait SimProcess: Driver {
    /// The simulator's counters of this process.
    fn stats(&self) -> SimStats;
    /// The sticky error of this process's context on `card`, when it has a poisoned one.
    fn sticky_error(&self, card: DeviceId) -> Option<Code>;
    /// The same process as a plain driver.
    fn driver(self: Arc<Self>) -> Arc<dyn Driver>;
}

impl SimProcess for SimDriver {
    fn stats(&self) -> SimStats {
        SimDriver::stats(self)
    }

    fn sticky_error(&self, card: DeviceId) -> Option<Code> {
        SimDriver::sticky_error(self, card)
    }

    fn driver(self: Arc<Self>) -> Arc<dyn Driver> {
        self
    }
}

#[cfg(feature = "onboard")]
impl SimProcess for crate::acl::AclDriver {
    fn stats(&self) -> SimStats {
        self.sim_stats().unwrap_or_default()
    }

    fn sticky_error(&self, card: DeviceId) -> Option<Code> {
        self.sim_sticky_error(card)
    }

    fn driver(self: Arc<Self>) -> Arc<dyn Driver> {
        self
    }
}

/// Makes a fresh simulated process of a bench's machine.
pub type ProcessFactory = Arc<dyn Fn(&SimConfig) -> Result<Arc<dyn SimProcess>, String> + Send + Sync>;

/// How a bench makes its processes: in-process [`SimDriver`]s unless a factory is set.
#[derive(Clone, Default)]
pub struct Processes(pub Option<ProcessFactory>);

impl std::fmt::Debug for Processes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Processes(factory)"
        } else {
            "Processes(in-process)"
        })
    }
}

/// A simulated machine for one test: its sim root, lock directory, blobs and runner factory.
#[derive(Debug, Clone)]
pub struct SimBench {
    /// The arch.
    pub arch: Arch,
    /// The sim (root, cards, timeouts).
    pub sim: SimConfig,
    /// Where the card leases live.
    pub leases: LeaseConfig,
    /// Where the arch's kernel blobs are.
    pub kernel_dir: PathBuf,
    /// How runners are built.
    pub factory: RunnerFactory,
    /// How processes are made (in-process simulators by default).
    pub processes: Processes,
}

impl SimBench {
    /// A bench with its sim state under `root`, leases under `lock_dir`, [`fast_timeouts`] and
    /// the blobs this crate's build made.
    pub fn new(arch: Arch, root: &Path, lock_dir: &Path, factory: RunnerFactory) -> Self {
        Self {
            arch,
            sim: SimConfig::new(arch, root)
                .with_timeouts(fast_timeouts())
                .expect("fast_timeouts keep the sim ordering"),
            leases: LeaseConfig {
                dir: lock_dir.to_owned(),
            },
            kernel_dir: built_blob_dir(arch),
            factory,
            processes: Processes::default(),
        }
    }

    /// The same bench, its processes made by `factory` (e.g. `libsim_acl.so` behind the `acl`
    /// driver).
    pub fn with_processes(mut self, factory: ProcessFactory) -> Self {
        self.processes = Processes(Some(factory));
        self
    }

    /// Starts a run on `cards` with the fault plan `plan` (`""` for none): installs it and zeroes
    /// the cards' counters.
    pub fn start_run(&self, cards: &[DeviceId], plan: &str) -> Result<(), TestkitError> {
        let plan: FaultPlan = plan.parse()?;
        start_run(&self.sim, cards, &plan)?;
        Ok(())
    }

    /// A fresh in-process simulator (one driver value is one process's view of the cards); it
    /// ignores [`SimBench::processes`].
    pub fn process(&self) -> Arc<SimDriver> {
        Arc::new(SimDriver::new(self.sim.clone()))
    }

    /// A fresh simulated process made as [`SimBench::processes`] says (what the measurements use).
    pub fn try_process(&self) -> Result<Arc<dyn SimProcess>, TestkitError> {
        match &self.processes.0 {
            Some(make) => make(&self.sim).map_err(TestkitError::Process),
            None => Ok(Arc::new(SimDriver::new(self.sim.clone()))),
        }
    }

    /// Takes `card`'s lease (fails at once when someone else holds it).
    pub fn lease(&self, card: DeviceId) -> Result<DeviceLease, TestkitError> {
        Ok(DeviceLease::try_acquire(&self.leases, card, "testkit")?)
    }

    /// Loads a kernel blob of the bench's arch.
    pub fn kernel(&self, name: &str) -> Result<KernelBlob, TestkitError> {
        Ok(load_named(&self.kernel_dir, self.arch, name)?)
    }

    /// A runner config for `card`: the bench's timeouts, the `noop` as probe kernel.
    pub fn config(
        &self,
        card: DeviceId,
        events: Option<HealthSubscriber>,
    ) -> Result<RunnerConfig, TestkitError> {
        let mut cfg = RunnerConfig::new(card, self.sim.timeouts);
        cfg.probe_kernel = Some(self.kernel("noop")?);
        cfg.events = events;
        Ok(cfg)
    }

    /// Builds a runner in `process` with `cfg` and registers [`WORKLOAD_KERNELS`].
    pub fn runner<P: SimProcess + ?Sized>(
        &self,
        process: &Arc<P>,
        cfg: RunnerConfig,
    ) -> Result<Box<dyn DeviceRunner>, TestkitError> {
        let driver = Arc::clone(process).driver();
        let mut runner = (self.factory)(driver, cfg)?;
        for name in WORKLOAD_KERNELS {
            runner
                .register_kernel(&self.kernel(name)?)
                .map_err(TestkitError::Setup)?;
        }
        Ok(runner)
    }
}

/// The `noop` request (one block).
pub fn noop_request() -> RunRequest {
    RunRequest::from(&noop_case(1))
}

/// The `hang` request (one block): reaped by the op-execute timeout.
pub fn hang_request() -> RunRequest {
    RunRequest::new("hang", 1, Vec::new())
}

/// The compute case: `vector_add` of 4096 elements on 4 blocks, inputs from `seed`.
pub fn compute_case(seed: u64) -> KernelCase {
    vector_add_case(4096, 4, seed)
}

/// How one compute case ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseOutcome {
    /// The outputs matched the host reference.
    Passed,
    /// The run succeeded but the outputs are wrong (a golden mismatch).
    Mismatch(CaseMismatch),
    /// The run failed.
    Error(RunError),
}

impl CaseOutcome {
    /// Whether the case passed.
    pub fn passed(&self) -> bool {
        matches!(self, Self::Passed)
    }
}

/// Runs `case` on `runner` and checks it against its reference.
pub fn run_case(runner: &mut dyn DeviceRunner, case: &KernelCase) -> CaseOutcome {
    match runner.run(&RunRequest::from(case)) {
        Ok(out) => match case.check(&out.outputs) {
            Ok(()) => CaseOutcome::Passed,
            Err(m) => CaseOutcome::Mismatch(m),
        },
        Err(e) => CaseOutcome::Error(e),
    }
}

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
    raw_probe(process, bench.arch, card, &bench.sim.timeouts, &hang, &noop).map_err(|error| {
        TestkitError::Init(InitError::Driver {
            device: card,
            arch: bench.arch,
            error,
            logged: Vec::new(),
        })
    })
}

/// The within-process probe on any driver (a simulated process or a real card): the naive
/// worker opens `card` for `arch` (an error here is returned), then runs `hang` and `noop`, one
/// block each, on the same context. Nothing is torn down or reset afterwards.
pub fn raw_probe(
    driver: Arc<dyn Driver>,
    arch: Arch,
    card: DeviceId,
    timeouts: &Timeouts,
    hang: &KernelBlob,
    noop: &KernelBlob,
) -> Result<RawProbe, DriverError> {
    let worker = RawWorker::open(driver, arch, card, timeouts, &mut Vec::new())?;
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
    let reinit = (bench.factory)(driver, bench.config(card, None)?).map(|_| ());
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
    pub sticky_after_finalize: Option<crate::error::Code>,
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
    match (bench.factory)(driver, bench.config(card, None)?) {
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

/// What a helper process is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelperMode {
    /// Run the hang, then exit without finalize (the process exit is the only cleanup).
    HangThenExit,
    /// Run the hang, then finalize with the lease (force reset).
    HangThenFinalize,
    /// Run the compute case and check it.
    Compute,
}

impl HelperMode {
    /// The mode's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Self::HangThenExit => "hang-then-exit",
            Self::HangThenFinalize => "hang-then-finalize",
            Self::Compute => "compute",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [Self::HangThenExit, Self::HangThenFinalize, Self::Compute]
            .into_iter()
            .find(|m| m.name() == s)
    }
}

/// The arguments of a helper process: `MODE SIM_ROOT LOCK_DIR CARD`.
pub fn helper_args(mode: HelperMode, bench: &SimBench, card: DeviceId) -> Vec<String> {
    vec![
        mode.name().to_owned(),
        bench.sim.root.display().to_string(),
        bench.leases.dir.display().to_string(),
        card.to_string(),
    ]
}

/// Exit status of a helper whose measurement came out as the seed says it should (the hang
/// poisoned its runner; the compute case passed).
pub const HELPER_EXPECTED: u8 = 0;
/// Exit status of a helper whose measurement came out otherwise (printed on stdout).
pub const HELPER_UNEXPECTED: u8 = 1;
/// Exit status of a helper that could not measure (bad arguments, setup failure).
pub const HELPER_SETUP: u8 = 2;

/// The body of an arch crate's helper binary: one measurement in this process, one line on
/// stdout (`hang: ...`, `compute: passed`, ...), exit status [`HELPER_EXPECTED`],
/// [`HELPER_UNEXPECTED`] or [`HELPER_SETUP`].
pub fn helper_main(arch: Arch, factory: RunnerFactory) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match helper(arch, factory, &args) {
        Ok((line, expected)) => {
            println!("{line}");
            ExitCode::from(if expected {
                HELPER_EXPECTED
            } else {
                HELPER_UNEXPECTED
            })
        }
        Err(e) => {
            eprintln!("helper: {e}");
            ExitCode::from(HELPER_SETUP)
        }
    }
}

fn helper(arch: Arch, factory: RunnerFactory, args: &[String]) -> Result<(String, bool), String> {
    let [mode, root, lock_dir, card] = args else {
        return Err(format!("expected MODE SIM_ROOT LOCK_DIR CARD, got {args:?}"));
    };
    let mode = HelperMode::parse(mode).ok_or_else(|| format!("unknown mode {mode:?}"))?;
    let card: DeviceId = card
        .parse()
        .map_err(|_| format!("card {card:?} is not a number"))?;
    let bench = SimBench::new(arch, Path::new(root), Path::new(lock_dir), factory);
    let setup = |e: TestkitError| e.to_string();
    match mode {
        HelperMode::Compute => {
            let outcome = compute_in_fresh_process(&bench, card, 3).map_err(setup)?;
            let line = match &outcome {
                CaseOutcome::Passed => "compute: passed".to_owned(),
                CaseOutcome::Mismatch(m) => format!("compute: mismatch: {m}"),
                CaseOutcome::Error(e) => format!("compute: error: {e}"),
            };
            Ok((line, outcome.passed()))
        }
        HelperMode::HangThenExit | HelperMode::HangThenFinalize => {
            let process = bench.try_process().map_err(setup)?;
            let lease = bench.lease(card).map_err(setup)?;
            let mut runner = bench
                .runner(&process, bench.config(card, None).map_err(setup)?)
                .map_err(setup)?;
            let hang = runner.run(&hang_request());
            let poisoned = matches!(hang, Err(RunError::Device(_))) && runner.is_unusable();
            let mut line = match &hang {
                Ok(_) => "hang: finished (not poisoned)".to_owned(),
                Err(e) => format!("hang: {e}"),
            };
            if mode == HelperMode::HangThenFinalize {
                match runner.finalize(&lease) {
                    Ok(_) => line.push_str("; finalize: recovered"),
                    Err(e) => line.push_str(&format!("; finalize: {e}")),
                }
            } else {
                // Leave as a crashing worker would: no teardown at all.
                std::mem::forget(runner);
            }
            Ok((line, poisoned))
        }
    }
}

/// Runs a helper binary at `exe` and waits for it to exit: its status code and stdout.
pub fn run_helper(
    exe: &Path,
    mode: HelperMode,
    bench: &SimBench,
    card: DeviceId,
) -> std::io::Result<(Option<i32>, String)> {
    let out = std::process::Command::new(exe)
        .args(helper_args(mode, bench, card))
        .output()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.stderr.is_empty() {
        text.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    Ok((out.status.code(), text))
}
