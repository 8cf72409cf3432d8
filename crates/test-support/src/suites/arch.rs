//! The arch under test, as an arch crate's tests describe it, and a simulated machine per test.
//!
//! [`ArchUnderTest`] is data the arch crate writes down: its `ENTRY` (facts, runner, naive
//! worker), and the codes the seed measured on that arch, written down independently of the
//! arch crate's `FACTS` so that the simulator reporting those facts is checked against the seed. The shared tests assert against these expectations, so
//! a difference between the arches is visible in one place per arch crate (`tests/common`).

use std::ops::Deref;

use tempfile::TempDir;

use platform_common::driver::DeviceId;
use platform_common::error::{Code, DriverError};
use platform_common::runner_base::ArchEntry;
use platform_common::Arch;

use crate::bench::SimBench;

/// The card the tests use (not 0, so nothing depends on the first card).
pub const CARD: DeviceId = 2;
/// Iterations per row, as the seed measured.
pub const ITERATIONS: usize = 10;

/// An arch crate's runner and the seed's measurements on that arch.
#[derive(Debug, Clone, Copy)]
pub struct ArchUnderTest {
    /// The arch crate's entry points (`platform_a5::ENTRY`, ...).
    pub entry: ArchEntry,
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
        let bench = SimBench::new(self.entry, &dir.path().join("sim"), &dir.path().join("locks"));
        bench.start_run(&[CARD], plan).unwrap();
        Bench { bench, _dir: dir }
    }

    /// The arch under test.
    pub fn arch(&self) -> Arch {
        self.entry.facts.arch
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
