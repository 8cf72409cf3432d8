//! Which arch crate an `Arch` is: [`entry`] (in `lookup`), the one match on an arch's variants
//! outside the arch crates and tests, and [`all`], every arch's entry in display order.
//!
//! The runner, `libsim_acl.so`, the C++ host API, the test kit and `cargo xtask` look an arch up
//! here and then read everything that differs from its `ArchEntry` (facts and codes, register
//! mapping through the device runner and naive worker, the drivers and the simulated machine of
//! the arch, the CANN compiler's AICore target); none of them matches on `Arch` itself (the
//! tidy test keeps it so). This crate depends only on platform-common and the arch crates, so
//! linking it makes no circle. Adding an arch: its crate, its `ENTRY`, one arm here.

mod lookup;

pub use lookup::{all, entry};
