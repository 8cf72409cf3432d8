//! `ChipWorker`: one initialised device runner for a (runtime, card), with its kernels.
//!
//! A worker is built by [`ChipWorker::init`] (the arch crate's `DeviceRunner::init`, through
//! [`crate::platform::arch_entry`]), registers the
//! kernels a case needs on first use, runs requests, and ends with [`ChipWorker::close`] (=
//! `finalize`, which force-resets a card whose runner is marked unusable). This module owns that
//! lifecycle and the kernel blob cache of a process. It never decides when a worker is retired
//! (the pool and the lane do) and never compares results (the case executor does).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use platform_common::health::HealthSubscriber;
use platform_common::kernel::{KernelBlob, KernelError};
use platform_common::runner_base::{
    self, FinalizeError, FinalizeReport, InitError, RunError, RunOutput, RunRequest, RunnerConfig,
};
use platform_common::timeouts::Timeouts;
use platform_common::{Arch, DeviceId, DeviceLease, Driver};

use crate::case::Runtime;

/// Where a process's workers come from: the arch, the driver, the card, the timeouts, the probe
/// kernel, where health events go, and the kernel blobs already loaded.
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
    blobs: BlobCache,
}

impl WorkerEnv {
    /// An environment for workers of `arch` on `device`.
    pub fn new(arch: Arch, driver: Arc<dyn Driver>, device: DeviceId, timeouts: Timeouts) -> Self {
        Self {
            arch,
            driver,
            device,
            timeouts,
            probe_kernel: None,
            events: None,
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
            blobs: BlobCache::default(),
        }
    }

    /// The blob of kernel `name` for this arch (loaded once per process).
    pub fn blob(&mut self, name: &str) -> Result<KernelBlob, KernelError> {
        self.blobs.get(self.arch, name)
    }
}

/// Kernel blobs of one arch, loaded on first use.
#[derive(Debug, Default)]
struct BlobCache {
    loaded: HashMap<String, KernelBlob>,
}

impl BlobCache {
    fn get(&mut self, arch: Arch, name: &str) -> Result<KernelBlob, KernelError> {
        if let Some(b) = self.loaded.get(name) {
            return Ok(b.clone());
        }
        let blob = platform_common::kernel::load_builtin(arch, name)?;
        self.loaded.insert(name.to_owned(), blob.clone());
        Ok(blob)
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
        self.runner.run(req)
    }

    /// Closes the worker: finalize, which force-resets the card when the runner is unusable.
    pub fn close(self, lease: &DeviceLease) -> Result<FinalizeReport, FinalizeError> {
        tracing::debug!(device = self.device(), runtime = %self.runtime, "closing chip worker");
        self.runner.finalize(lease)
    }
}
