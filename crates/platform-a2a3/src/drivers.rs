//! The drivers this build can hand an a2a3 runner: the one place this crate's features are gated.
//!
//! `sim` (default) adds the simulated card (`SimDriver`, `sim_config`), `onboard` the CANN driver
//! (`AclDriver`, `onboard_driver`); both are additive and a build with both chooses at run time
//! (the runner takes an `Arc<dyn Driver>`, so choosing is the caller's `DriverKind`);
//! `compiled_drivers` lists what this build has. The gates are written once, in
//! [`platform_common::arch_drivers`], and evaluated here, against this crate's features. This
//! file never builds a runner.

platform_common::arch_drivers!(crate::DeviceRunner::ARCH, "a2a3");
