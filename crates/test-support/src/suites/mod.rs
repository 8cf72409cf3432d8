//! The arch crates' integration tests, written once and type-checked once, here.
//!
//! Each submodule is one test file of `platform-a5` and `platform-a2a3`, as functions of an
//! [`ArchUnderTest`] (the arch crate's `ENTRY`, and what the seed measured on it). The arch
//! crates' test files instantiate them with [`arch_runner_tests!`](crate::arch_runner_tests),
//! which writes one `#[test]` function per test, under the test's own name. Unlike
//! [`measure`](crate::measure), these functions assert and panic, and are meant to run only
//! inside those `#[test]` functions. Each test takes its own temp sim root and lock
//! directory and never reads or sets an environment variable (the hardware tests read the card
//! number, `ONBOARD_TEST_DEVICE`, and nothing else).
//!
//! - `arch`: [`ArchUnderTest`], a bench per test, the shared constants.
//! - `seed_tables`: the seed's tables on the simulated card, each row 10 times.
//! - `chain`: the containment chain's edges on the simulated card.
//! - `seed_tables_acl`: the same measurements through the `acl` driver and `libsim_acl.so`.
//! - `sdma_tables`: the SDMA tables (issue 22), in process and through `libsim_acl.so`.
//! - `onboard`: hardware variants, ignored unless run on a real card (the arch crates' feature
//!   `onboard` gates the test file).
//! - `macros`: [`arch_runner_tests!`](crate::arch_runner_tests).

mod arch;
pub mod chain;
mod macros;
pub mod onboard;
pub mod sdma_tables;
pub mod seed_tables;
pub mod seed_tables_acl;

pub use arch::{ArchUnderTest, Bench, CARD, ITERATIONS};
