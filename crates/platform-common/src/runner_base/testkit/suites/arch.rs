//! The arch under test, as an arch crate's tests describe it, and a simulated machine per test.
//!
//! [`ArchUnderTest`] is data the arch crate writes down: its arch and runner constructor, and the
//! codes the seed measured on that arch. The shared tests assert against these expectations, so
//! a difference between the arches is visible in one place per arch crate (`tests/common`).

use std::ops::Deref;

use tempfile::TempDir;

use crate::arch::Arch;
use crate::driver::DeviceId;
use crate::error::{Code, DriverError};

use super::super::{RunnerFactory, SimBench};

/// The card the tests use (not 0, so nothing depends on the first card).
pub const CARD: DeviceId = 2;
/// Iterations per row, as the seed measured.
pub const ITERATIONS: usize = 10;

/// An arch crate's runner and the seed's measurements on that arch.
#[derive(Debug, Clone, Copy)]
pub struct ArchUnderTest {
    /// The arch under test.
    pub arch: Arch,
    /// Builds the arch's runner (`platform_a5::DeviceRunner::init_boxed`, ...).
    pub factory: RunnerFactory,
    /// The arch crate's helper binary, the "other process" of the cross-process rows
    /// (`option_env!("CARGO_BIN_EXE_a5-sim-helper")`; built with the arch crate's feature `sim`).
    pub helper: Option<&'static str>,
    /// The op-timeout as the arch reports it at the AICPU stream sync.
    pub op_timeout: DriverError,
    /// Where an unguarded run on the poisoned context fails first.
    pub cascade_surface: DriverError,
    /// The bounded drain's code on a poisoned context.
    pub drain_error: Code,
    /// The smallest block dim over the arch's limit.
    pub over_limit_block_dim: u32,
}

impl ArchUnderTest {
    /// A fresh bench: sim root and lock dir in a new temp dir, fast timeouts, a run started on
    /// [`CARD`] with `plan`.
    pub fn bench(&self, plan: &str) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let bench = SimBench::new(
            self.arch,
            &dir.path().join("sim"),
            &dir.path().join("locks"),
            self.factory,
        );
        bench.start_run(&[CARD], plan).unwrap();
        Bench { bench, _dir: dir }
    }

    /// The helper binary's path.
    pub fn helper(&self) -> &'static str {
        self.helper
            .expect("the arch crate's sim helper binary was not built (it needs the feature `sim`)")
    }
}

/// A bench with its own temp directory (removed when dropped).
#[derive(Debug)]
pub struct Bench {
    bench: SimBench,
    _dir: TempDir,
}

impl Deref for Bench {
    type Target = SimBench;

    fn deref(&self) -> &SimBench {
        &self.bench
    }
}
