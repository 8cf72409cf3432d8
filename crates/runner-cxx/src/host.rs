//! The Rust half of the C++ host API: the three objects C++ holds (a driver, a card's lease, a
//! device runner) and the functions the bridge exposes on them.
//!
//! A [`DriverHandle`] is one driver of one arch: a simulated process (`SimDriver`: its context,
//! streams and sticky errors live in it, so two runners of one handle share a process's view of
//! the card, as two runners of one C++ process do on a real card) or the loaded CANN libraries.
//! A [`Runner`] is the arch crate's device runner (`platform_a5::DeviceRunner` or
//! `platform_a2a3::DeviceRunner`, through the arch's `ENTRY`), with its health events collected
//! for C++ to read. Every failure fills the caller's `ErrorInfo` (`convert.rs`) and returns the
//! one-line message as the `Err`. This file owns those objects; it never re-implements any step of
//! the containment chain (the device runner does all of it) and never reads the environment
//! itself (the platform crates' documented defaults do, where an option is left empty).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use platform_common::acl::{AclConfig, AclDriver};
use platform_common::health::{HealthEvent, HealthSubscriber};
use platform_common::kernel::{blob_dir, load_named, KernelBlob};
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::runner_base::{ArchEntry, DeviceRunner, RunArg, RunRequest, RunnerConfig};
use platform_common::sim::{start_run, FaultPlan, SimConfig, SimDriver};
use platform_common::timeouts::{TimeoutProfile, Timeouts};
use platform_common::{Arch, Driver};

use crate::bridge::ffi;
use crate::convert::{self, HostError};

/// One driver of one arch, as C++ holds it.
pub struct DriverHandle {
    entry: ArchEntry,
    driver: Arc<dyn Driver>,
    /// The simulated machine, for a sim driver.
    sim: Option<SimConfig>,
}

impl std::fmt::Debug for DriverHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriverHandle")
            .field("arch", &self.entry.facts.arch)
            .field("sim", &self.sim)
            .finish_non_exhaustive()
    }
}

impl DriverHandle {
    /// The arch the driver is for (`a5`, `a2a3`).
    pub fn arch_name(&self) -> String {
        self.arch().name().to_owned()
    }

    fn arch(&self) -> Arch {
        self.entry.facts.arch
    }

    /// The timeouts a runner of this driver gets: the simulated machine's, or the real-card
    /// defaults with their `ONBOARD_*` overrides.
    fn timeouts(&self) -> Result<Timeouts, HostError> {
        match &self.sim {
            Some(sim) => Ok(sim.timeouts),
            None => Timeouts::from_env(TimeoutProfile::Real).map_err(HostError::Timeouts),
        }
    }
}

/// The arch crate's entry points for `name`.
fn entry(name: &str) -> Result<ArchEntry, HostError> {
    match name.parse::<Arch>() {
        Ok(arch) => Ok(*cardguard_arches::entry(arch)),
        Err(_) => Err(HostError::Usage(format!("arch {name:?}: expected a5 or a2a3"))),
    }
}

/// Opens the driver `options` names.
pub fn open_driver(
    options: &ffi::DriverOptions,
    err: &mut ffi::ErrorInfo,
) -> Result<Box<DriverHandle>, HostError> {
    convert::fill(err, open(options)).map(Box::new)
}

fn open(options: &ffi::DriverOptions) -> Result<DriverHandle, HostError> {
    let entry = entry(&options.arch)?;
    match options.driver {
        ffi::DriverChoice::Sim => {
            if options.sim_root.is_empty() {
                return Err(HostError::Usage(
                    "sim driver: sim_root is empty (name the simulated cards' directory)".into(),
                ));
            }
            let sim = SimConfig::new(entry.facts, &options.sim_root);
            let driver: Arc<dyn Driver> = Arc::new(SimDriver::new(sim.clone()));
            Ok(DriverHandle {
                entry,
                driver,
                sim: Some(sim),
            })
        }
        ffi::DriverChoice::Acl => {
            let acl = if options.acl_libraries.is_empty() {
                AclDriver::load_default(entry.hal)
            } else {
                AclDriver::load_for(
                    &AclConfig::files(options.acl_libraries.iter().map(PathBuf::from)),
                    entry.hal,
                )
            }
            .map_err(HostError::Acl)?;
            Ok(DriverHandle {
                entry,
                driver: Arc::new(acl),
                sim: None,
            })
        }
        _ => Err(HostError::Usage("driver: expected Sim or Acl".into())),
    }
}

/// Starts a simulated run on `cards` with the fault `plan` (empty: none).
pub fn start_sim_run(
    driver: &DriverHandle,
    cards: &[u32],
    plan: &str,
    err: &mut ffi::ErrorInfo,
) -> Result<(), HostError> {
    let run = || {
        let Some(sim) = &driver.sim else {
            return Err(HostError::Usage(
                "start_sim_run: the driver is not the simulated card".into(),
            ));
        };
        let plan: FaultPlan = plan.parse().map_err(HostError::Plan)?;
        start_run(sim, cards, &plan).map_err(HostError::Sim)
    };
    convert::fill(err, run())
}

/// A card's lease, as C++ holds it.
#[derive(Debug)]
pub struct Lease(DeviceLease);

impl Lease {
    /// The card.
    pub fn card(&self) -> u32 {
        self.0.card()
    }
}

/// Takes `card`'s lease without waiting.
pub fn take_lease(
    driver: &DriverHandle,
    card: u32,
    holder: &str,
    lock_dir: &str,
    err: &mut ffi::ErrorInfo,
) -> Result<Box<Lease>, HostError> {
    let cfg = if !lock_dir.is_empty() {
        Ok(LeaseConfig {
            dir: PathBuf::from(lock_dir),
        })
    } else {
        match &driver.sim {
            Some(sim) => Ok(sim.lease_config()),
            None => Ok(LeaseConfig::real_default()),
        }
    };
    let lease = cfg.and_then(|cfg| DeviceLease::try_acquire(&cfg, card, holder).map_err(HostError::Lease));
    convert::fill_card(err, card, lease).map(|l| Box::new(Lease(l)))
}

/// A device runner of one card, as C++ holds it.
pub struct Runner {
    arch: Arch,
    device: u32,
    kernel_dir: PathBuf,
    /// `None` once finalized.
    runner: Option<Box<dyn DeviceRunner>>,
    events: Arc<Mutex<Vec<HealthEvent>>>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("arch", &self.arch)
            .field("device", &self.device)
            .field("finalized", &self.runner.is_none())
            .finish_non_exhaustive()
    }
}

/// Builds a runner of `driver`'s arch on `options.device`.
pub fn new_runner(
    driver: &DriverHandle,
    options: &ffi::RunnerOptions,
    err: &mut ffi::ErrorInfo,
) -> Result<Box<Runner>, HostError> {
    convert::fill_card(err, options.device, build(driver, options)).map(Box::new)
}

fn build(driver: &DriverHandle, options: &ffi::RunnerOptions) -> Result<Runner, HostError> {
    let arch = driver.arch();
    let kernel_dir = if options.kernel_dir.is_empty() {
        blob_dir(arch)
    } else {
        PathBuf::from(&options.kernel_dir)
    };
    let mut cfg = RunnerConfig::new(options.device, driver.timeouts()?);
    cfg.sdma = options.sdma;
    if !options.probe_kernel.is_empty() {
        cfg.probe_kernel = Some(load(&kernel_dir, arch, &options.probe_kernel)?);
    }
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    cfg.events = Some(HealthSubscriber::new(move |e: &HealthEvent| {
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(e.clone());
    }));
    let runner = (driver.entry.init_runner)(Arc::clone(&driver.driver), cfg).map_err(HostError::Init)?;
    Ok(Runner {
        arch,
        device: options.device,
        kernel_dir,
        runner: Some(runner),
        events,
    })
}

fn load(dir: &std::path::Path, arch: Arch, name: &str) -> Result<KernelBlob, HostError> {
    load_named(dir, arch, name).map_err(HostError::Kernel)
}

impl Runner {
    /// The card.
    pub fn device(&self) -> u32 {
        self.device
    }

    fn live(&mut self) -> Result<&mut Box<dyn DeviceRunner>, HostError> {
        let device = self.device;
        self.runner
            .as_mut()
            .ok_or_else(|| HostError::Usage(format!("the runner of card {device} is finalized")))
    }

    /// Registers kernel `name` from the runner's kernel dir.
    pub fn register_kernel(&mut self, name: &str, err: &mut ffi::ErrorInfo) -> Result<(), HostError> {
        let blob = load(&self.kernel_dir, self.arch, name);
        let done = blob.and_then(|b| self.register(&b));
        convert::fill_card(err, self.device, done)
    }

    /// Registers the kernel blob at `path`.
    pub fn register_kernel_file(&mut self, path: &str, err: &mut ffi::ErrorInfo) -> Result<(), HostError> {
        let blob = KernelBlob::load(path.as_ref()).map_err(HostError::Kernel);
        let done = blob.and_then(|b| self.register(&b));
        convert::fill_card(err, self.device, done)
    }

    fn register(&mut self, blob: &KernelBlob) -> Result<(), HostError> {
        self.live()?.register_kernel(blob).map_err(HostError::Run)
    }

    /// Runs one launch request.
    pub fn launch(
        &mut self,
        request: &ffi::LaunchRequest,
        err: &mut ffi::ErrorInfo,
    ) -> Result<ffi::LaunchOutput, HostError> {
        let mut run = || {
            let req = run_request(request)?;
            let out = self.live()?.run(&req).map_err(HostError::Run)?;
            Ok(ffi::LaunchOutput {
                outputs: out
                    .outputs
                    .into_iter()
                    .map(|bytes| ffi::OutputBuffer { bytes })
                    .collect(),
            })
        };
        let done = run();
        convert::fill_card(err, self.device, done)
    }

    /// Whether the runner refuses runs (a fault marked it unusable). A finalized runner is not.
    pub fn is_unusable(&self) -> bool {
        self.runner.as_ref().is_some_and(|r| r.is_unusable())
    }

    /// The health state's name (`finalized` once finalized).
    pub fn health_state(&self) -> String {
        self.runner
            .as_ref()
            .map_or("finalized", |r| r.health().name())
            .to_owned()
    }

    /// The health events since the last call.
    pub fn take_health_events(&mut self) -> Vec<ffi::HealthEvent> {
        let events = std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner));
        events.iter().map(convert::health_event).collect()
    }

    /// Finalizes with `lease` (see the bridge).
    pub fn finalize(
        &mut self,
        lease: &Lease,
        err: &mut ffi::ErrorInfo,
    ) -> Result<ffi::FinalizeReport, HostError> {
        let done = match self.runner.take() {
            None => Err(HostError::Usage(format!(
                "the runner of card {} is finalized already",
                self.device
            ))),
            Some(runner) => runner
                .finalize(&lease.0)
                .map(|r| convert::finalize_report(&r, self.arch))
                .map_err(HostError::Finalize),
        };
        convert::fill_card(err, self.device, done)
    }
}

/// The runner's request for a bridge request.
fn run_request(request: &ffi::LaunchRequest) -> Result<RunRequest, HostError> {
    let args = request
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| match a.kind {
            ffi::ArgKind::Input => Ok(RunArg::Input(a.input.clone())),
            ffi::ArgKind::Output => Ok(RunArg::Output(a.output_size)),
            ffi::ArgKind::Scalar => Ok(RunArg::Scalar(a.scalar)),
            _ => Err(HostError::Usage(format!(
                "argument {i} of kernel {:?}: unknown kind",
                request.kernel
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RunRequest::new(request.kernel.clone(), request.block_dim, args))
}
