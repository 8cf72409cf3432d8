//! The drivers this build can hand a device runner of any arch: the one place the crate's driver
//! features are gated.
//!
//! `sim` (default) adds the simulated card, bound to the facts of the arch whose entry asks
//! ([`ArchEntry::sim_config`], [`ArchEntry::sim_config_from_env`]); `onboard` the CANN driver
//! ([`ArchEntry::onboard_driver`]). Both are additive and a build with both chooses at run time
//! (the runner takes an `Arc<dyn Driver>`, so choosing is the caller's `DriverKind`);
//! [`compiled`] lists what this build has. The arch crates' `sim` and `onboard` features turn
//! these on. This file never names an arch and never builds a runner.

use crate::driver::DriverKind;
#[cfg(any(feature = "sim", feature = "onboard"))]
use crate::runner_base::ArchEntry;

cfg_if::cfg_if! {
    if #[cfg(feature = "sim")] {
        use crate::sim::{SimConfig, SimError};

        impl ArchEntry {
            /// The simulated machine of this arch whose card files live under `root` (8 cards,
            /// sim timeouts).
            pub fn sim_config(&self, root: impl Into<std::path::PathBuf>) -> SimConfig {
                SimConfig::new(self.facts, root)
            }

            /// The simulated machine of this arch as the environment describes it
            /// (`ONBOARD_SIM_ROOT`, `ONBOARD_SIM_CARDS`, the timeout overrides); a bad value is a
            /// typed error naming it.
            pub fn sim_config_from_env(&self) -> Result<SimConfig, SimError> {
                SimConfig::from_env(self.facts)
            }
        }

        const SIM: Option<DriverKind> = Some(DriverKind::Sim);
    } else {
        const SIM: Option<DriverKind> = None;
    }
}

cfg_if::cfg_if! {
    if #[cfg(feature = "onboard")] {
        use crate::acl::{AclConfig, AclDriver, AclLoadError};

        impl ArchEntry {
            /// The CANN driver for this arch's cards, its libraries found as `--platform onboard`
            /// finds them (`ONBOARD_ACL_LIB`, else the CANN install), mapping registers with the
            /// arch's [`ArchEntry::hal`]. Absent libraries or symbols (the shared ones and the
            /// arch's) are a typed error naming what was tried, never a panic.
            pub fn onboard_driver(&self) -> Result<AclDriver, AclLoadError> {
                AclDriver::load_for(&AclConfig::from_env()?, self.hal)
            }
        }

        const ONBOARD: Option<DriverKind> = Some(DriverKind::Acl);
    } else {
        const ONBOARD: Option<DriverKind> = None;
    }
}

/// The drivers compiled into this build, sim first.
pub fn compiled() -> Vec<DriverKind> {
    [SIM, ONBOARD].into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_drivers_follow_the_features() {
        let drivers = compiled();
        assert_eq!(drivers.contains(&DriverKind::Sim), cfg!(feature = "sim"));
        assert_eq!(drivers.contains(&DriverKind::Acl), cfg!(feature = "onboard"));
    }
}
