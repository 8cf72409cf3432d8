//! `SimDriver`: one process's driver state on the simulated cards, implementing [`Driver`].
//!
//! This file owns the rules of each driver call: which card and context a call acts on, what it
//! checks first (range, another process's force reset, the sticky error), and when a fault of the
//! plan fires (launch counting, force-reset and probe counting, `dead`, `init_delay_ms` at an
//! init only, `drain=false_negative`, and `poison_after` armed at its launch and raised at the
//! context's next call that starts new work). Streams run ops (`stream.rs`), AICore threads run kernels
//! (`aicore.rs`), card files hold what processes share (`card_file.rs`). No driver lock is held
//! while a call waits (sync, drain, init delay, stall).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

pub use super::current::CurrentDevice;
use std::time::Duration;

use super::aicore::{AicoreOp, OpMode};
use super::card_file::CardFile;
use super::config::SimConfig;
use super::context::{card_file_error, Context, Registered};
use super::host_faults::{crash_now, sim_stall_forever};
use super::launch::{count_launch, fate, resolve_args, Fate};
use super::memory::DeviceBuffer;
use super::plan::Fault;
use super::stats::{SimStats, StatCounters};
use super::stream::{Op, StreamShared, SyncOutcome};
use crate::driver::{
    AicpuTask, DeviceId, DevicePtr, Driver, DriverCall, DriverInfo, DriverKind, DriverResult, KernelArg,
    KernelHandle, LaunchOrigin, RegisterWindow, SdmaOrigin, Stream, StreamFailureMode,
};
use crate::error::{codes, Code, DriverError};
use crate::kernel::KernelBlob;
use crate::lease::DeviceLease;
use crate::visible::{PhysicalId, VisibleDevices};

/// Bytes of device memory a kernel registration takes (its registration buffer).
const REGISTRATION_BYTES: usize = 4096;
/// Where the simulated register windows start (a fake address, never dereferenced).
const REGISTER_BASE: u64 = 0x7a00_0000_0000;

/// One process's view of the simulated cards. See the module docs; the card rules are in DESIGN
/// section 4. Create one per simulated process: two values in one process behave as two processes.
/// Its current device is kept per value unless built [`SimDriver::with_current_device`]
/// [`CurrentDevice::PerThread`].
#[derive(Debug)]
pub struct SimDriver {
    pub(super) cfg: SimConfig,
    pub(super) inner: Mutex<Inner>,
    pub(super) stats: Arc<StatCounters>,
    next_handle: AtomicU64,
    pub(super) initialized: AtomicBool,
    scope: CurrentDevice,
    /// The process's `ASCEND_RT_VISIBLE_DEVICES`: ACL calls take logical ids, HAL calls, card
    /// files and contexts the physical ones.
    visible: VisibleDevices,
}

#[derive(Debug, Default)]
pub(super) struct Inner {
    /// The current device (physical), per [`CurrentDevice::key`].
    current: HashMap<Option<ThreadId>, PhysicalId>,
    pub(super) contexts: HashMap<PhysicalId, Context>,
}

pub(super) fn fail<T>(call: DriverCall, code: Code) -> DriverResult<T> {
    Err(DriverError::new(call, code))
}

impl SimDriver {
    /// A driver with no context yet (a fresh process).
    pub fn new(cfg: SimConfig) -> Self {
        Self {
            cfg,
            inner: Mutex::new(Inner::default()),
            stats: Arc::default(),
            next_handle: AtomicU64::new(1),
            initialized: AtomicBool::new(false),
            scope: CurrentDevice::PerValue,
            visible: VisibleDevices::identity(),
        }
    }

    /// The same driver seeing the cards through `visible` (the process's map).
    pub fn with_visible(mut self, visible: VisibleDevices) -> Self {
        self.visible = visible;
        self
    }

    /// The same driver keeping its current device as `scope` says.
    pub fn with_current_device(mut self, scope: CurrentDevice) -> Self {
        self.scope = scope;
        self
    }

    /// The driver's counters so far, and the device allocations live in its contexts now.
    pub fn stats(&self) -> SimStats {
        let mut stats = self.stats.snapshot();
        stats.live_allocations = self.lock().contexts.values().map(|c| c.memory.len() as u64).sum();
        stats
    }

    /// The process's map it sees the cards through.
    pub fn visible(&self) -> &VisibleDevices {
        &self.visible
    }

    /// The settings it runs with.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// The sticky error of this process's context on physical `card`, when it has a poisoned one.
    pub fn sticky_error(&self, card: PhysicalId) -> Option<Code> {
        self.lock().contexts.get(&card).and_then(|c| c.sticky.get())
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn handle(&self) -> u64 {
        self.next_handle.fetch_add(1, Ordering::Relaxed)
    }

    /// The physical card of the logical id an ACL call took, or the code of an invisible one.
    pub(super) fn physical(&self, call: DriverCall, logical: DeviceId) -> DriverResult<PhysicalId> {
        let card = self
            .visible
            .physical(logical)
            .ok_or(DriverError::new(call, codes::INVALID_DEVICEID))?;
        self.check_range(call, card).map(|()| card)
    }

    fn check_range(&self, call: DriverCall, card: PhysicalId) -> DriverResult<()> {
        if card < self.cfg.cards {
            Ok(())
        } else {
            tracing::debug!(%call, card, cards = self.cfg.cards, "no such simulated card");
            fail(call, codes::INVALID_DEVICEID)
        }
    }

    /// Runs `f` on the current context after the generation check.
    pub(super) fn with_current<T>(
        &self,
        call: DriverCall,
        f: impl FnOnce(&mut Context) -> DriverResult<T>,
    ) -> DriverResult<T> {
        self.stats.call(call);
        let mut inner = self.lock();
        let ctx = current(&mut inner, self.scope, call)?;
        ctx.check_generation(call)?;
        f(ctx)
    }

    /// Like [`Self::with_current`], refusing the call on a sticky context first.
    pub(super) fn with_healthy<T>(
        &self,
        call: DriverCall,
        f: impl FnOnce(&mut Context) -> DriverResult<T>,
    ) -> DriverResult<T> {
        self.with_current(call, |ctx| {
            ctx.raise_pending(call, false)?;
            ctx.refuse_if_sticky(call)?;
            f(ctx)
        })
    }

    /// The HAL calls: act on `device` whether or not it is current; a context there must be healthy.
    /// Returns the physical card (the trait's HAL calls take the logical id, as the arch crates
    /// hold it; a real driver translates it, see `visible.rs`).
    fn hal(&self, call: DriverCall, device: DeviceId) -> DriverResult<PhysicalId> {
        self.stats.call(call);
        let device = self.physical(call, device)?;
        let mut inner = self.lock();
        if let Some(ctx) = inner.contexts.get_mut(&device) {
            ctx.check_generation(call)?;
            ctx.raise_pending(call, false)?;
            ctx.refuse_if_sticky(call)?;
        }
        Ok(device)
    }
}

fn current(inner: &mut Inner, scope: CurrentDevice, call: DriverCall) -> DriverResult<&mut Context> {
    let Some(&card) = inner.current.get(&scope.key()) else {
        return fail(call, codes::RT_CONTEXT_NULL);
    };
    inner
        .contexts
        .get_mut(&card)
        .ok_or(DriverError::new(call, codes::RT_CONTEXT_NULL))
}

impl Driver for SimDriver {
    fn info(&self) -> DriverInfo {
        DriverInfo {
            kind: DriverKind::Sim,
            library: None,
        }
    }

    fn init(&self) -> DriverResult<()> {
        self.stats.call(DriverCall::Init);
        if self.initialized.swap(true, Ordering::Relaxed) {
            return fail(DriverCall::Init, codes::REPEAT_INITIALIZE);
        }
        Ok(())
    }

    fn set_device(&self, device: DeviceId) -> DriverResult<()> {
        let call = DriverCall::SetDevice;
        self.stats.call(call);
        let device = self.physical(call, device)?;
        let mut file = CardFile::open(&self.cfg, device).map_err(|e| card_file_error(call, &e))?;
        let state = file.read().map_err(|e| card_file_error(call, &e))?;
        if state.has(|f| *f == Fault::Dead) {
            tracing::warn!(card = device, "sim fault dead: set_device fails");
            return fail(call, codes::RT_DEV_SETUP_ERROR);
        }
        // An init: the first set-device of a context, or the first after a reset tore it down.
        // Only an init pays the plan's `init_delay_ms`, slept without the driver lock.
        let init = !matches!(self.lock().contexts.get(&device), Some(ctx) if !ctx.torn_down);
        if init {
            self.stats.init();
            let delay = state.init_delay_ms();
            if delay > 0 {
                tracing::info!(
                    card = device,
                    delay_ms = delay,
                    "sim fault init_delay_ms: slow init"
                );
                self.stats.init_delay();
                std::thread::sleep(Duration::from_millis(delay));
            }
        }
        let mut inner = self.lock();
        match inner.contexts.get_mut(&device) {
            Some(ctx) => {
                ctx.check_generation(call)?;
                ctx.torn_down = false;
            }
            None => {
                let ctx = Context::open(device, file, self.cfg.timeouts.op_execute, self.cfg.card_memory)?;
                inner.contexts.insert(device, ctx);
            }
        }
        inner.current.insert(self.scope.key(), device);
        Ok(())
    }

    fn reset_device(&self, device: DeviceId) -> DriverResult<()> {
        let call = DriverCall::ResetDevice;
        self.stats.call(call);
        let device = self.physical(call, device)?;
        let mut inner = self.lock();
        let Some(ctx) = inner.contexts.get_mut(&device) else {
            return Ok(());
        };
        // A context released by another process's force reset is still torn down here.
        let released = ctx.check_generation(call);
        ctx.teardown();
        if let Some(cause) = ctx.sticky.get() {
            tracing::info!(card = device, %cause, "soft reset: the sticky error survives");
        }
        released
    }

    fn reset_device_force(&self, lease: &DeviceLease) -> DriverResult<()> {
        self.force_reset(lease)
    }

    fn set_op_execute_timeout(&self, timeout_us: u64) -> DriverResult<()> {
        let call = DriverCall::SetOpExecuteTimeout;
        self.with_healthy(call, |ctx| {
            if timeout_us == 0 {
                return fail(call, codes::INVALID_PARAM);
            }
            ctx.op_timeout = Duration::from_micros(timeout_us);
            Ok(())
        })
    }

    fn create_stream(&self) -> DriverResult<Stream> {
        let call = DriverCall::CreateStream;
        self.with_healthy(call, |ctx| {
            let id = self.handle();
            let stream =
                StreamShared::spawn(id, Arc::clone(&ctx.sticky), Arc::clone(&self.stats)).map_err(|e| {
                    tracing::error!(error = %e, "cannot start a simulated stream's worker thread");
                    DriverError::new(call, codes::RT_DRV_INTERNAL_ERROR)
                })?;
            ctx.streams.insert(id, stream);
            Ok(Stream(id))
        })
    }

    fn set_stream_failure_mode(&self, stream: Stream, mode: StreamFailureMode) -> DriverResult<()> {
        self.stream_failure_mode(stream, mode)
    }

    fn destroy_stream_force(&self, stream: Stream) -> DriverResult<()> {
        self.destroy_forced(stream)
    }

    fn sdma_copy(
        &self,
        stream: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        origin: SdmaOrigin,
    ) -> DriverResult<()> {
        self.sdma(stream, dst, src, bytes, origin)
    }

    fn finalize(&self) -> DriverResult<()> {
        self.acl_finalize()
    }

    fn destroy_stream(&self, stream: Stream) -> DriverResult<()> {
        let call = DriverCall::DestroyStream;
        self.with_current(call, |ctx| {
            let s = ctx.stream(call, stream)?;
            if s.has_pending() {
                tracing::warn!(stream = stream.0, "destroying a stream with pending work");
                return fail(call, codes::RT_STREAM_NOT_COMPLETE);
            }
            s.cancel();
            ctx.streams.remove(&stream.0);
            ctx.stream_modes.remove(&stream.0);
            Ok(())
        })
    }

    fn synchronize_stream_with_timeout(&self, stream: Stream, timeout_ms: u32) -> DriverResult<()> {
        let call = DriverCall::SynchronizeStreamWithTimeout;
        let s = self.with_current(call, |ctx| ctx.stream(call, stream))?;
        match s.sync(Duration::from_millis(u64::from(timeout_ms))) {
            SyncOutcome::Done => Ok(()),
            SyncOutcome::Failed(code) => fail(call, code),
            SyncOutcome::ErrorState => {
                self.stats.error_state_sync();
                tracing::warn!(
                    stream = stream.0,
                    timeout_ms,
                    "sync of a stream already in error state"
                );
                fail(call, codes::RT_AICPU_EXCEPTION)
            }
            SyncOutcome::TimedOut => fail(call, codes::RT_STREAM_SYNC_TIMEOUT),
        }
    }

    fn synchronize_device_with_timeout(&self, timeout_ms: u32) -> DriverResult<()> {
        let call = DriverCall::SynchronizeDeviceWithTimeout;
        let (streams, sticky, false_negative, card) = self.with_current(call, |ctx| {
            let streams: Vec<_> = ctx
                .streams
                .values()
                .map(|s| (Arc::clone(s), s.submitted()))
                .collect();
            let fn_plan = ctx.card_state(call)?.has(|f| *f == Fault::DrainFalseNegative);
            Ok((streams, Arc::clone(&ctx.sticky), fn_plan, ctx.card))
        })?;
        // Each stream's wait counts only its work's stalled time since the drain started (the
        // stream sync's rule), so a drain times out once any stream has stalled that long.
        let budget = Duration::from_millis(u64::from(timeout_ms));
        let meters: Vec<_> = streams.iter().map(|(s, upto)| s.meter(*upto)).collect();
        let drained = streams
            .iter()
            .zip(&meters)
            .all(|((s, upto), meter)| s.wait_for(*upto, budget, meter));
        if let Some(cause) = sticky.get() {
            if false_negative {
                tracing::warn!(
                    card,
                    %cause,
                    "sim fault drain=false_negative: drain reports success on a poisoned context"
                );
                return Ok(());
            }
            return fail(call, self.cfg.arch.drain_error_code());
        }
        if drained {
            Ok(())
        } else {
            fail(call, codes::RT_STREAM_SYNC_TIMEOUT)
        }
    }

    fn malloc(&self, size: usize) -> DriverResult<DevicePtr> {
        let call = DriverCall::Malloc;
        self.with_healthy(call, |ctx| {
            if size == 0 {
                return fail(call, codes::INVALID_PARAM);
            }
            match ctx.memory.alloc(size) {
                Ok(buf) => Ok(DevicePtr(buf.addr())),
                Err(e) => {
                    tracing::warn!(card = ctx.card, size, reason = ?e, "device allocation refused");
                    fail(call, codes::RT_MEMORY_ALLOCATION)
                }
            }
        })
    }

    fn free(&self, ptr: DevicePtr) -> DriverResult<()> {
        let call = DriverCall::Free;
        self.with_current(call, |ctx| {
            if ctx.memory.free(ptr) {
                Ok(())
            } else {
                fail(call, codes::INVALID_PARAM)
            }
        })
    }

    fn memcpy_to_device(&self, dst: DevicePtr, src: &[u8]) -> DriverResult<()> {
        let call = DriverCall::MemcpyToDevice;
        self.with_healthy(call, |ctx| match ctx.memory.find(dst) {
            Some((buf, offset)) if buf.write(offset, src) => Ok(()),
            _ => fail(call, codes::INVALID_PARAM),
        })
    }

    fn memcpy_to_host(&self, dst: &mut [u8], src: DevicePtr) -> DriverResult<()> {
        let call = DriverCall::MemcpyToHost;
        self.with_healthy(call, |ctx| match ctx.memory.find(src) {
            Some((buf, offset)) if buf.read(offset, dst) => Ok(()),
            _ => fail(call, codes::INVALID_PARAM),
        })
    }

    fn register_kernel(&self, blob: &KernelBlob) -> DriverResult<KernelHandle> {
        let call = DriverCall::RegisterKernel;
        self.with_healthy(call, |ctx| {
            if !blob.is_host() {
                tracing::warn!(
                    kernel = %blob.meta().name,
                    path = %blob.path().display(),
                    "a device binary cannot run on the simulated card (it runs host blobs)"
                );
                return fail(call, codes::INVALID_PARAM);
            }
            if blob.meta().arch != self.cfg.arch.arch {
                tracing::warn!(
                    kernel = %blob.meta().name,
                    blob_arch = %blob.meta().arch,
                    arch = %self.cfg.arch,
                    "kernel blob of another arch"
                );
                return fail(call, codes::INVALID_PARAM);
            }
            let buffer = Arc::new(DeviceBuffer::new(REGISTRATION_BYTES));
            let id = self.handle();
            ctx.kernels.insert(id, Registered::new(blob.clone(), buffer));
            Ok(KernelHandle(id))
        })
    }

    fn launch_aicore(
        &self,
        stream: Stream,
        kernel: KernelHandle,
        block_dim: u32,
        args: &[KernelArg],
        origin: LaunchOrigin,
    ) -> DriverResult<()> {
        let call = DriverCall::LaunchAicore;
        self.stats.call(call);
        let mut inner = self.lock();
        let ctx = current(&mut inner, self.scope, call)?;
        ctx.check_generation(call)?;
        ctx.raise_pending(call, false)?;
        ctx.refuse_if_sticky(call)?;
        let s = ctx.stream(call, stream)?;
        let Some(reg) = ctx.kernels.get(&kernel.0) else {
            return fail(call, codes::INVALID_PARAM);
        };
        let blob = reg.blob.clone();
        if block_dim == 0 || block_dim > self.cfg.arch.max_block_dim() {
            tracing::warn!(block_dim, max = self.cfg.arch.max_block_dim(), "bad block dim");
            return fail(call, codes::INVALID_PARAM);
        }
        let args = resolve_args(ctx, args)?;
        let card = ctx.card;
        let (k, fault) = count_launch(ctx, origin)?;
        let mode = match fate(fault) {
            Fate::Queue(mode) => {
                if mode != OpMode::Normal {
                    tracing::warn!(
                        card,
                        launch = k,
                        kernel = %blob.meta().name,
                        ?mode,
                        "sim launch fault fires"
                    );
                }
                mode
            }
            Fate::Fail(code) => {
                tracing::warn!(card, launch = k, %code, "sim fault launch_fail");
                ctx.sticky.poison(code);
                return fail(call, code);
            }
            Fate::QueueThenPoison => {
                tracing::warn!(
                    card,
                    launch = k,
                    kernel = %blob.meta().name,
                    "sim fault poison_after fires: the launch runs; the context turns sticky after it"
                );
                ctx.arm_poison(codes::RT_AICPU_EXCEPTION);
                OpMode::Normal
            }
            Fate::Crash => {
                drop(inner);
                crash_now(card, k)
            }
            Fate::Stall => {
                drop(inner);
                sim_stall_forever(card, k)
            }
        };
        tracing::trace!(card, kernel = %blob.meta().name, block_dim, ?origin, "aicore launch queued");
        s.submit(Op::Aicore(Box::new(AicoreOp {
            blob,
            block_dim,
            args: args.raw,
            arg_bytes: args.bytes,
            _buffers: args.buffers,
            first_output: args.first_output,
            mode,
            op_timeout: ctx.op_timeout,
            arch: self.cfg.arch,
        })));
        self.stats.aicore_launch();
        Ok(())
    }

    fn launch_aicpu(&self, stream: Stream, task: AicpuTask) -> DriverResult<()> {
        let call = DriverCall::LaunchAicpu;
        self.with_healthy(call, |ctx| {
            let s = ctx.stream(call, stream)?;
            let aicore = ctx.stream(call, task.aicore)?;
            let upto = aicore.submitted();
            s.submit(Op::Aicpu { aicore, upto });
            Ok(())
        })
    }

    fn hal_res_map(&self, device: DeviceId, core: u32) -> DriverResult<u64> {
        let call = DriverCall::HalResMap;
        let device = self.hal(call, device)?;
        if core >= self.cfg.arch.max_block_dim() {
            return fail(call, codes::INVALID_PARAM);
        }
        Ok(REGISTER_BASE + (u64::from(device) << 32) + u64::from(core) * 0x10_0000)
    }

    fn hal_mem_ctl(&self, device: DeviceId) -> DriverResult<RegisterWindow> {
        let device = self.hal(DriverCall::HalMemCtl, device)?;
        Ok(RegisterWindow {
            base: REGISTER_BASE + (u64::from(device) << 32),
            core_mask: self.cfg.effective_core_mask(),
        })
    }
}
