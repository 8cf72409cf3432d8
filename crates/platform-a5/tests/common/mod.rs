//! What the a5 tests share: the arch's facts as the seed measured them, and a bench per test
//! (its own temp sim root and lock directory; no environment variable is read or set).
//!
//! The test files of platform-a5 and platform-a2a3 are the same; the arch's expectations live
//! here, so a difference between the arches is visible in one place.

// Each test file uses a different subset of this module.
#![allow(dead_code)]

use platform_common::driver::{DeviceId, DriverCall};
use platform_common::error::{codes, Code};
use platform_common::{Arch, DriverError};

// The onboard tests use only the arch facts.
#[cfg(feature = "sim")]
#[allow(unused_imports)]
pub use sim_bench::*;

/// The arch under test.
pub const ARCH: Arch = Arch::A5;
/// The arch's runner type.
pub type Runner = platform_a5::DeviceRunner;

/// The op-timeout as a5 reports it: 507000 at the AICPU stream sync (STARS reaped the op).
pub const OP_TIMEOUT: DriverError =
    DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR);
/// Where an unguarded a5 run on the poisoned context fails first: register mapping, rc=62.
pub const CASCADE_SURFACE: DriverError = DriverError::new(DriverCall::HalResMap, codes::HAL_RES_MAP_REFUSED);
/// The bounded drain on a poisoned a5 context.
pub const DRAIN_ERROR: Code = codes::RT_STREAM_SYNC_TIMEOUT;
/// The smallest block dim over the a5 limit of 36.
pub const OVER_LIMIT_BLOCK_DIM: u32 = 37;

/// The card the tests use (not 0, so nothing depends on the first card).
pub const CARD: DeviceId = 2;
/// Iterations per row, as the seed measured.
pub const ITERATIONS: usize = 10;

#[cfg(feature = "sim")]
mod sim_bench {
    use std::ops::Deref;

    use platform_common::runner_base::testkit::{RunnerFactory, SimBench};
    use tempfile::TempDir;

    use super::{ARCH, CARD};

    /// Builds the arch's runner.
    pub const FACTORY: RunnerFactory = platform_a5::DeviceRunner::init_boxed;
    /// The helper binary: the "other process" of the cross-process rows.
    pub const HELPER: &str = env!("CARGO_BIN_EXE_a5-sim-helper");

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

    /// A fresh bench: sim root and lock dir in a new temp dir, fast timeouts, a run started on
    /// [`CARD`] with `plan`.
    pub fn bench(plan: &str) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let bench = SimBench::new(ARCH, &dir.path().join("sim"), &dir.path().join("locks"), FACTORY);
        bench.start_run(&[CARD], plan).unwrap();
        Bench { bench, _dir: dir }
    }
}
