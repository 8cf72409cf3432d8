//! The drivers this build can hand an a5 runner: the one place this crate's features are gated.
//!
//! `sim` (default) adds the simulated a5 card ([`crate::FACTS`] bound in: `sim_config`,
//! `sim_config_from_env`), `onboard` the CANN driver (`onboard_driver`); both are additive and a
//! build with both chooses at run time (the runner takes an `Arc<dyn Driver>`, so choosing is the
//! caller's `DriverKind`); [`compiled_drivers`] lists what this build has. This file never builds
//! a runner.

use platform_common::driver::DriverKind;

#[cfg(feature = "sim")]
use crate::facts::FACTS;

cfg_if::cfg_if! {
    if #[cfg(feature = "sim")] {
        use platform_common::sim::{SimConfig, SimError};

        /// The simulated a5 machine whose card files live under `root` (8 cards, sim timeouts).
        pub fn sim_config(root: impl Into<std::path::PathBuf>) -> SimConfig {
            SimConfig::new(FACTS, root)
        }

        /// The simulated a5 machine as the environment describes it (`ONBOARD_SIM_ROOT`,
        /// `ONBOARD_SIM_CARDS`, the timeout overrides); a bad value is a typed error naming it.
        pub fn sim_config_from_env() -> Result<SimConfig, SimError> {
            SimConfig::from_env(FACTS)
        }

        const SIM: Option<DriverKind> = Some(DriverKind::Sim);
    } else {
        const SIM: Option<DriverKind> = None;
    }
}

cfg_if::cfg_if! {
    if #[cfg(feature = "onboard")] {
        use platform_common::acl::{AclDriver, AclLoadError};

        /// The CANN driver for a5 cards, its libraries found as `--platform onboard` finds them
        /// (`ONBOARD_ACL_LIB`, else the CANN install). Absent libraries or symbols are a typed
        /// error naming what was tried, never a panic.
        pub fn onboard_driver() -> Result<AclDriver, AclLoadError> {
            AclDriver::load_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_drivers_follow_the_features() {
        let drivers = compiled_drivers();
        assert_eq!(drivers.contains(&DriverKind::Sim), cfg!(feature = "sim"));
        assert_eq!(drivers.contains(&DriverKind::Acl), cfg!(feature = "onboard"));
    }

    #[cfg(feature = "sim")]
    #[test]
    fn the_simulated_card_is_this_arch() {
        assert_eq!(sim_config("/nonexistent-sim-root").arch, FACTS);
    }
}
