//! The built-in suite: the classes and cases `cardguard-suite` runs (the dispatch benchmark's
//! trivial suite is `crate::bench_suite`, not here).
//!
//! One file per class group, each with `pub fn builtin(arch: Arch) -> Suite`, joined by
//! `builtin.rs` in hand-out order (the dispatcher still reorders: pooled before standalone, runtimes together):
//!
//! - [`runtimes`]: the runtimes (pool keys) the classes use;
//! - [`elementwise`]: `VectorAdd`, `BlockDimSweep` (block dims 1 to 8), `MultiCard`;
//! - [`dense`]: `Matmul`, `Softmax`, `RmsNorm`;
//! - [`attention`]: `PagedAttentionUnrollManualScope` (several decode steps per case) and
//!   `PagedAttentionManualScope`;
//! - [`pipeline`]: `MultiLaunch` (several kernels in one case) and `Noop`;
//! - [`faults`]: the standalone `AicoreOpTimeout` class;
//! - [`sdma`]: `SdmaCopy` (tagged `sdma`), device-to-device copies on the SDMA engine.
//!
//! - [`reference`](mod@reference): the built-in kernels' argument lists, seeded inputs and host references.
//!
//! Every case's inputs and goldens come from [`reference`](mod@reference) with a fixed seed; work
//! per case is small (simulated cards run kernels on host threads). The same declarations serve
//! both arches: the arch picks the SDMA option, and arch filters keep a few cases to one arch.
//! This module owns the suite's content; it never runs a case.

pub mod attention;
mod builtin;
pub mod dense;
pub mod elementwise;
pub mod faults;
pub mod pipeline;
pub mod runtimes;
pub mod sdma;

#[cfg(test)]
mod host_run;
#[cfg(all(test, feature = "sim"))]
mod sim_tests;
#[cfg(test)]
mod tests;

pub use builtin::builtin;
/// The built-in kernels' references (`cardguard-reference`), where the suite's classes and tests
/// have always named them.
pub use cardguard_reference as reference;
