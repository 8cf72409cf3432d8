//! The process-global simulator behind the exports, created on the first call.
//!
//! This file owns building the [`SimDriver`] from the settings and the per-thread description of
//! the next launch and the next SDMA copy (`cgSimSetLaunchInfo`). A configuration that cannot be used is reported once on
//! stderr (one line naming the bad variable) and fails every call.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::OnceLock;

use platform_common::driver::{LaunchOrigin, SdmaOrigin};
use platform_common::lease::LeaseConfig;
use platform_common::sim::{CurrentDevice, SimDriver, ENV_SIM_CARDS, ENV_SIM_ROOT};
use platform_common::timeouts::{TimeoutProfile, Timeouts};
use platform_common::visible::{VisibleDevices, ENV_VISIBLE_DEVICES};
use platform_common::Arch;

use crate::settings::{Settings, ENV_SIM_ARCH};

/// The simulator of this copy of the library.
#[derive(Debug)]
pub(crate) struct Sim {
    /// This process's driver state.
    pub(crate) driver: SimDriver,
    /// Where variables come from.
    pub(crate) settings: Settings,
    /// Leases taken for force resets requested through the C ABI (see [`crate::exports_acl`]).
    pub(crate) leases: LeaseConfig,
    /// `ASCEND_RT_VISIBLE_DEVICES`, as the real runtime reads it: ACL calls take logical ids,
    /// the `hal*` exports physical ones (see [`crate::exports_hal`]).
    pub(crate) visible: VisibleDevices,
}

static SIM: OnceLock<Result<Sim, String>> = OnceLock::new();

/// The simulator, built on first use; `None` (after one line on stderr) when unusable.
pub(crate) fn sim() -> Option<&'static Sim> {
    let mut first = false;
    let state = SIM.get_or_init(|| {
        first = true;
        build()
    });
    match state {
        Ok(sim) => Some(sim),
        Err(e) => {
            if first {
                eprintln!("libsim_acl: {e}");
            }
            None
        }
    }
}

fn build() -> Result<Sim, String> {
    let settings = Settings::load()?;
    init_logging(&settings);
    // A variable that is not UTF-8 is an error naming it, never a silent default.
    platform_common::env::check(platform_common::env::PLATFORM_VARS).map_err(|e| e.to_string())?;
    platform_common::env::check(&[ENV_SIM_ARCH]).map_err(|e| e.to_string())?;
    let arch = match settings.get(ENV_SIM_ARCH) {
        None => Arch::DEFAULT,
        Some(v) => v
            .trim()
            .parse::<Arch>()
            .map_err(|e| format!("{ENV_SIM_ARCH}: {e}"))?,
    };
    // The simulated machine of that arch, as its arch crate's entry states it.
    let entry = cardguard_arches::entry(arch);
    let root = match settings.get(ENV_SIM_ROOT).filter(|r| !r.trim().is_empty()) {
        Some(r) => PathBuf::from(r),
        None => entry.sim_config_from_env().map_err(|e| e.to_string())?.root,
    };
    let mut cfg = entry.sim_config(root);
    if let Some(v) = settings.get(ENV_SIM_CARDS) {
        cfg.cards = match platform_common::number::whole_u32(&v) {
            Some(n) if n > 0 => n,
            _ => return Err(format!("{ENV_SIM_CARDS}={v:?} is not a positive whole number")),
        };
    }
    cfg.timeouts =
        Timeouts::with_overrides(TimeoutProfile::Sim, |k| settings.get(k)).map_err(|e| e.to_string())?;
    let visible = match settings.get(ENV_VISIBLE_DEVICES) {
        None => VisibleDevices::identity(),
        Some(v) => VisibleDevices::parse(&v).map_err(|e| e.to_string())?,
    };
    let leases = LeaseConfig {
        dir: cfg.root.join("abi-leases"),
    };
    tracing::debug!(?cfg, "libsim_acl ready");
    Ok(Sim {
        // One value serves every thread of the process: like CANN, each thread has its own
        // current device.
        driver: SimDriver::new(cfg)
            .with_current_device(CurrentDevice::PerThread)
            .with_visible(visible.clone()),
        settings,
        leases,
        visible,
    })
}

/// Logs go to stderr only when `RUST_LOG` asks for them (the library has its own `tracing`).
fn init_logging(settings: &Settings) {
    if let Some(filter) = settings.get("RUST_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .try_init();
    }
}

/// What `cgSimSetLaunchInfo` said about the calling thread's next launch.
#[derive(Debug, Clone)]
pub(crate) struct LaunchInfo {
    pub(crate) origin: LaunchOrigin,
    pub(crate) roles: Vec<u8>,
}

thread_local! {
    static NEXT_LAUNCH: RefCell<Option<LaunchInfo>> = const { RefCell::new(None) };
    static NEXT_SDMA: RefCell<Option<SdmaOrigin>> = const { RefCell::new(None) };
}

/// Records the origin of the calling thread's next SDMA copy.
pub(crate) fn set_next_sdma(origin: SdmaOrigin) {
    NEXT_SDMA.with(|n| *n.borrow_mut() = Some(origin));
}

/// Takes the origin of the calling thread's next SDMA copy: a case's unless told otherwise.
pub(crate) fn take_sdma_origin() -> SdmaOrigin {
    NEXT_SDMA
        .with(|n| n.borrow_mut().take())
        .unwrap_or(SdmaOrigin::Case)
}

/// Records the calling thread's next launch.
pub(crate) fn set_next_launch(info: LaunchInfo) {
    NEXT_LAUNCH.with(|n| *n.borrow_mut() = Some(info));
}

/// Takes the calling thread's next-launch description, if any.
pub(crate) fn take_next_launch() -> Option<LaunchInfo> {
    NEXT_LAUNCH.with(|n| n.borrow_mut().take())
}
