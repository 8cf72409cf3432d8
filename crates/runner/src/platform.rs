//! Which cards a run drives: simulated (`sim`) or real through CANN (`onboard`), and what each
//! needs: the driver, the timeouts, how many cards there are, where their leases live.
//!
//! This module owns the choice of driver at run time (both are compiled when both features are on)
//! and turns every bad setting into a typed, one-line error. It never runs a case.

use std::sync::Arc;

use platform_common::driver::DriverInfo;
use platform_common::kernel::{KernelBlob, KernelError};
use platform_common::lease::LeaseConfig;
use platform_common::timeouts::{TimeoutError, Timeouts};
use platform_common::{Arch, Driver};

use crate::report::model::Platform;

/// Environment variable giving the number of real cards on the host (`--platform onboard`).
pub const ENV_CARDS: &str = "ONBOARD_CARDS";
/// Real cards assumed when [`ENV_CARDS`] is not set.
pub const DEFAULT_REAL_CARDS: u32 = 8;

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
    /// The simulator's settings (sim only).
    #[cfg(feature = "sim")]
    pub sim: Option<platform_common::sim::SimConfig>,
}

/// The default platform: `onboard` when CANN is found (and compiled in), else `sim`.
pub fn default_platform() -> Platform {
    #[cfg(feature = "onboard")]
    {
        let found = platform_common::acl::AclConfig::from_env()
            .and_then(|c| c.resolve())
            .is_ok();
        if found {
            return Platform::Onboard;
        }
    }
    Platform::Sim
}

/// Reads the settings of `platform` for `arch` from the environment, checking every value.
pub fn info(platform: Platform, arch: Arch) -> Result<PlatformInfo, PlatformError> {
    match platform {
        Platform::Sim => sim_info(arch),
        Platform::Onboard => onboard_info(),
    }
}

#[cfg(feature = "sim")]
fn sim_info(arch: Arch) -> Result<PlatformInfo, PlatformError> {
    let cfg = platform_common::sim::SimConfig::from_env(arch)?;
    Ok(PlatformInfo {
        platform: Platform::Sim,
        driver: DriverInfo {
            kind: platform_common::driver::DriverKind::Sim,
            library: None,
        },
        cards: cfg.cards,
        leases: cfg.lease_config(),
        timeouts: cfg.timeouts,
        sim: Some(cfg),
    })
}

#[cfg(not(feature = "sim"))]
fn sim_info(_arch: Arch) -> Result<PlatformInfo, PlatformError> {
    Err(PlatformError::NotCompiled("sim"))
}

#[cfg(feature = "onboard")]
fn onboard_info() -> Result<PlatformInfo, PlatformError> {
    use platform_common::timeouts::TimeoutProfile;
    let driver = platform_common::acl::AclDriver::load_default()?;
    let cards = match std::env::var(ENV_CARDS) {
        Err(_) => DEFAULT_REAL_CARDS,
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(PlatformError::Cards {
                    var: ENV_CARDS,
                    value: v,
                })
            }
        },
    };
    Ok(PlatformInfo {
        platform: Platform::Onboard,
        driver: driver.info(),
        cards,
        leases: LeaseConfig::real_default(),
        timeouts: Timeouts::from_env(TimeoutProfile::Real)?,
        #[cfg(feature = "sim")]
        sim: None,
    })
}

#[cfg(not(feature = "onboard"))]
fn onboard_info() -> Result<PlatformInfo, PlatformError> {
    Err(PlatformError::NotCompiled("onboard"))
}

/// A lane's driver and probe kernel for `platform`.
pub fn open_driver(
    platform: Platform,
    arch: Arch,
) -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
    match platform {
        Platform::Sim => open_sim(arch),
        Platform::Onboard => open_acl(),
    }
}

#[cfg(feature = "sim")]
fn open_sim(arch: Arch) -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
    let cfg = platform_common::sim::SimConfig::from_env(arch)?;
    let probe = platform_common::kernel::load_builtin(arch, "noop").map_err(PlatformError::ProbeKernel)?;
    Ok((Arc::new(platform_common::sim::SimDriver::new(cfg)), Some(probe)))
}

#[cfg(not(feature = "sim"))]
fn open_sim(_arch: Arch) -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
    Err(PlatformError::NotCompiled("sim"))
}

#[cfg(feature = "onboard")]
fn open_acl() -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
    let driver = platform_common::acl::AclDriver::load_default()?;
    Ok((Arc::new(driver), None))
}

#[cfg(not(feature = "onboard"))]
fn open_acl() -> Result<(Arc<dyn Driver>, Option<KernelBlob>), PlatformError> {
    Err(PlatformError::NotCompiled("onboard"))
}
