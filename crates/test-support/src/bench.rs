//! A simulated machine for one measurement ([`SimBench`]): its sim root, lock directory, kernel
//! blobs and arch, and how it makes simulated processes ([`SimProcess`]: an in-process
//! [`SimDriver`], or a copy of `libsim_acl.so` behind the `acl` driver).
//!
//! This file owns the machine and the workload every measurement runs (the probe, the trigger,
//! the compute case); it never asserts and never reads or writes the environment: every setting
//! is passed in.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cardguard_reference::{noop_case, vector_add_case, CaseMismatch, KernelCase};
use platform_common::acl::AclDriver;
use platform_common::driver::{DeviceId, Driver};
use platform_common::error::Code;
use platform_common::health::HealthSubscriber;
use platform_common::kernel::{built_blob_dir, load_named, KernelBlob, KernelError};
use platform_common::lease::{DeviceLease, LeaseConfig, LeaseError};
use platform_common::runner_base::{ArchEntry, DeviceRunner, InitError, RunError, RunRequest, RunnerConfig};
use platform_common::sim::{start_run, FaultPlan, FaultPlanError, SimConfig, SimDriver, SimError, SimStats};
use platform_common::timeouts::Timeouts;
use platform_common::Arch;

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

impl SimProcess for AclDriver {
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

/// A simulated machine for one test: its sim root, lock directory, blobs and arch.
#[derive(Debug, Clone)]
pub struct SimBench {
    /// The arch under test: its facts (which the sim reports), its runner and its naive worker.
    pub entry: ArchEntry,
    /// The sim (root, cards, timeouts).
    pub sim: SimConfig,
    /// Where the card leases live.
    pub leases: LeaseConfig,
    /// Where the arch's kernel blobs are.
    pub kernel_dir: PathBuf,
    /// How processes are made (in-process simulators by default).
    pub processes: Processes,
}

impl SimBench {
    /// A bench of the arch `entry` is (its arch crate's `ENTRY`) with its sim state under
    /// `root`, leases under `lock_dir`, [`fast_timeouts`] and the blobs `platform-common`'s build
    /// made.
    pub fn new(entry: ArchEntry, root: &Path, lock_dir: &Path) -> Self {
        let arch = entry.facts.arch;
        Self {
            entry,
            sim: SimConfig::new(entry.facts, root)
                .with_timeouts(fast_timeouts())
                .expect("fast_timeouts keep the sim ordering"),
            leases: LeaseConfig {
                dir: lock_dir.to_owned(),
            },
            kernel_dir: built_blob_dir(arch),
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

    /// The arch.
    pub fn arch(&self) -> Arch {
        self.entry.facts.arch
    }

    /// Takes `card`'s lease (fails at once when someone else holds it).
    pub fn lease(&self, card: DeviceId) -> Result<DeviceLease, TestkitError> {
        Ok(DeviceLease::try_acquire(&self.leases, card, "testkit")?)
    }

    /// Loads a kernel blob of the bench's arch.
    pub fn kernel(&self, name: &str) -> Result<KernelBlob, TestkitError> {
        Ok(load_named(&self.kernel_dir, self.arch(), name)?)
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
        let mut runner = (self.entry.init_runner)(driver, cfg)?;
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
