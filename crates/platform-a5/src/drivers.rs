//! The drivers this build can hand a runner: the one place this crate's features are gated.
//!
//! `sim` (default) adds the simulated card, `onboard` the CANN driver; both are additive and a
//! build with both chooses at run time (the runner takes an `Arc<dyn Driver>`, so choosing is
//! the caller's [`DriverKind`]). This file never builds a runner.

use platform_common::driver::DriverKind;

cfg_if::cfg_if! {
    if #[cfg(feature = "sim")] {
        pub use platform_common::sim::{SimConfig, SimDriver};

        /// The simulated a5 machine whose card files live under `root` (8 cards, sim timeouts).
        pub fn sim_config(root: impl Into<std::path::PathBuf>) -> SimConfig {
            SimConfig::new(crate::DeviceRunner::ARCH, root)
        }

        const SIM: Option<DriverKind> = Some(DriverKind::Sim);
    } else {
        const SIM: Option<DriverKind> = None;
    }
}

cfg_if::cfg_if! {
    if #[cfg(feature = "onboard")] {
        pub use platform_common::acl::{AclConfig, AclDriver, AclLoadError};

        /// The CANN driver for a5 cards, its libraries found as `--platform onboard` finds them
        /// (`ONBOARD_ACL_LIB`, else the CANN install). Absent libraries or symbols are a typed
        /// error naming what was tried, never a panic.
        pub fn onboard_driver() -> Result<std::sync::Arc<dyn platform_common::Driver>, AclLoadError> {
            Ok(std::sync::Arc::new(AclDriver::load_default()?))
        }

        const ONBOARD: Option<DriverKind> = Some(DriverKind::Acl);
    } else {
        const ONBOARD: Option<DriverKind> = None;
    }
}

/// The drivers compiled into this build, sim first.
pub fn compiled_drivers() -> Vec<DriverKind> {
    [SIM, ONBOARD].into_iter().flatten().collect()
}
