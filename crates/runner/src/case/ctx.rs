//! [`CaseCtx`]: the case context, the only door to the device from a body.
//!
//! It gives a body the run's arch, the card, the case's seed and a seeded RNG, the class's
//! fixture, device buffers (allocate, copy in, copy out, free), launches of the case's kernels
//! with a block dim and arguments, and the comparison helper [`CaseCtx::assert_close`]. Every
//! device call goes through the worker's device runner, behind its guard: a device error keeps
//! its type ([`DeviceError`], a [`RunError`] inside), so a body's `?` makes the attempt a
//! `device_runtime` failure and the lane heals the card as for any device fault. There is no
//! driver handle here and no way around the guard.
//!
//! Buffers belong to the worker. A [`DeviceBuffer`] is a checked handle: the runner refuses a
//! freed one and any of another runner (a worker closed or rebuilt after a heal), with a usage
//! error and no driver call. The buffers a body allocates and does not free are freed after it
//! (`crate::exec::run`); a device fixture's stay with the worker. This file owns the context's
//! operations; it never judges an attempt.

use std::sync::Arc;

use platform_common::runner_base::{BufferId, RunArg, RunError, RunRequest, UsageError};
use platform_common::timeouts::Timeouts;
use platform_common::{Arch, DeviceId};
use rand::SeedableRng;

use cardguard_reference::{allclose, bytes_to_f32s, f32s_to_bytes};

use super::failure::CaseFailure;
use crate::worker::{ChipWorker, FixtureData};

/// The seeded RNG of a case: ChaCha8 from the case's seed, the same stream on every platform
/// and release (use it through [`rand::Rng`]).
pub type CaseRng = rand_chacha::ChaCha8Rng;

/// A device buffer of the worker a case runs on: a checked handle (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceBuffer {
    id: BufferId,
    bytes: usize,
}

impl DeviceBuffer {
    /// Its size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The runner's handle.
    pub fn id(&self) -> BufferId {
        self.id
    }
}

/// One argument of a launch, in the kernel's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// A buffer the kernel reads.
    In(DeviceBuffer),
    /// A buffer the kernel writes (a `corrupt` fault perturbs the first one).
    Out(DeviceBuffer),
    /// A value passed as is.
    Scalar(u64),
}

impl Arg {
    /// An `f32` scalar (its bits, as the kernels read it).
    pub fn f32(v: f32) -> Self {
        Arg::Scalar(u64::from(v.to_bits()))
    }

    /// A count or size scalar.
    pub fn count(n: usize) -> Self {
        Arg::Scalar(n as u64)
    }
}

/// A case-context operation that failed: what was done, and the runner's typed error (its class
/// follows the type: a driver error or a refusal is `device_runtime`, a request refused before
/// any driver call is `usage`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{op}: {error}")]
pub struct DeviceError {
    op: String,
    error: RunError,
}

impl DeviceError {
    fn new(op: impl Into<String>, error: RunError) -> Self {
        Self { op: op.into(), error }
    }

    /// The operation (`launch vector_add`, `copy in`, ...).
    pub fn op(&self) -> &str {
        &self.op
    }

    /// The runner's error.
    pub fn error(&self) -> &RunError {
        &self.error
    }

    /// The same error described as `op` (e.g. `launch 2 (vector_add n=64)`).
    pub fn described_as(mut self, op: impl Into<String>) -> Self {
        self.op = op.into();
        self
    }
}

impl From<DeviceError> for CaseFailure {
    fn from(e: DeviceError) -> Self {
        CaseFailure::from_run_error(&e.error, &e.op)
    }
}

/// The case context (see the module docs).
pub struct CaseCtx<'w> {
    worker: &'w mut ChipWorker,
    arch: Arch,
    timeouts: Timeouts,
    id: &'w str,
    seed: u64,
    kernels: &'w [String],
    crumb: Option<&'w crate::crumb::Breadcrumb>,
    rng: CaseRng,
    owned: Vec<BufferId>,
    host: Option<FixtureData>,
    device: Option<FixtureData>,
}

impl std::fmt::Debug for CaseCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaseCtx")
            .field("case", &self.id)
            .field("arch", &self.arch)
            .field("device", &self.worker.device())
            .finish_non_exhaustive()
    }
}

/// What a context is made of (the executor builds it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CtxParts<'w> {
    pub(crate) arch: Arch,
    pub(crate) timeouts: Timeouts,
    pub(crate) id: &'w str,
    pub(crate) seed: u64,
    pub(crate) kernels: &'w [String],
    pub(crate) crumb: Option<&'w crate::crumb::Breadcrumb>,
}

impl<'w> CaseCtx<'w> {
    pub(crate) fn new(worker: &'w mut ChipWorker, parts: CtxParts<'w>) -> Self {
        Self {
            worker,
            arch: parts.arch,
            timeouts: parts.timeouts,
            id: parts.id,
            seed: parts.seed,
            kernels: parts.kernels,
            crumb: parts.crumb,
            rng: CaseRng::seed_from_u64(parts.seed),
            owned: Vec::new(),
            host: None,
            device: None,
        }
    }

    pub(crate) fn with_fixture(mut self, host: Option<FixtureData>, device: Option<FixtureData>) -> Self {
        self.host = host;
        self.device = device;
        self
    }

    /// The buffers this context allocated that it did not free (the executor frees a body's
    /// after it; a device fixture's stay with the worker).
    pub(crate) fn take_owned(&mut self) -> Vec<BufferId> {
        std::mem::take(&mut self.owned)
    }

    /// The run's arch.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The card the body runs on.
    pub fn device(&self) -> DeviceId {
        self.worker.device()
    }

    /// Tells the lane's breadcrumb that the case makes `n` launches (a hung case's diagnosis
    /// then says `launch K of N`).
    pub(crate) fn plan_launches(&self, n: usize) {
        if let Some(c) = self.crumb {
            c.plan_launches(u64::try_from(n).unwrap_or(u64::MAX));
        }
    }

    /// `Class::case`.
    pub fn case_id(&self) -> &str {
        self.id
    }

    /// The case's fixed seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The case's RNG, seeded with its seed (the same values in every attempt).
    pub fn rng(&mut self) -> &mut CaseRng {
        &mut self.rng
    }

    /// `n` values uniform in `[lo, hi)` from the case's RNG.
    pub fn random_f32s(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        use rand::Rng;
        (0..n).map(|_| self.rng.gen_range(lo..hi)).collect()
    }

    /// The device runners' timeouts (scheduler, op-execute, stream-sync).
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// The class fixture's host data.
    pub fn fixture<T: std::any::Any + Send + Sync>(&self) -> Result<Arc<T>, CaseFailure> {
        downcast(self.host.clone(), "fixture", self.id)
    }

    /// The class fixture's device resources on this worker.
    pub fn device_fixture<D: std::any::Any + Send + Sync>(&self) -> Result<Arc<D>, CaseFailure> {
        downcast(self.device.clone(), "device fixture", self.id)
    }

    /// Allocates a zeroed device buffer of `bytes` (at least 1).
    pub fn alloc(&mut self, bytes: usize) -> Result<DeviceBuffer, DeviceError> {
        let id = self
            .worker
            .alloc_buffer(bytes)
            .map_err(|e| DeviceError::new(format!("alloc {bytes} bytes"), e))?;
        self.owned.push(id);
        Ok(DeviceBuffer { id, bytes })
    }

    /// Allocates a zeroed buffer of `n` `f32`s.
    pub fn alloc_f32(&mut self, n: usize) -> Result<DeviceBuffer, DeviceError> {
        self.alloc(n * 4)
    }

    /// Allocates a buffer holding `bytes`.
    pub fn upload(&mut self, bytes: &[u8]) -> Result<DeviceBuffer, DeviceError> {
        let buf = self.alloc(bytes.len())?;
        self.copy_in(buf, bytes)?;
        Ok(buf)
    }

    /// Allocates a buffer holding `values`.
    pub fn upload_f32(&mut self, values: &[f32]) -> Result<DeviceBuffer, DeviceError> {
        self.upload(&f32s_to_bytes(values))
    }

    /// Frees a buffer.
    pub fn free(&mut self, buf: DeviceBuffer) -> Result<(), DeviceError> {
        self.worker
            .free_buffer(buf.id)
            .map_err(|e| DeviceError::new("free", e))?;
        self.owned.retain(|b| *b != buf.id);
        Ok(())
    }

    /// Copies `bytes` to the start of `buf`.
    pub fn copy_in(&mut self, buf: DeviceBuffer, bytes: &[u8]) -> Result<(), DeviceError> {
        self.worker
            .write_buffer(buf.id, 0, bytes)
            .map_err(|e| DeviceError::new("copy in", e))
    }

    /// Copies `values` to the start of `buf`.
    pub fn copy_in_f32(&mut self, buf: DeviceBuffer, values: &[f32]) -> Result<(), DeviceError> {
        self.copy_in(buf, &f32s_to_bytes(values))
    }

    /// Copies all of `buf` back.
    pub fn copy_out(&mut self, buf: DeviceBuffer) -> Result<Vec<u8>, DeviceError> {
        self.worker
            .read_buffer(buf.id, 0, buf.bytes)
            .map_err(|e| DeviceError::new("copy out", e))
    }

    /// Copies all of `buf` back as `f32`s (its size must be a multiple of 4).
    pub fn copy_out_f32(&mut self, buf: DeviceBuffer) -> Result<Vec<f32>, DeviceError> {
        let bytes = self.copy_out(buf)?;
        bytes_to_f32s(&bytes).map_err(|_| {
            DeviceError::new(
                "copy out f32s",
                RunError::Usage(UsageError::BufferRange {
                    buffer: buf.id,
                    offset: 0,
                    len: bytes.len(),
                    size: buf.bytes,
                }),
            )
        })
    }

    /// Copies the first `bytes` bytes of `src` to `dst` on the device with the card's SDMA engine,
    /// and waits for it (the stream-sync timeout bounds it). Only on a worker of a runtime created
    /// with the SDMA option (`Runtime::sdma`); otherwise a usage error naming it.
    pub fn sdma_copy(
        &mut self,
        dst: DeviceBuffer,
        src: DeviceBuffer,
        bytes: usize,
    ) -> Result<(), DeviceError> {
        self.worker
            .sdma_copy(dst.id, src.id, bytes)
            .map_err(|e| DeviceError::new(format!("SDMA copy {bytes} bytes"), e))
    }

    /// Launches `kernel` (one of the case's kernels) with `block_dim` blocks and `args`, and
    /// waits for it (the AICPU and AICore streams, each bounded by the stream-sync timeout).
    pub fn launch(&mut self, kernel: &str, block_dim: u32, args: &[Arg]) -> Result<(), DeviceError> {
        let op = format!("launch {kernel}");
        if !self.kernels.iter().any(|k| k == kernel) {
            return Err(DeviceError::new(
                format!(
                    "{op}: not among the case's kernels {:?} (every kernel a case launches is \
                     declared with it)",
                    self.kernels
                ),
                RunError::Usage(UsageError::UnknownKernel(kernel.to_owned())),
            ));
        }
        let args = args
            .iter()
            .map(|a| match *a {
                Arg::In(b) => RunArg::BufferIn(b.id),
                Arg::Out(b) => RunArg::BufferOut(b.id),
                Arg::Scalar(v) => RunArg::Scalar(v),
            })
            .collect();
        self.worker
            .run(&RunRequest::new(kernel, block_dim, args))
            .map(|_| ())
            .map_err(|e| DeviceError::new(op, e))
    }

    /// Checks `got` against `want` (`|got - want| <= atol + rtol * |want|` for every value): a
    /// mismatch is a `result` failure with the same report as a golden mismatch.
    pub fn assert_close(&self, got: &[f32], want: &[f32], rtol: f32, atol: f32) -> Result<(), CaseFailure> {
        allclose(got, want, rtol, atol).map_err(CaseFailure::from)
    }
}

fn downcast<T: std::any::Any + Send + Sync>(
    data: Option<FixtureData>,
    what: &str,
    id: &str,
) -> Result<Arc<T>, CaseFailure> {
    let data = data
        .ok_or_else(|| CaseFailure::usage(format!("case {id:?} has no {what} (its class declares none)")))?;
    data.downcast::<T>().map_err(|_| {
        CaseFailure::usage(format!(
            "the {what} of case {id:?} is not a {}",
            std::any::type_name::<T>()
        ))
    })
}
