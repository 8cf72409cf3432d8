//! The `Driver` trait: the narrow slice of the CANN runtime that the device runners call.
//!
//! # Contract
//!
//! A `Driver` value is one process's view of the driver: it owns that process's per-card contexts
//! (in CANN, the process-wide runtime state; in the simulator, a [`crate::sim::SimDriver`]).
//! Every method is one driver call, named after it, and returns `Result<_, DriverError>` whose
//! error names the call ([`DriverCall`]) and carries the raw code.
//!
//! Calls other than [`Driver::set_device`], [`Driver::reset_device`],
//! [`Driver::reset_device_force`] and the HAL calls act on the *current* device, which
//! `set_device` selects (CANN keeps it per thread; the simulator per `Driver` value). Callers run a
//! card's work from one thread.
//!
//! What the caller must do, and what the driver never does for it:
//! - Launches are asynchronous: a launch that returns `Ok` has only been queued; its failure
//!   surfaces at the next stream sync. The caller bounds every sync with a timeout.
//! - After any launch or sync error the context may be sticky-errored: every later call in this
//!   process may fail with confusing codes (507899, rc 62). The driver does not hide this; the
//!   device runner's guard does.
//! - Synchronising a stream that is already in error state blocks until its timeout: teardown must
//!   destroy such streams without syncing them.
//! - [`Driver::reset_device_force`] takes the card's [`DeviceLease`]: it is destructive to anything
//!   else on the physical card, so only the exclusive holder may call it.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::call::DriverCall;
use crate::error::DriverError;
use crate::kernel::KernelBlob;
use crate::lease::DeviceLease;

pub use crate::device_id::DeviceId;

/// Result of a driver call.
pub type DriverResult<T> = Result<T, DriverError>;

/// A stream handle (opaque to callers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stream(pub u64);

/// A device address (opaque to callers; the simulator hands out host addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DevicePtr(pub u64);

/// A registered kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelHandle(pub u64);

/// One kernel argument. The role tells the driver which buffers a kernel writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelArg {
    /// A buffer the kernel reads.
    Input(DevicePtr),
    /// A buffer the kernel writes.
    Output(DevicePtr),
    /// A scalar passed by value.
    Scalar(u64),
}

/// Why a kernel is launched. Fault plans count only [`LaunchOrigin::Case`] launches; probes and
/// internal kernels never move a plan's counter. Real CANN ignores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchOrigin {
    /// A test case's kernel.
    Case,
    /// A post-reset probe or another internal kernel.
    Internal,
}

/// The AICPU scheduler task: it waits for the work queued on `aicore` (the paired AICore stream)
/// and reports that work's failure on its own stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AicpuTask {
    /// The AICore stream whose work this task schedules.
    pub aicore: Stream,
}

/// What a stream does after one of its tasks fails (`aclrtSetStreamFailureMode`; the raw values
/// are `ACL_CONTINUE_ON_FAILURE` and `ACL_STOP_ON_FAILURE` of `acl/acl_rt.h`). A new stream
/// continues on failure until told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamFailureMode {
    /// `ACL_CONTINUE_ON_FAILURE` (0), the runtime's default.
    #[default]
    ContinueOnFailure,
    /// `ACL_STOP_ON_FAILURE` (1): the stream stops at its first failed task, so the host sees
    /// the failure at its next sync. cardguard's driver sets it on every stream it creates, as
    /// upstream does on an SDMA worker's run stream (hw-native-sys/simpler
    /// `src/a2a3/platform/onboard/host/device_runner.cpp`, `create_run_stream`).
    StopOnFailure,
}

impl StreamFailureMode {
    /// The raw `uint64_t` mode of the C call.
    pub fn raw(self) -> u64 {
        match self {
            Self::ContinueOnFailure => 0,
            Self::StopOnFailure => 1,
        }
    }

    /// The mode of a raw value; `None` for a value the runtime does not define.
    pub fn from_raw(raw: u64) -> Option<Self> {
        match raw {
            0 => Some(Self::ContinueOnFailure),
            1 => Some(Self::StopOnFailure),
            _ => None,
        }
    }
}

/// Why an SDMA copy is made. Fault plans count only [`SdmaOrigin::Case`] copies for
/// `sdma_fault@K`; `sdma_warmup_fault` fires at a [`SdmaOrigin::Warmup`] copy. Real CANN ignores
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SdmaOrigin {
    /// A test case's device-side copy.
    Case,
    /// The SDMA warm-up a worker makes at init, right after it provisions SDMA.
    Warmup,
    /// The SDMA probe (a 64-byte copy) of a health check.
    Probe,
}

/// a2a3 register window from `halMemCtl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterWindow {
    /// Base address of the AICore register window.
    pub base: u64,
    /// Partial-good mask: bit `i` set when AICore `i` is usable.
    pub core_mask: u64,
}

/// Which implementation a driver is, and which library it loaded (for reports).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverInfo {
    /// `sim` or `acl`.
    pub kind: DriverKind,
    /// The files the driver loaded (`None` for the in-process simulator).
    pub library: Option<Vec<String>>,
}

/// The driver implementations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverKind {
    /// The in-process simulated card.
    Sim,
    /// The CANN runtime (or a library exporting its C ABI), loaded at run time.
    Acl,
}

/// The driver calls the device runners make. See the module docs for the contract.
pub trait Driver: Send + Sync + fmt::Debug {
    /// Which implementation this is.
    fn info(&self) -> DriverInfo;

    /// `aclInit`. A second call may return 100002, which callers treat as success.
    fn init(&self) -> DriverResult<()>;

    /// `aclrtSetDevice`: open (or reuse) this process's context on `device` and make it current.
    fn set_device(&self, device: DeviceId) -> DriverResult<()>;

    /// `aclrtResetDevice`: soft reset; tears down this process's streams and memory on `device`.
    /// A sticky error survives it.
    fn reset_device(&self, device: DeviceId) -> DriverResult<()>;

    /// `aclrtResetDeviceForce` on the lease's card: clears a sticky error in place. Destructive
    /// to every other context on the card, hence the lease.
    fn reset_device_force(&self, lease: &DeviceLease) -> DriverResult<()>;

    /// `aclrtSetOpExecuteTimeOutV2` for the current context (the V1 call, in whole seconds
    /// rounded up, where the library has no V2).
    fn set_op_execute_timeout(&self, timeout_us: u64) -> DriverResult<()>;

    /// `aclrtCreateStream`.
    fn create_stream(&self) -> DriverResult<Stream>;

    /// `aclrtSetStreamFailureMode` on a stream of the current context. The driver's own callers
    /// set [`StreamFailureMode::StopOnFailure`] on every stream they create.
    fn set_stream_failure_mode(&self, stream: Stream, mode: StreamFailureMode) -> DriverResult<()>;

    /// `aclrtDestroyStreamForce`: destroys the stream without waiting for its unfinished tasks
    /// (hicann/runtime `docs/api_docs/aclrtDestroyStreamForce.md`), the documented way to drop a
    /// stream that cannot be synchronised.
    fn destroy_stream_force(&self, stream: Stream) -> DriverResult<()>;

    /// A device-to-device SDMA copy of `bytes` bytes from `src` to `dst`, queued on `stream`
    /// (`aclrtMemcpyAsync` with `ACL_MEMCPY_DEVICE_TO_DEVICE`: the runtime runs it on the card's
    /// SDMA engine). Asynchronous like a launch: its failure surfaces at the stream's next sync.
    /// The simulator provisions the context's CP-process stream set at its first SDMA copy.
    fn sdma_copy(
        &self,
        stream: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        origin: SdmaOrigin,
    ) -> DriverResult<()>;

    /// `aclFinalize`: releases the process's ACL state. After an unconfirmed force reset of an
    /// SDMA-provisioned card it walks the poisoned streams into the remote-event timeout
    /// (hw-native-sys/simpler `device_runner.cpp`, `finalize`): call it only after a confirmed
    /// reset.
    fn finalize(&self) -> DriverResult<()>;

    /// The op-execute timeout, in microseconds, the runtime applies for `requested_us` (what
    /// [`Driver::set_op_execute_timeout`] really set). The simulator applies what it is asked.
    fn applied_op_execute_us(&self, requested_us: u64) -> u64 {
        requested_us
    }

    /// `aclrtDestroyStream`. Fails with 507004 (`ACL_ERROR_RT_STREAM_NOT_COMPLETE`) when the stream
    /// still has pending work.
    fn destroy_stream(&self, stream: Stream) -> DriverResult<()>;

    /// `aclrtSynchronizeStreamWithTimeout`.
    fn synchronize_stream_with_timeout(&self, stream: Stream, timeout_ms: u32) -> DriverResult<()>;

    /// `aclrtSynchronizeDeviceWithTimeout`: the bounded device drain. Its success is not proof of
    /// health (a2a3 false negatives).
    fn synchronize_device_with_timeout(&self, timeout_ms: u32) -> DriverResult<()>;

    /// `aclrtMalloc`.
    fn malloc(&self, size: usize) -> DriverResult<DevicePtr>;

    /// `aclrtFree`.
    fn free(&self, ptr: DevicePtr) -> DriverResult<()>;

    /// `aclrtMemcpy` host to device; `src` must fit in the allocation at `dst`.
    fn memcpy_to_device(&self, dst: DevicePtr, src: &[u8]) -> DriverResult<()>;

    /// `aclrtMemcpy` device to host; fills `dst` from the allocation at `src`.
    fn memcpy_to_host(&self, dst: &mut [u8], src: DevicePtr) -> DriverResult<()>;

    /// Register a kernel blob with the current context (allocates its registration buffer).
    fn register_kernel(&self, blob: &KernelBlob) -> DriverResult<KernelHandle>;

    /// Queue `kernel` on the AICore `stream` with `block_dim` blocks.
    fn launch_aicore(
        &self,
        stream: Stream,
        kernel: KernelHandle,
        block_dim: u32,
        args: &[KernelArg],
        origin: LaunchOrigin,
    ) -> DriverResult<()>;

    /// Queue the AICPU scheduler task on the AICPU `stream`.
    fn launch_aicpu(&self, stream: Stream, task: AicpuTask) -> DriverResult<()>;

    /// `halResMap` of AICore `core`'s registers on `device` (a5). Returns the mapped address.
    /// `device` is the logical id the ACL calls take; the driver hands the HAL the physical one
    /// under `ASCEND_RT_VISIBLE_DEVICES` (see [`crate::visible`]).
    fn hal_res_map(&self, device: DeviceId, core: u32) -> DriverResult<u64>;

    /// `halMemCtl` register window and partial-good mask of `device` (a2a3); `device` is logical,
    /// translated as for [`Driver::hal_res_map`].
    fn hal_mem_ctl(&self, device: DeviceId) -> DriverResult<RegisterWindow>;
}
