//! The drivers an arch crate's build can hand its runner, written once for both arch crates.
//!
//! [`arch_drivers!`](crate::arch_drivers) expands, in an arch crate's `drivers` module, to that
//! crate's driver surface: with the arch crate's feature `sim`, the simulator's types and
//! `sim_config`; with its feature `onboard`, the CANN driver's types and `onboard_driver`; always
//! `compiled_drivers`. The `cfg`s are evaluated where the macro is invoked, against the arch
//! crate's own features, so each arch crate still gates its drivers in one place (its `drivers`
//! module), with `cfg-if`, while the code is written here once. Nothing here builds a runner.

#[doc(hidden)]
pub use cfg_if::cfg_if as __cfg_if;

/// Expands to an arch crate's driver surface (see [`runner_base::drivers`](crate::runner_base::drivers)):
/// `arch_drivers!(crate::DeviceRunner::ARCH, "a5")` in the arch crate's `drivers` module gives
/// - feature `sim`: `SimConfig`, `SimDriver` and `sim_config(root)`, the simulated machine of
///   the arch whose card files live under `root`;
/// - feature `onboard`: `AclConfig`, `AclDriver`, `AclLoadError` and `onboard_driver()`, the
///   CANN driver with its libraries found as `--platform onboard` finds them (`ONBOARD_ACL_LIB`,
///   else the CANN install); absent libraries or symbols are a typed error, never a panic;
/// - always: `compiled_drivers()`, the drivers this build of the arch crate has, sim first.
#[macro_export]
macro_rules! arch_drivers {
    ($arch:expr, $name:literal) => {
        $crate::runner_base::drivers::__cfg_if! {
            if #[cfg(feature = "sim")] {
                pub use $crate::sim::{SimConfig, SimDriver};

                #[doc = concat!(
                    "The simulated ", $name,
                    " machine whose card files live under `root` (8 cards, sim timeouts)."
                )]
                pub fn sim_config(root: impl Into<std::path::PathBuf>) -> SimConfig {
                    SimConfig::new($arch, root)
                }

                const SIM: Option<$crate::driver::DriverKind> = Some($crate::driver::DriverKind::Sim);
            } else {
                const SIM: Option<$crate::driver::DriverKind> = None;
            }
        }

        $crate::runner_base::drivers::__cfg_if! {
            if #[cfg(feature = "onboard")] {
                pub use $crate::acl::{AclConfig, AclDriver, AclLoadError};

                #[doc = concat!(
                    "The CANN driver for ", $name, " cards, its libraries found as `--platform onboard` ",
                    "finds them (`ONBOARD_ACL_LIB`, else the CANN install). Absent libraries or symbols ",
                    "are a typed error naming what was tried, never a panic."
                )]
                pub fn onboard_driver() -> Result<std::sync::Arc<dyn $crate::Driver>, AclLoadError> {
                    Ok(std::sync::Arc::new(AclDriver::load_default()?))
                }

                const ONBOARD: Option<$crate::driver::DriverKind> = Some($crate::driver::DriverKind::Acl);
            } else {
                const ONBOARD: Option<$crate::driver::DriverKind> = None;
            }
        }

        /// The drivers compiled into this build, sim first.
        pub fn compiled_drivers() -> Vec<$crate::driver::DriverKind> {
            [SIM, ONBOARD].into_iter().flatten().collect()
        }
    };
}
