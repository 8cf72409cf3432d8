//! Which cards a run drives: simulated (`sim`) or real through CANN (`onboard`), and what each
//! needs: the driver, the timeouts, how many cards there are, where their leases live, and the
//! start of a run (the fault plan installed on simulated cards).
//!
//! This module owns the choice of driver at run time (both are compiled when both features are
//! on) and turns every bad setting into a typed, one-line error. It gets every arch-specific
//! thing from the arch's entry ([`arch_entry`], looked up in `cardguard-arches`: facts, device
//! runner, naive worker, the simulated machine of that arch, the CANN driver for its cards); it
//! never matches on an [`Arch`] itself. The arch-neutral parts (the driver and error types, the
//! fault-plan grammar, starting a sim run) are named from `platform-common`. The runner's features are gated here only,
//! in one `cfg_if!`: a build without `sim` or without `onboard` answers the other platform with
//! [`PlatformError::NotCompiled`]. It never runs a case.

use std::ffi::OsString;
use std::sync::Arc;

use platform_common::driver::DriverInfo;
use platform_common::kernel::{BinaryKind, KernelBlob, KernelError};
use platform_common::lease::LeaseConfig;
use platform_common::runner_base::ArchEntry;
use platform_common::timeouts::{TimeoutError, Timeouts};
use platform_common::{Arch, DeviceId, Driver};

use crate::report::model::{Platform, UnfiredFault};

/// Environment variable giving the number of real cards on the host (`--platform onboard`).
pub const ENV_CARDS: &str = "ONBOARD_CARDS";
/// Real cards assumed when [`ENV_CARDS`] is not set.
pub const DEFAULT_REAL_CARDS: u32 = 8;

/// The arch crate's entry points of `arch` (`platform_a5::ENTRY`, `platform_a2a3::ENTRY`): its
/// facts (block-dim limit, op-timeout code), its device runner and its naive worker, its drivers.
pub fn arch_entry(arch: Arch) -> &'static ArchEntry {
    cardguard_arches::entry(arch)
}

/// A platform that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    /// The simulator's settings are bad.
    #[cfg(feature = "sim")]
    #[error(transparent)]
    Sim(#[from] platform_common::sim::SimError),
    /// The CANN libraries cannot be loaded.
    #[cfg(feature = "onboard")]
    #[error("--platform onboard: {0}")]
    Acl(#[from] platform_common::acl::AclLoadError),
    /// Bad timeouts.
    #[error(transparent)]
    Timeouts(#[from] TimeoutError),
    /// `ASCEND_RT_VISIBLE_DEVICES` cannot be used.
    #[error(transparent)]
    Visible(#[from] platform_common::visible::VisibleError),
    /// A platform this build does not include.
    #[error("--platform {0} is not compiled into this binary (build with feature {0:?})")]
    NotCompiled(&'static str),
    /// The probe kernel cannot be loaded.
    #[error("cannot load the probe kernel: {0}")]
    ProbeKernel(#[source] KernelError),
    /// A bad card count.
    #[error("{var}={value:?} is not a positive whole number")]
    Cards {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
}

/// The kernel every lane on simulated cards loads to probe a card after a reset.
pub const PROBE_KERNEL: &str = "noop";

/// A run that cannot work on any card: the cause is the binary's packaging or the host, never a
/// card (exit 2 before any card is taken).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The probe kernel's blob is not where lanes load it from.
    #[error(
        "cannot load the probe kernel: no kernel blob {PROBE_KERNEL:?} at {} (every lane would fail \
         the same way; this is the binary's packaging, not a card: build the kernels, or set \
         ONBOARD_KERNEL_DIR to a dir with <arch>/{PROBE_KERNEL}.so)",
        blob.display()
    )]
    ProbeKernel {
        /// Where it was looked for.
        blob: std::path::PathBuf,
    },
    /// A kernel dir exists but cannot be read.
    #[error("kernel dir {} cannot be read: {err} (every lane would fail the same way)", dir.display())]
    KernelDir {
        /// The dir.
        dir: std::path::PathBuf,
        /// Why (in the message: the dir is the cause named).
        err: std::io::Error,
    },
}

/// Each kernel dir of `registry` that exists can be read (a lane could not find a kernel in it).
pub fn check_kernel_dirs(registry: &platform_common::kernel::KernelRegistry) -> Result<(), SetupError> {
    for root in registry.roots() {
        let dir = root.join(registry.arch().name());
        match std::fs::read_dir(&dir) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(SetupError::KernelDir { dir, err }),
        }
    }
    Ok(())
}

/// What the dispatcher needs to know of a platform (no driver: lanes open their own).
#[derive(Debug, Clone)]
pub struct PlatformInfo {
    /// Sim or onboard.
    pub platform: Platform,
    /// The driver, for the report.
    pub driver: DriverInfo,
    /// Cards `0..cards` exist.
    pub cards: u32,
    /// Where the cards' leases live.
    pub leases: LeaseConfig,
    /// The device runners' timeouts.
    pub timeouts: Timeouts,
    /// What kind of kernel binary its driver runs (host blobs on sim; device binaries on real
    /// cards, with host blobs standing in behind `libsim_acl.so`).
    pub kernels: BinaryKind,
    /// The simulator's settings (sim only).
    #[cfg(feature = "sim")]
    pub sim: Option<platform_common::sim::SimConfig>,
    /// Where `libsim_acl.so` keeps its cards' records, when the onboard driver is that simulated
    /// library (its run extension resolves): the fault plan's counters are read there at the end
    /// of the run, as on `sim`.
    #[cfg(feature = "sim")]
    pub sim_library: Option<platform_common::sim::SimConfig>,
}

/// Reads the settings of `platform` for `arch` from the environment, checking every value.
pub fn info(platform: Platform, arch: Arch) -> Result<PlatformInfo, PlatformError> {
    match platform {
        Platform::Sim => sim_info(arch),
        Platform::Onboard => onboard_info(arch),
    }
}

/// A lane's driver and probe kernel for `platform`.
pub fn open_driver(
    platform: Platform,
    arch: Arch,
) -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
    match platform {
        Platform::Sim => open_sim(arch),
        Platform::Onboard => open_acl(arch),
    }
}

/// Starts a run on `devices`: on sim, installs the plan and zeroes the cards' counters; on
/// onboard, the same through `libsim_acl.so`'s `cgSimStartRun` extension (a real CANN has none,
/// and then a plan is an error). The error is one line.
pub fn start_run(
    info: &PlatformInfo,
    arch: Arch,
    devices: &[DeviceId],
    faults: Option<&String>,
) -> Result<(), String> {
    match info.platform {
        Platform::Onboard => start_acl_run(arch, devices, faults),
        Platform::Sim => start_sim_run(info, devices, faults),
    }
}

cfg_if::cfg_if! {
    if #[cfg(feature = "sim")] {
        use platform_common::sim::{FaultPlan, SimConfig, SimDriver, ENV_SIM_FAULTS};

        /// The simulated machine of `arch`, from the environment, through its arch's entry.
        fn sim_config(arch: Arch) -> Result<SimConfig, PlatformError> {
            Ok(arch_entry(arch).sim_config_from_env()?)
        }

        fn sim_info(arch: Arch) -> Result<PlatformInfo, PlatformError> {
            let cfg = sim_config(arch)?;
            Ok(PlatformInfo {
                platform: Platform::Sim,
                driver: DriverInfo {
                    kind: platform_common::driver::DriverKind::Sim,
                    library: None,
                },
                cards: cfg.cards,
                leases: cfg.lease_config(),
                timeouts: cfg.timeouts,
                kernels: BinaryKind::HostBlob,
                sim: Some(cfg),
                sim_library: None,
            })
        }

        fn open_sim(arch: Arch) -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
            let cfg = sim_config(arch)?;
            let probe = platform_common::kernel::load_builtin(arch, PROBE_KERNEL).map_err(PlatformError::ProbeKernel)?;
            // The simulated runtime reads the process's map as the real one does (card state and
            // HAL calls by physical id).
            let visible = platform_common::visible::VisibleDevices::from_env()?;
            // Its failing calls go to the lane's device log, as the real runtime's do.
            let driver = platform_common::sim::PlogDriver::from_env(Arc::new(SimDriver::new(cfg).with_visible(visible)));
            Ok((driver, Some(probe)))
        }

        /// The fault plan as the config resolved it (`--faults`, else `ONBOARD_SIM_FAULTS`, else
        /// the profile's `faults`); checked against the card count (a bad rule is a usage error
        /// quoting it, after `source`: the flag, the variable or the file's line and key).
        pub fn fault_plan(faults: Option<&str>, source: &str, cards: u32) -> Result<Option<String>, String> {
            let Some(text) = faults.filter(|t| !t.trim().is_empty()) else {
                return Ok(None);
            };
            FaultPlan::parse_for_cards(text, cards).map_err(|e| format!("{source}: {e}"))?;
            Ok(Some(text.to_owned()))
        }

        /// What every lane of a run on `info`'s platform needs and no card can cause: on sim, the
        /// probe kernel's blob where the lanes load it from. Checked before any card is taken, so
        /// a packaging mistake is exit 2 naming it, never a quarantined card or a health record.
        pub fn check_setup(info: &PlatformInfo, arch: Arch) -> Result<(), SetupError> {
            if info.platform != Platform::Sim {
                return Ok(());
            }
            let dir = platform_common::kernel::blob_dir(arch);
            let blob = platform_common::kernel::blob_path(&dir, PROBE_KERNEL);
            if blob.is_file() {
                Ok(())
            } else {
                Err(SetupError::ProbeKernel { blob })
            }
        }

        /// Where the run's simulated cards and their locks live, when that is not the documented
        /// `<cargo target dir>/sim` (a binary run outside any target dir, no ONBOARD_SIM_ROOT):
        /// one line for people, else `None`.
        pub fn sim_location_note(info: &PlatformInfo) -> Option<String> {
            let sim = info.sim.as_ref()?;
            platform_common::sim::root_is_temp_fallback().then(|| {
                format!(
                    "note: simulated cards live in {}, their locks in {} (outside a cargo target dir; \
                     ONBOARD_SIM_ROOT and ONBOARD_LOCK_DIR choose others)",
                    sim.root.display(),
                    info.leases.dir.display()
                )
            })
        }

        /// Every `dev=N` rule of the plan (checked by [`fault_plan`]) names a card of the run: a
        /// rule for a card the run does not hold could never fire (bad input, naming the rule,
        /// the run's cards and `source`).
        pub fn check_fault_cards(faults: Option<&String>, source: &str, devices: &[DeviceId]) -> Result<(), String> {
            let Some(plan) = faults.and_then(|t| t.parse::<FaultPlan>().ok()) else {
                return Ok(());
            };
            for rule in plan.rules() {
                if let platform_common::sim::CardSel::One(card) = rule.card {
                    if !devices.contains(&card) {
                        let held: Vec<String> = devices.iter().map(u32::to_string).collect();
                        return Err(format!(
                            "{source}: fault rule \"{rule}\" names card {card}, which this run does not \
                             hold (its cards: {}); it could never fire",
                            held.join(", ")
                        ));
                    }
                }
            }
            Ok(())
        }

        /// The plan's rules that did not fire on the run's simulated cards, read from the card
        /// files at the end of the run (see `CardState::unfired`): the sim's, or those of
        /// `libsim_acl.so` behind `onboard`; empty without a plan and on real cards.
        pub fn unfired_faults(info: &PlatformInfo, faults: Option<&str>, devices: &[DeviceId]) -> Vec<UnfiredFault> {
            let sim = info.sim.as_ref().or(info.sim_library.as_ref());
            let (Some(sim), Some(plan)) = (sim, faults.and_then(|t| t.parse::<FaultPlan>().ok())) else {
                return Vec::new();
            };
            // `devices` and the rules are logical; the card files are the physical cards'.
            let visible = match platform_common::visible::VisibleDevices::from_env() {
                Ok(v) => v,
                Err(e) => {
                    tracing::warn!("cannot tell which faults fired: {e}");
                    return Vec::new();
                }
            };
            let mut out = Vec::new();
            for &card in devices {
                let Some(physical) = visible.physical(card) else { continue };
                let state = match platform_common::sim::card_state(sim, physical) {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(card, "cannot read the simulated card to tell which faults fired: {e}");
                        continue;
                    }
                };
                let rules: Vec<_> = plan.rules().iter().filter(|r| r.card.covers(card)).collect();
                for (i, detail) in state.unfired() {
                    if let Some(rule) = rules.get(i) {
                        out.push(UnfiredFault { rule: rule.to_string(), card, detail });
                    }
                }
            }
            out
        }

        /// What a lane on `onboard` gets in its environment for `libsim_acl.so`: the plan.
        pub fn lane_fault_env(faults: Option<&String>) -> Vec<(OsString, OsString)> {
            faults
                .map(|f| (OsString::from(ENV_SIM_FAULTS), OsString::from(f)))
                .into_iter()
                .collect()
        }

        fn start_sim_run(info: &PlatformInfo, devices: &[DeviceId], faults: Option<&String>) -> Result<(), String> {
            let Some(sim) = &info.sim else { return Ok(()) };
            let plan = match faults {
                Some(t) => FaultPlan::parse_for_cards(t, info.cards).map_err(|e| e.to_string())?,
                None => FaultPlan::default(),
            };
            // `devices` and the plan's `dev=N` are logical; the faults go to the physical cards.
            let visible = platform_common::visible::VisibleDevices::from_env().map_err(|e| e.to_string())?;
            platform_common::sim::start_run_mapped(sim, &visible, devices, &plan)
                .map_err(|e| format!("cannot start the sim run: {e}"))
        }
    } else {
        fn sim_info(_arch: Arch) -> Result<PlatformInfo, PlatformError> {
            Err(PlatformError::NotCompiled("sim"))
        }

        fn open_sim(_arch: Arch) -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
            Err(PlatformError::NotCompiled("sim"))
        }

        /// Without the simulator the plan cannot be checked here: it is handed as given to
        /// `libsim_acl.so`, which checks it when the run starts (and without `--faults` reads its
        /// own `ONBOARD_SIM_FAULTS`).
        pub fn fault_plan(faults: Option<&str>, _source: &str, _cards: u32) -> Result<Option<String>, String> {
            Ok(faults.filter(|t| !t.trim().is_empty()).map(str::to_owned))
        }

        /// Without the simulator there are no simulated cards.
        pub fn sim_location_note(_info: &PlatformInfo) -> Option<String> {
            None
        }

        /// Without the simulator no lane loads a probe kernel.
        pub fn check_setup(_info: &PlatformInfo, _arch: Arch) -> Result<(), SetupError> {
            Ok(())
        }

        /// Without the simulator the plan is not parsed here: `libsim_acl.so` checks its cards.
        pub fn check_fault_cards(_faults: Option<&String>, _source: &str, _devices: &[DeviceId]) -> Result<(), String> {
            Ok(())
        }

        /// Without the simulator no card file tells which rules fired.
        pub fn unfired_faults(_info: &PlatformInfo, _faults: Option<&str>, _devices: &[DeviceId]) -> Vec<UnfiredFault> {
            Vec::new()
        }

        /// Lanes inherit the environment, and `libsim_acl.so` gets the plan when the run starts.
        pub fn lane_fault_env(_faults: Option<&String>) -> Vec<(OsString, OsString)> {
            Vec::new()
        }

        /// Without the simulator compiled in, no platform has a sim run to start.
        fn start_sim_run(_info: &PlatformInfo, _devices: &[DeviceId], _faults: Option<&String>) -> Result<(), String> {
            Ok(())
        }
    }
}

cfg_if::cfg_if! {
    if #[cfg(feature = "onboard")] {
        use platform_common::acl::{AclConfig, AclDriver};

        /// The CANN driver for `arch`'s cards, through its arch's entry.
        fn onboard_driver(arch: Arch) -> Result<AclDriver, PlatformError> {
            Ok(arch_entry(arch).onboard_driver()?)
        }

        /// The default platform: `onboard` when CANN is found (on the search path the CANN
        /// driver uses, whatever the arch), else `sim`.
        pub fn default_platform() -> Platform {
            let found = AclConfig::from_env()
                .and_then(|c| c.resolve())
                .is_ok();
            if found {
                Platform::Onboard
            } else {
                Platform::Sim
            }
        }

        fn onboard_info(arch: Arch) -> Result<PlatformInfo, PlatformError> {
            use platform_common::timeouts::TimeoutProfile;
            let driver = onboard_driver(arch)?;
            let cards = match std::env::var(ENV_CARDS) {
                Err(_) => DEFAULT_REAL_CARDS,
                Ok(v) => match platform_common::number::whole_u32(&v) {
                    Some(n) if n > 0 => n,
                    _ => return Err(PlatformError::Cards { var: ENV_CARDS, value: v }),
                },
            };
            let timeouts = Timeouts::from_env(TimeoutProfile::Real)?;
            // The order must hold on what the runtime applies (V1 rounds up to seconds).
            let applied = driver.applied_op_execute_us(timeouts.op_execute_us());
            timeouts.validate_applied(std::time::Duration::from_micros(applied), TimeoutProfile::Real)?;
            Ok(PlatformInfo {
                platform: Platform::Onboard,
                driver: driver.info(),
                cards,
                leases: LeaseConfig::real_default(),
                timeouts,
                kernels: BinaryKind::DeviceBinary {
                    host_fallback: driver.has_sim_extensions(),
                },
                #[cfg(feature = "sim")]
                sim: None,
                #[cfg(feature = "sim")]
                sim_library: sim_library_config(arch, &driver),
            })
        }

        /// The card records of `libsim_acl.so` (the root a lane's library uses: the one this
        /// process would, as foreign lanes are told), when `driver` is that library.
        #[cfg(feature = "sim")]
        fn sim_library_config(arch: Arch, driver: &platform_common::acl::AclDriver) -> Option<platform_common::sim::SimConfig> {
            if !driver.has_sim_extensions() {
                return None;
            }
            arch_entry(arch)
                .sim_config_from_env()
                .map_err(|e| tracing::warn!("cannot tell where libsim_acl.so keeps its cards: {e}"))
                .ok()
        }

        fn open_acl(arch: Arch) -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
            Ok((Arc::new(onboard_driver(arch)?), None))
        }

        fn start_acl_run(arch: Arch, devices: &[DeviceId], faults: Option<&String>) -> Result<(), String> {
            let driver = onboard_driver(arch).map_err(|e| e.to_string())?;
            match driver.start_sim_run(devices, faults.map(String::as_str)) {
                Ok(true) => Ok(()),
                Ok(false) if faults.is_some() => Err(format!(
                    "--faults: the loaded CANN ({}) cannot inject faults; fault plans need the simulated \
                     library libsim_acl.so in ONBOARD_ACL_LIB",
                    driver
                        .libraries()
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                Ok(false) => Ok(()),
                Err(e) => Err(format!("cannot start the simulated run: {e}")),
            }
        }
    } else {
        /// The default platform: `sim` (no CANN driver in this build).
        pub fn default_platform() -> Platform {
            Platform::Sim
        }

        fn onboard_info(_arch: Arch) -> Result<PlatformInfo, PlatformError> {
            Err(PlatformError::NotCompiled("onboard"))
        }

        fn open_acl(_arch: Arch) -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
            Err(PlatformError::NotCompiled("onboard"))
        }

        fn start_acl_run(_arch: Arch, _devices: &[DeviceId], _faults: Option<&String>) -> Result<(), String> {
            Err(PlatformError::NotCompiled("onboard").to_string())
        }
    }
}
