//! Shared helpers of the sim integration tests: a temp machine (sim root and lock dir), kernel
//! blobs (the built-ins, and the tests' own kernels of `tests/kernels/`), and a minimal device
//! session (the seed's init and run on raw driver calls).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use platform_common::driver::{AicpuTask, DriverCall, KernelArg, KernelHandle, LaunchOrigin, Stream};
use platform_common::error::{Code, DriverError};
use platform_common::kernel::{built_blob_dir, load_named, KernelBlob};
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::sim::{start_run, FaultPlan, SimConfig, SimDriver};
use platform_common::{Arch, DeviceId, Driver};

/// The facts of `arch` as its arch crate states them (the sim reports them).
pub fn facts(arch: Arch) -> platform_common::ArchFacts {
    cardguard_test_support::entry(arch).facts
}

/// A simulated machine of its own: sim root and lock dir in a temp dir.
pub struct Machine {
    pub dir: tempfile::TempDir,
    pub cfg: SimConfig,
}

impl Machine {
    pub fn new(arch: Arch) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cfg = SimConfig::new(facts(arch), dir.path().join("sim"));
        Self { dir, cfg }
    }

    /// A machine whose cards start a run with `plan`.
    pub fn with_plan(arch: Arch, plan: &str) -> Self {
        let m = Self::new(arch);
        m.start(plan);
        m
    }

    /// Starts a run on every card with `plan`.
    pub fn start(&self, plan: &str) {
        let plan: FaultPlan = plan.parse().unwrap();
        let cards: Vec<DeviceId> = (0..self.cfg.cards).collect();
        start_run(&self.cfg, &cards, &plan).unwrap();
    }

    pub fn driver(&self) -> SimDriver {
        SimDriver::new(self.cfg.clone())
    }

    pub fn lock_dir(&self) -> PathBuf {
        self.dir.path().join("locks")
    }

    pub fn lease(&self, card: DeviceId) -> DeviceLease {
        let cfg = LeaseConfig { dir: self.lock_dir() };
        DeviceLease::try_acquire(&cfg, card, "sim-test").unwrap()
    }
}

pub fn blob(arch: Arch, name: &str) -> KernelBlob {
    load_named(&built_blob_dir(arch), arch, name).unwrap()
}

/// A kernel of the tests' own (`tests/kernels/<name>.cpp`), built for both arches once per test
/// process into cargo's temp dir for tests (blobs are renamed into place, so test processes
/// building at once do not disturb each other).
pub fn test_blob(arch: Arch, name: &str) -> KernelBlob {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim-test-kernels");
        kernel_build::KernelBuild::new(&out)
            .archs(Arch::ALL.map(|a| a.name()))
            .sources_in(&src)
            .unwrap()
            .build()
            .unwrap();
        out
    });
    load_named(&dir.join(arch.name()), arch, name).unwrap()
}

pub fn err(call: DriverCall, code: Code) -> DriverError {
    DriverError::new(call, code)
}

/// A device session as a runner builds it: current device, op-execute timeout, an AICore and an
/// AICPU stream, and the kernels it registered.
pub struct Session {
    pub card: DeviceId,
    pub aicore: Stream,
    pub aicpu: Stream,
    pub sync_ms: u32,
}

impl Session {
    /// The seed's init: set device, op-execute timeout, the two streams.
    pub fn init(drv: &SimDriver, card: DeviceId) -> Result<Self, DriverError> {
        drv.set_device(card)?;
        let t = drv.config().timeouts;
        drv.set_op_execute_timeout(t.op_execute.as_micros() as u64)?;
        let aicore = drv.create_stream()?;
        let aicpu = drv.create_stream()?;
        Ok(Self {
            card,
            aicore,
            aicpu,
            sync_ms: t.stream_sync_ms(),
        })
    }

    /// Queues `kernel` (AICore, then the AICPU task) without waiting.
    pub fn launch(
        &self,
        drv: &SimDriver,
        kernel: KernelHandle,
        block_dim: u32,
        args: &[KernelArg],
        origin: LaunchOrigin,
    ) -> Result<(), DriverError> {
        drv.launch_aicore(self.aicore, kernel, block_dim, args, origin)?;
        drv.launch_aicpu(self.aicpu, AicpuTask { aicore: self.aicore })
    }

    /// Launches and syncs the AICPU stream, then the AICore stream.
    pub fn run(
        &self,
        drv: &SimDriver,
        kernel: KernelHandle,
        block_dim: u32,
        args: &[KernelArg],
        origin: LaunchOrigin,
    ) -> Result<(), DriverError> {
        self.launch(drv, kernel, block_dim, args, origin)?;
        drv.synchronize_stream_with_timeout(self.aicpu, self.sync_ms)?;
        drv.synchronize_stream_with_timeout(self.aicore, self.sync_ms)
    }

    /// Registers a kernel blob by name.
    pub fn register(drv: &SimDriver, name: &str) -> Result<KernelHandle, DriverError> {
        drv.register_kernel(&blob(drv.config().arch.arch, name))
    }
}

/// f32 values as bytes.
pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// Bytes as f32 values.
pub fn bytes_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub const SHORT: Duration = Duration::from_millis(200);
