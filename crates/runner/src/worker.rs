//! `ChipWorker`: one initialised device runner for a (runtime, card), with its kernels.
//!
//! A worker is built by [`ChipWorker::init`] (the arch crate's `DeviceRunner::init`, through
//! [`crate::platform::arch_entry`]), registers the
//! kernels a case needs on first use, runs requests, and ends with [`ChipWorker::close`] (=
//! `finalize`, which force-resets a card whose runner is marked unusable). This module owns that
//! lifecycle, the device buffers and device fixtures that belong to a worker (they die with it: a
//! rebuilt worker has none, and its runner refuses an old buffer handle), and the kernel blob cache
//! of a process (blobs found by the run's [`KernelRegistry`]). It never decides when a worker is
//! retired (the pool and the lane do) and never compares results (the case executor does).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use platform_common::health::HealthSubscriber;
use platform_common::kernel::{KernelBlob, KernelError, KernelRegistry};
use platform_common::runner_base::{
    self, BufferId, FinalizeError, FinalizeReport, InitError, RunError, RunOutput, RunRequest, RunnerConfig,
};
use platform_common::timeouts::Timeouts;
use platform_common::{Arch, DeviceId, DeviceLease, Driver, DriverError};

use crate::runtime::Runtime;

/// Where a process's workers come from: the arch, the driver, the card, the timeouts, the probe
/// kernel, where health events go, where kernels are found, and the kernel blobs already loaded.
#[derive(Debug)]
pub struct WorkerEnv {
    /// The arch of the runners.
    pub arch: Arch,
    /// The driver every runner of this process shares.
    pub driver: Arc<dyn Driver>,
    /// The card.
    pub device: DeviceId,
    /// The runners' timeouts.
    pub timeouts: Timeouts,
    /// The kernel the post-reset probe runs (`noop` on the simulator), if any.
    pub probe_kernel: Option<KernelBlob>,
    /// Where the runners' health events go.
    pub events: Option<HealthSubscriber>,
    /// The lane's breadcrumb, when this is the lane's own card (its driver stamps it): a case
    /// context tells it how many launches a case makes.
    pub breadcrumb: Option<Arc<crate::crumb::Breadcrumb>>,
    /// Where the kernels are, for this platform and arch (default: the built-in host blobs).
    pub kernels: KernelRegistry,
    blobs: BlobCache,
}

impl WorkerEnv {
    /// An environment for workers of `arch` on `device`, finding kernels with
    /// [`KernelRegistry::builtin`] (set [`WorkerEnv::kernels`] for a run's own).
    pub fn new(arch: Arch, driver: Arc<dyn Driver>, device: DeviceId, timeouts: Timeouts) -> Self {
        Self {
            arch,
            driver,
            device,
            timeouts,
            probe_kernel: None,
            events: None,
            breadcrumb: None,
            kernels: KernelRegistry::builtin(arch),
            blobs: BlobCache::default(),
        }
    }

    /// An environment for workers on another card of the same process, with that card's own
    /// driver value (a driver keeps one current device), and the same timeouts, probe kernel and
    /// event subscriber.
    pub fn for_device(&self, device: DeviceId, driver: Arc<dyn Driver>) -> Self {
        Self {
            arch: self.arch,
            driver,
            device,
            timeouts: self.timeouts,
            probe_kernel: self.probe_kernel.clone(),
            events: self.events.clone(),
            breadcrumb: None,
            kernels: self.kernels.clone(),
            blobs: BlobCache::default(),
        }
    }

    /// The blob of kernel `name` for this platform and arch (loaded once per process).
    pub fn blob(&mut self, name: &str) -> Result<KernelBlob, KernelError> {
        self.blobs.get(&self.kernels, name)
    }
}

/// Kernel blobs of one registry, loaded on first use.
#[derive(Debug, Default)]
struct BlobCache {
    loaded: HashMap<String, KernelBlob>,
}

impl BlobCache {
    fn get(&mut self, registry: &KernelRegistry, name: &str) -> Result<KernelBlob, KernelError> {
        if let Some(b) = self.loaded.get(name) {
            return Ok(b.clone());
        }
        let blob = registry.load(name)?;
        self.loaded.insert(name.to_owned(), blob.clone());
        Ok(blob)
    }
}

/// A class fixture's data, erased: the host data a lane keeps, or the device resources a worker
/// keeps (declared with the case API's `Fixture`, which names this type too).
pub type FixtureData = Arc<dyn std::any::Any + Send + Sync>;

/// A class's device fixture on one worker: built (its resources belong to the worker), or
/// failed without a device error (reported once, naming the case that saw it).
#[derive(Clone)]
pub enum DeviceFixture {
    /// Built.
    Ready(FixtureData),
    /// Failed: why, and the case whose attempt reported it.
    Failed {
        /// Why.
        reason: String,
        /// The case that reported it.
        first_case: String,
    },
}

impl std::fmt::Debug for DeviceFixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceFixture::Ready(_) => f.write_str("Ready"),
            DeviceFixture::Failed { reason, first_case } => f
                .debug_struct("Failed")
                .field("reason", reason)
                .field("first_case", first_case)
                .finish(),
        }
    }
}

/// Registering a case's kernels failed.
#[derive(Debug, thiserror::Error)]
pub enum KernelSetupError {
    /// The blob could not be found or loaded (infrastructure: nothing was sent to the device).
    #[error("cannot load kernel {name:?}: {source}")]
    Load {
        /// The kernel.
        name: String,
        /// Why.
        #[source]
        source: KernelError,
    },
    /// The runner refused or failed the registration.
    #[error("cannot register kernel {name:?}: {source}")]
    Register {
        /// The kernel.
        name: String,
        /// Why.
        #[source]
        source: RunError,
    },
}

/// One initialised device runner for a runtime on a card.
#[derive(Debug)]
pub struct ChipWorker {
    runtime: Runtime,
    runner: Box<dyn runner_base::DeviceRunner>,
    registered: HashSet<String>,
    fixtures: HashMap<String, DeviceFixture>,
    /// Whether anything reached the device since [`ChipWorker::take_touched`] last looked (a
    /// run, a registration, a buffer operation): the lane's post-case health check runs only
    /// after a case that touched the device.
    touched: bool,
}

impl ChipWorker {
    /// Initialises the arch's device runner for `runtime` on `env.device`. A failure is a health
    /// event of the card, not an attempt of any case.
    pub fn init(env: &WorkerEnv, runtime: &Runtime) -> Result<Self, InitError> {
        let cfg = RunnerConfig {
            device: env.device,
            timeouts: env.timeouts,
            sdma: runtime.sdma,
            probe_kernel: env.probe_kernel.clone(),
            events: env.events.clone(),
        };
        let runner = (crate::platform::arch_entry(env.arch).init_runner)(env.driver.clone(), cfg)?;
        tracing::debug!(device = env.device, runtime = %runtime, "chip worker ready");
        Ok(Self {
            runtime: runtime.clone(),
            runner,
            registered: HashSet::new(),
            fixtures: HashMap::new(),
            touched: false,
        })
    }

    /// The runtime this worker serves.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The card.
    pub fn device(&self) -> DeviceId {
        self.runner.device()
    }

    /// Whether the runner refuses runs (marked unusable).
    pub fn is_unusable(&self) -> bool {
        self.runner.is_unusable()
    }

    /// The driver error that first marked the runner unusable.
    pub fn first_cause(&self) -> Option<DriverError> {
        self.runner.first_cause()
    }

    /// How many device buffers of this worker are live.
    pub fn live_buffers(&self) -> usize {
        self.runner.base().live_buffers()
    }

    /// Allocates a device buffer that belongs to this worker.
    pub fn alloc_buffer(&mut self, bytes: usize) -> Result<BufferId, RunError> {
        self.touched = true;
        self.runner.alloc_buffer(bytes)
    }

    /// Frees a buffer of this worker.
    pub fn free_buffer(&mut self, id: BufferId) -> Result<(), RunError> {
        self.touched = true;
        self.runner.free_buffer(id)
    }

    /// Copies `bytes` into a buffer of this worker at `offset`.
    pub fn write_buffer(&mut self, id: BufferId, offset: usize, bytes: &[u8]) -> Result<(), RunError> {
        self.touched = true;
        self.runner.write_buffer(id, offset, bytes)
    }

    /// An SDMA copy of `bytes` bytes between two buffers of this worker (a runtime with the SDMA
    /// option).
    pub fn sdma_copy(&mut self, dst: BufferId, src: BufferId, bytes: usize) -> Result<(), RunError> {
        self.touched = true;
        self.runner.sdma_copy(dst, src, bytes)
    }

    /// Copies `len` bytes of a buffer of this worker from `offset`.
    pub fn read_buffer(&mut self, id: BufferId, offset: usize, len: usize) -> Result<Vec<u8>, RunError> {
        self.touched = true;
        self.runner.read_buffer(id, offset, len)
    }

    /// The size of a live buffer of this worker.
    pub fn buffer_size(&self, id: BufferId) -> Option<usize> {
        self.runner.base().buffer_size(id).ok()
    }

    /// The device fixture of class `class` on this worker, if one was built or failed.
    pub fn device_fixture(&self, class: &str) -> Option<&DeviceFixture> {
        self.fixtures.get(class)
    }

    /// Records class `class`'s device fixture on this worker (it dies with the worker).
    pub fn set_device_fixture(&mut self, class: &str, fixture: DeviceFixture) {
        self.fixtures.insert(class.to_owned(), fixture);
    }

    /// Registers every kernel of `names` not yet registered with this worker.
    pub fn ensure_kernels(&mut self, env: &mut WorkerEnv, names: &[String]) -> Result<(), KernelSetupError> {
        for name in names {
            if self.registered.contains(name) {
                continue;
            }
            let blob = env.blob(name).map_err(|source| KernelSetupError::Load {
                name: name.clone(),
                source,
            })?;
            self.touched = true;
            self.runner
                .register_kernel(&blob)
                .map_err(|source| KernelSetupError::Register {
                    name: name.clone(),
                    source,
                })?;
            self.registered.insert(name.clone());
        }
        Ok(())
    }

    /// Runs one request.
    pub fn run(&mut self, req: &RunRequest) -> Result<RunOutput, RunError> {
        self.touched = true;
        self.runner.run(req)
    }

    /// Whether anything reached the device since the last call (and forgets it).
    pub fn take_touched(&mut self) -> bool {
        std::mem::take(&mut self.touched)
    }

    /// The post-case health check of the worker's card ([`runner_base::DeviceRunner::health_check`]):
    /// a failed check marks the runner unusable.
    pub fn health_check(&mut self) -> Result<(), RunError> {
        self.runner.health_check()
    }

    /// Closes the worker: finalize, which force-resets the card when the runner is unusable.
    pub fn close(self, lease: &DeviceLease) -> Result<FinalizeReport, FinalizeError> {
        tracing::debug!(device = self.device(), runtime = %self.runtime, "closing chip worker");
        self.runner.finalize(lease)
    }
}
