//! The seed's naive worker on the raw driver: no guard, no drain, no reset.
//!
//! It exists to show what the containment chain prevents: `cargo xtask sim-probe` prints its
//! tables and the arch crates' seed-table tests measure it. Each run does what the seed's worker
//! did per test: the arch's mapping step for the run (a5: one `halResMap` per core), then the
//! run's callable buffer (block dim and arguments, the a2a3 CI's "ChipCallable buffer") is
//! allocated with `aclrtMalloc` and filled, the case's kernel is registered, launched AICore then
//! AICPU, both streams synced, and the callable freed. So on a poisoned context an a5 run fails
//! at `halResMap` (rc=62) and an a2a3 run at `aclrtMalloc` (507899), as the seed logged. The
//! mapping steps are the arch crate's own ([`ArchRegisters`]), the same the device runner makes:
//! this file never says which arch maps what. It never recovers from anything; that is the
//! device runners' job.

use std::fmt;
use std::sync::Arc;

use crate::driver::{AicpuTask, DeviceId, Driver, KernelArg, LaunchOrigin, Stream};
use crate::error::DriverError;
use crate::kernel::KernelBlob;
use crate::timeouts::Timeouts;

use super::arch_runner::ArchRegisters;

/// Opens a naive worker of one arch (`RawWorker::open::<R>` of the arch crate's registers), for
/// callers that pick the arch at run time.
pub type RawWorkerOpener =
    fn(Arc<dyn Driver>, DeviceId, &Timeouts, &mut Vec<DriverError>) -> Result<RawWorker, DriverError>;

/// An arch's per-run mapping step, with the register state its init mapped.
trait RunMapping: Send + fmt::Debug {
    fn map_for_run(
        &mut self,
        driver: &dyn Driver,
        device: DeviceId,
        block_dim: u32,
    ) -> Result<(), DriverError>;
}

impl<R: ArchRegisters> RunMapping for R {
    fn map_for_run(
        &mut self,
        driver: &dyn Driver,
        device: DeviceId,
        block_dim: u32,
    ) -> Result<(), DriverError> {
        ArchRegisters::map_for_run(self, driver, device, block_dim)
    }
}

/// One open naive worker: its card's context, an AICPU and an AICore stream, and the arch's
/// register state.
#[derive(Debug)]
pub struct RawWorker {
    driver: Arc<dyn Driver>,
    card: DeviceId,
    aicpu: Stream,
    aicore: Stream,
    sync_ms: u32,
    registers: Box<dyn RunMapping>,
}

impl RawWorker {
    /// The seed's init for the arch of `R`: set device, op-execute timeout (a failure is pushed
    /// to `logged` and init goes on, as on hardware), the two streams, then the arch's mapping
    /// step of init (a2a3: `halMemCtl`, once).
    pub fn open<R: ArchRegisters>(
        driver: Arc<dyn Driver>,
        card: DeviceId,
        t: &Timeouts,
        logged: &mut Vec<DriverError>,
    ) -> Result<Self, DriverError> {
        let _ = driver.init();
        driver.set_device(card)?;
        if let Err(e) = driver.set_op_execute_timeout(t.op_execute_us()) {
            logged.push(e);
        }
        let aicpu = driver.create_stream()?;
        let aicore = driver.create_stream()?;
        let registers = R::map_at_init(driver.as_ref(), card)?;
        Ok(Self {
            driver,
            card,
            aicpu,
            aicore,
            sync_ms: t.stream_sync_ms(),
            registers: Box::new(registers),
        })
    }

    /// Runs `blob` with `block_dim` blocks as the seed's worker ran a test (see the module docs).
    pub fn run(&mut self, blob: &KernelBlob, block_dim: u32) -> Result<(), DriverError> {
        let d = self.driver.as_ref();
        self.registers.map_for_run(d, self.card, block_dim)?;
        let args = vec![KernelArg::Scalar(0); blob.meta().num_args as usize];
        // The callable: the block dim, then one word per (scalar, zero) argument.
        let callable: Vec<u8> = std::iter::once(u64::from(block_dim))
            .chain(args.iter().map(|_| 0u64))
            .flat_map(u64::to_le_bytes)
            .collect();
        let buffer = d.malloc(callable.len())?;
        d.memcpy_to_device(buffer, &callable)?;
        let handle = d.register_kernel(blob)?;
        d.launch_aicore(self.aicore, handle, block_dim, &args, LaunchOrigin::Case)?;
        d.launch_aicpu(self.aicpu, AicpuTask { aicore: self.aicore })?;
        d.synchronize_stream_with_timeout(self.aicpu, self.sync_ms)?;
        d.synchronize_stream_with_timeout(self.aicore, self.sync_ms)?;
        d.free(buffer)
    }
}
