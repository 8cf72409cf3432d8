//! `DeviceRunnerBase`: the half of a device runner both arches share.
//!
//! It owns the card's stream pair (AICPU, AICore; both stop-on-failure), the SDMA set of a runner
//! created with the SDMA option (provisioned and warmed up at init), the device memory a run
//! allocates, the kernel registry, the runner's [`Health`], and init. The run pipeline, the fail-fast chain and finalize
//! are in their own files of this module. It never maps registers (the arch runners do: a5 per
//! run, a2a3 at init) and never reads the environment.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::arch::{Arch, ArchFacts};
use crate::driver::{DeviceId, DevicePtr, Driver, KernelHandle, Stream};
use crate::error::{codes, DriverError};
use crate::health::{Capability, Health, HealthState};
use crate::kernel::{KernelBlob, KernelMeta};
use crate::timeouts::TimeoutProfile;

use super::buffers::Buffers;
use super::config::RunnerConfig;
use super::errors::{InitError, RunError, UsageError};
use super::sdma::{create_run_stream, SdmaSet};

/// The two streams of a runner: the AICPU scheduler's and the AICore kernels'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamPair {
    /// The AICPU stream (the scheduler task; reports the AICore work's failure).
    pub aicpu: Stream,
    /// The AICore stream (the case's kernel).
    pub aicore: Stream,
}

/// A kernel registered with this runner's context.
#[derive(Debug, Clone)]
pub(super) struct RegisteredKernel {
    pub(super) handle: KernelHandle,
    pub(super) meta: KernelMeta,
    pub(super) path: PathBuf,
}

/// What both arch runners share: streams, memory, kernels, health, and the containment chain.
///
/// Lifecycle: [`DeviceRunnerBase::init`], then any number of runs (each admitted by
/// [`DeviceRunnerBase::guard`]), then [`DeviceRunnerBase::finalize`], which needs the card's
/// lease. Dropping a base without finalize tears a healthy one down as finalize would and
/// abandons an unusable one (logged: its card stays poisoned in this process).
#[derive(Debug)]
pub struct DeviceRunnerBase {
    pub(super) driver: Arc<dyn Driver>,
    /// The arch's facts, as its arch crate states them (the block-dim limit the checks apply).
    pub(super) facts: ArchFacts,
    pub(super) cfg: RunnerConfig,
    pub(super) streams: StreamPair,
    /// The SDMA stream and buffers of a runner created with the SDMA option.
    pub(super) sdma: Option<SdmaSet>,
    /// Device memory currently allocated by this runner (freed at the end of each healthy run;
    /// abandoned on a faulted card).
    pub(super) allocations: Vec<DevicePtr>,
    /// Buffers a caller keeps across runs ([`super::BufferId`]); freed at a healthy finalize,
    /// abandoned on a faulted card.
    pub(super) buffers: Buffers,
    pub(super) kernels: HashMap<String, RegisteredKernel>,
    pub(super) health: Health,
    /// The probe kernel as the post-case health check registered it (once per runner).
    pub(super) health_kernel: Option<KernelHandle>,
    /// Set once finalize (or drop) has torn the runner down.
    pub(super) finished: bool,
}

impl DeviceRunnerBase {
    /// Opens `cfg.device` for the arch `facts` describe (its arch crate's `FACTS`). First, before any driver call, `cfg.timeouts` are checked
    /// against the rules of the driver's profile ([`TimeoutProfile::for_driver`]: the sim rules
    /// for the simulator, the real-card rules for `acl`); a bad value or ordering is
    /// [`InitError::Timeouts`] naming the rule, never a silent fallback. Then `aclInit` (a repeat
    /// is fine), set device, op-execute timeout (a failure there is logged, as on hardware, not
    /// fatal), and the AICPU and AICore streams. On a driver failure, whatever was created is
    /// released best-effort and the failing call is returned ([`InitError::Driver`]).
    pub fn init(driver: Arc<dyn Driver>, facts: ArchFacts, cfg: RunnerConfig) -> Result<Self, InitError> {
        let device = cfg.device;
        let arch = facts.arch;
        let profile = TimeoutProfile::for_driver(driver.info().kind);
        if let Err(error) = cfg.timeouts.validate(profile) {
            let e = InitError::Timeouts {
                device,
                arch,
                profile,
                error,
            };
            tracing::error!(device, %arch, "{e}");
            return Err(e);
        }
        let mut logged = Vec::new();
        let fail = |error: DriverError, logged: Vec<DriverError>| {
            tracing::warn!(device, %arch, %error, "runner init failed");
            InitError::Driver {
                device,
                arch,
                error,
                logged,
                capability: Capability::Compute,
            }
        };
        match driver.init() {
            Ok(()) => {}
            Err(e) if e.code == codes::REPEAT_INITIALIZE => {}
            Err(e) => return Err(fail(e, logged)),
        }
        driver.set_device(device).map_err(|e| fail(e, Vec::new()))?;
        if let Err(e) = driver.set_op_execute_timeout(cfg.timeouts.op_execute_us()) {
            tracing::warn!(device, %arch, error = %e, "op-execute timeout not set (continuing, as on hardware)");
            logged.push(e);
        }
        let aicpu = match create_run_stream(driver.as_ref()) {
            Ok(s) => s,
            Err(e) => {
                release_partial_init(driver.as_ref(), device, &[]);
                return Err(fail(e, logged));
            }
        };
        let aicore = match create_run_stream(driver.as_ref()) {
            Ok(s) => s,
            Err(e) => {
                release_partial_init(driver.as_ref(), device, &[aicpu]);
                return Err(fail(e, logged));
            }
        };
        // SDMA is provisioned at init, warm-up included: a warm-up that faults the card fails
        // the init, as upstream (hw-native-sys/simpler device_runner_base.cpp,
        // provision_dma_workspace; #1896, #2088).
        let sdma = if cfg.sdma {
            match SdmaSet::provision(driver.as_ref(), &cfg.timeouts) {
                Ok(set) => Some(set),
                Err(e) => {
                    tracing::warn!(device, %arch, error = %e, "SDMA warm-up failed: the init fails");
                    release_partial_init(driver.as_ref(), device, &[aicpu, aicore]);
                    let mut err = fail(e, logged);
                    if let InitError::Driver { capability, .. } = &mut err {
                        *capability = Capability::Sdma;
                    }
                    return Err(err);
                }
            }
        } else {
            None
        };
        let health = Health::new(device, arch, cfg.events.clone());
        tracing::debug!(device, %arch, "runner initialised");
        Ok(Self {
            driver,
            facts,
            cfg,
            streams: StreamPair { aicpu, aicore },
            sdma,
            allocations: Vec::new(),
            buffers: Buffers::new(),
            kernels: HashMap::new(),
            health,
            health_kernel: None,
            finished: false,
        })
    }

    /// Gives up an initialised base because an arch-specific init step failed with `error`
    /// (a2a3 `halMemCtl`): streams are destroyed and the device soft-reset, best-effort, and the
    /// typed init error is returned.
    pub fn abort_init(mut self, error: DriverError) -> InitError {
        self.finished = true;
        let mut streams = vec![self.streams.aicpu, self.streams.aicore];
        streams.extend(self.sdma.map(|s| s.stream));
        release_partial_init(self.driver.as_ref(), self.cfg.device, &streams);
        tracing::warn!(device = self.cfg.device, arch = %self.facts.arch, %error, "runner init failed");
        InitError::Driver {
            device: self.cfg.device,
            arch: self.facts.arch,
            error,
            logged: Vec::new(),
            capability: Capability::Compute,
        }
    }

    /// The driver.
    pub fn driver(&self) -> &Arc<dyn Driver> {
        &self.driver
    }

    /// The card.
    pub fn device(&self) -> DeviceId {
        self.cfg.device
    }

    /// The arch.
    pub fn arch(&self) -> Arch {
        self.facts.arch
    }

    /// The arch's facts (from its arch crate).
    pub fn facts(&self) -> ArchFacts {
        self.facts
    }

    /// The configuration the runner was built with.
    pub fn config(&self) -> &RunnerConfig {
        &self.cfg
    }

    /// The stream pair.
    pub fn streams(&self) -> StreamPair {
        self.streams
    }

    /// The SDMA stream and buffers, for a runner created with the SDMA option.
    pub fn sdma(&self) -> Option<SdmaSet> {
        self.sdma
    }

    /// The health state.
    pub fn health(&self) -> HealthState {
        self.health.state()
    }

    /// The error that first took the runner out of `healthy`.
    pub fn first_cause(&self) -> Option<DriverError> {
        self.health.first_cause()
    }

    /// Whether the runner is marked unusable (runs are refused).
    pub fn is_unusable(&self) -> bool {
        self.health.is_unusable()
    }

    /// Registers `blob` under its name (admitted by the guard; a blob of another arch is a usage
    /// error). Re-registering the same file is a no-op; another file under the same name replaces
    /// the entry. The card is made current first (the runner may have moved to another thread).
    /// A driver error (the registration buffer's malloc on a sticky context) marks the runner
    /// unusable.
    pub fn register_kernel(&mut self, blob: &KernelBlob) -> Result<(), RunError> {
        self.guard()?;
        let meta = blob.meta();
        if meta.arch != self.facts.arch {
            return Err(UsageError::WrongArch {
                kernel: meta.name.clone(),
                blob_arch: meta.arch,
                runner_arch: self.facts.arch,
            }
            .into());
        }
        if let Some(k) = self.kernels.get(&meta.name) {
            if k.path == blob.path() {
                return Ok(());
            }
        }
        self.make_current()?;
        let handle = match self.driver.register_kernel(blob) {
            Ok(h) => h,
            Err(e) => return Err(self.device_failure(e)),
        };
        self.kernels.insert(
            meta.name.clone(),
            RegisteredKernel {
                handle,
                meta: meta.clone(),
                path: blob.path().to_owned(),
            },
        );
        Ok(())
    }

    /// Whether a kernel of that name is registered.
    pub fn has_kernel(&self, name: &str) -> bool {
        self.kernels.contains_key(name)
    }
}

/// Best-effort release after a failed init: destroy the streams created so far (never synced)
/// and soft-reset the device. Errors are logged; the init error is what the caller sees.
fn release_partial_init(driver: &dyn Driver, device: DeviceId, streams: &[Stream]) {
    for s in streams {
        if let Err(e) = driver.destroy_stream(*s) {
            tracing::debug!(device, error = %e, "stream not destroyed after failed init");
        }
    }
    if let Err(e) = driver.reset_device(device) {
        tracing::debug!(device, error = %e, "device not reset after failed init");
    }
}

impl Drop for DeviceRunnerBase {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if self.health.is_unusable() {
            tracing::warn!(
                device = self.cfg.device,
                arch = %self.facts.arch,
                "unusable runner dropped without finalize: handles abandoned, card left poisoned in \
                 this process (finalize with the card's lease force-resets it)"
            );
            self.fatal_teardown();
        } else {
            tracing::debug!(
                device = self.cfg.device,
                "runner dropped without finalize: tearing down"
            );
            let _ = self.finalize_common();
        }
    }
}
