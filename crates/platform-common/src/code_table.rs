//! The table of every code cardguard classifies: its real name, where the fact comes from, its
//! [`CodeClass`], what it means and what an operator does about it.
//!
//! The runtime's codes are every code of CANN's `rt_error_codes.h` (hicann/runtime
//! `include/external/acl/error_codes/rt_error_codes.h`; the same file ships in the torch-npu wheel
//! as `torch_npu/include/acl/error_codes/rt_error_codes.h`, and the codes-table test of
//! `platform-common` parses that copy and fails for any code not classified here). Names and values
//! are facts of that header ([`CodeSource`] names it per row); the meanings and hints are
//! cardguard's own words. A few ACL codes come from `acl_base_rt.h` of the same wheel, the HAL
//! codes cardguard meets from hicann/runtime `pkg_inc/driver/ascend_hal_error.h`.
//!
//! This file owns the rows and the lookup. It never decides what the runner does with a class (the
//! runner's dispatcher and lane do) and never reads message text.

use serde::{Deserialize, Serialize};

/// Which numbering a raw code belongs to: the ACL/runtime space (`aclError`, `rtError_t`), the
/// HAL driver space (`drvError_t`, e.g. `halResMap` rc 62), or cardguard's own loader space (a
/// CANN symbol that could not be resolved at call time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeSpace {
    /// `aclError` / `rtError_t` codes (1xxxxx, 2xxxxx, 5xxxxx).
    Acl,
    /// HAL (`drvError_t`) return codes.
    Hal,
    /// cardguard's `acl` loader: the call never reached the library (its symbol is absent).
    Loader,
}

/// What a code says about where the fault is, and so what the runner does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeClass {
    /// The caller asked for something invalid (a bad parameter, a wrong order of calls): never
    /// retried, the card is fine.
    Usage,
    /// A device resource ran out (memory, streams, events, limits): the process's context is
    /// suspect (a leak), so it is treated as a device fault: force reset and retry.
    Resource,
    /// The device context is sticky-errored (a timeout, an exception, an abort): force reset and
    /// retry, as the seed investigation measured.
    Device,
    /// The card itself is damaged or unreachable (HBM ECC, device memory, a link, the heartbeat,
    /// the hdc channel): a force reset does not fix it. The card is quarantined at once ("needs
    /// service") until an operator clears it; the case is retried on another card.
    Hardware,
    /// cardguard's harness could not reach the driver (no device was involved).
    Harness,
}

impl CodeClass {
    /// The name as reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Usage => "usage",
            Self::Resource => "resource",
            Self::Device => "device",
            Self::Hardware => "hardware",
            Self::Harness => "harness",
        }
    }

    /// What an operator does about a code of this class, when its row has nothing more precise.
    pub const fn hint(self) -> &'static str {
        match self {
            Self::Usage => "a caller bug or bad input; not a device fault",
            Self::Resource => {
                "a device resource ran out; the runner force-resets the card and retries the case"
            }
            Self::Device => "the context is sticky: the runner force-resets the card and retries the case",
            Self::Hardware => {
                "the card needs service: it is quarantined until `cargo cardguard cards --clear N`"
            }
            Self::Harness => "the harness could not reach the driver; no card was involved",
        }
    }
}

/// The public source a row's name and value follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeSource {
    /// hicann/runtime `include/external/acl/error_codes/rt_error_codes.h` (the torch-npu wheel's
    /// `torch_npu/include/acl/error_codes/rt_error_codes.h`).
    RtErrorCodes,
    /// The torch-npu wheel's `torch_npu/include/acl/acl_base_rt.h`.
    AclBaseRt,
    /// hicann/runtime `pkg_inc/driver/ascend_hal_error.h` (`drvError_t`).
    HalError,
    /// cardguard's own loader codes (no CANN source: the call never reached CANN).
    Cardguard,
}

impl CodeSource {
    /// The repository and path, for people.
    pub fn citation(self) -> &'static str {
        match self {
            Self::RtErrorCodes => "hicann/runtime include/external/acl/error_codes/rt_error_codes.h",
            Self::AclBaseRt => "torch-npu wheel torch_npu/include/acl/acl_base_rt.h",
            Self::HalError => "hicann/runtime pkg_inc/driver/ascend_hal_error.h",
            Self::Cardguard => "cardguard (crates/platform-common/src/code_table.rs)",
        }
    }
}

/// One row of the code table.
#[derive(Debug)]
pub struct CodeInfo {
    /// The numbering.
    pub space: CodeSpace,
    /// The raw value.
    pub raw: i32,
    /// Symbolic name as its source spells it.
    pub name: &'static str,
    /// Where the name and value come from.
    pub source: CodeSource,
    /// What the runner does about it.
    pub class: CodeClass,
    /// What the code means where cardguard meets it (cardguard's words).
    pub meaning: &'static str,
    /// What an operator should do.
    pub hint: &'static str,
    /// A few words for people naming the fault (`HBM ECC`), shown after the code when the kind
    /// alone does not say it ([`crate::fault_kind`]).
    pub label: Option<&'static str>,
    /// The code says an op (a kernel or a task on the device) ran past its execution time: an
    /// op-timeout wherever it is met (the arch's own op-timeout code, met at a stream sync, is
    /// one too: [`crate::fault_kind`]).
    pub op_timeout: bool,
}

impl CodeInfo {
    /// The same row with a hint more precise than its class's.
    const fn hint(mut self, hint: &'static str) -> Self {
        self.hint = hint;
        self
    }

    /// The same row with a label for people.
    const fn label(mut self, label: &'static str) -> Self {
        self.label = Some(label);
        self
    }

    /// The same row marked as an op-timeout.
    const fn op_timeout(mut self) -> Self {
        self.op_timeout = true;
        self
    }
}

/// A row of `rt_error_codes.h`.
const fn rt(raw: i32, name: &'static str, class: CodeClass, meaning: &'static str) -> CodeInfo {
    CodeInfo {
        space: CodeSpace::Acl,
        raw,
        name,
        source: CodeSource::RtErrorCodes,
        class,
        meaning,
        hint: class.hint(),
        label: None,
        op_timeout: false,
    }
}

/// A row of another source.
const fn other(
    space: CodeSpace,
    source: CodeSource,
    raw: i32,
    name: &'static str,
    class: CodeClass,
    meaning: &'static str,
) -> CodeInfo {
    CodeInfo {
        space,
        raw,
        name,
        source,
        class,
        meaning,
        hint: class.hint(),
        label: None,
        op_timeout: false,
    }
}

/// The row of a code, when cardguard knows it.
pub fn lookup(space: CodeSpace, raw: i32) -> Option<&'static CodeInfo> {
    CODE_TABLE.iter().find(|c| c.space == space && c.raw == raw)
}

use CodeClass::{Device, Hardware, Harness, Resource, Usage};

/// Every code cardguard classifies: all of `rt_error_codes.h`, then the others it meets.
pub static CODE_TABLE: &[CodeInfo] = &[
    rt(107000, "ACL_ERROR_RT_PARAM_INVALID", Usage, "a parameter the runtime checks is invalid"),
    rt(107001, "ACL_ERROR_RT_INVALID_DEVICEID", Usage, "no such device id (after the visible-device map)"),
    rt(107002, "ACL_ERROR_RT_CONTEXT_NULL", Usage, "no current context: the call came before aclrtSetDevice"),
    rt(107003, "ACL_ERROR_RT_STREAM_CONTEXT", Usage, "the stream belongs to another context"),
    rt(107004, "ACL_ERROR_RT_MODEL_CONTEXT", Usage, "the model belongs to another context"),
    rt(107005, "ACL_ERROR_RT_STREAM_MODEL", Usage, "the stream is not part of the model"),
    rt(107006, "ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID", Usage, "an event timestamp cannot be read"),
    rt(107007, "ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL", Usage, "two event timestamps are in the wrong order"),
    rt(107008, "ACL_ERROR_RT_ADDR_UNALIGNED", Usage, "a memory address is not aligned as the call needs"),
    rt(107009, "ACL_ERROR_RT_FILE_OPEN", Usage, "a file could not be opened"),
    rt(107010, "ACL_ERROR_RT_FILE_WRITE", Usage, "a file could not be written"),
    rt(107011, "ACL_ERROR_RT_STREAM_SUBSCRIBE", Usage, "stream subscription failed"),
    rt(107012, "ACL_ERROR_RT_THREAD_SUBSCRIBE", Usage, "thread subscription failed"),
    rt(107013, "ACL_ERROR_RT_GROUP_NOT_SET", Usage, "no group was set"),
    rt(107014, "ACL_ERROR_RT_GROUP_NOT_CREATE", Usage, "the group was not created"),
    rt(107015, "ACL_ERROR_RT_STREAM_NO_CB_REG", Usage, "the stream has no callback registered"),
    rt(107016, "ACL_ERROR_RT_INVALID_MEMORY_TYPE", Usage, "the memory type is not valid here"),
    rt(107017, "ACL_ERROR_RT_INVALID_HANDLE", Usage, "the handle is not valid"),
    rt(107018, "ACL_ERROR_RT_INVALID_MALLOC_TYPE", Usage, "the allocation type is not valid"),
    rt(107019, "ACL_ERROR_RT_WAIT_TIMEOUT", Device, "a wait on the device timed out"),
    rt(107020, "ACL_ERROR_RT_TASK_TIMEOUT", Device, "a device task timed out").op_timeout(),
    rt(107021, "ACL_ERROR_RT_SYSPARAMOPT_NOT_SET", Usage, "a system parameter option was never set"),
    rt(107022, "ACL_ERROR_RT_DEVICE_TASK_ABORT", Device, "the device is aborting its tasks"),
    rt(107023, "ACL_ERROR_RT_STREAM_ABORT", Device, "the stream is aborting"),
    rt(107024, "ACL_ERROR_RT_CAPTURE_DEPENDENCY", Usage, "a captured dependency failed"),
    rt(107025, "ACL_ERROR_RT_STREAM_UNJOINED", Usage, "the capture model is invalid (stream not joined)"),
    rt(107026, "ACL_ERROR_RT_MODEL_CAPTURED", Usage, "the model is being captured"),
    rt(107027, "ACL_ERROR_RT_STREAM_CAPTURED", Usage, "the stream is being captured"),
    rt(107028, "ACL_ERROR_RT_EVENT_CAPTURED", Usage, "the event is being captured"),
    rt(107029, "ACL_ERROR_RT_STREAM_NOT_CAPTURED", Usage, "the stream is not capturing"),
    rt(107030, "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT", Usage, "the operation is not allowed while the stream captures"),
    rt(107031, "ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT", Usage, "an implicit dependency on the default stream is not allowed while capturing"),
    rt(107032, "ACL_ERROR_STREAM_CAPTURE_CONFLICT", Usage, "streams that depend on each other cannot start capturing together"),
    rt(107033, "ACL_ERROR_STREAM_TASK_GROUP_STATUS", Usage, "a task group is in the wrong state"),
    rt(107034, "ACL_ERROR_STREAM_TASK_GROUP_INTR", Usage, "a task group was interrupted"),
    rt(107035, "ACL_ERROR_RT_TASK_ABORT_STOP", Device, "the device stopped an aborting task before its post-processing"),
    rt(107036, "ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED", Usage, "the capture was not started on this stream"),
    rt(107037, "ACL_ERROR_RT_MODEL_RUNNING", Usage, "the model is still running"),
    rt(107038, "ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD", Usage, "capture ended on another thread than it began"),
    rt(107039, "ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY", Usage, "an input array is too small"),
    rt(107040, "ACL_ERROR_RT_MODEL_UPDATE_FAILED", Usage, "updating the model failed"),
    rt(107041, "ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC", Usage, "an asynchronous operation would become synchronous while the stream captures"),
    rt(107042, "ACL_ERROR_RT_SYMBOL_NOT_FOUND", Usage, "no such symbol"),
    rt(107043, "ACL_ERROR_RT_INVALID_SYMBOL", Usage, "the device symbol is not valid"),
    rt(107044, "ACL_ERROR_RT_INVALID_DEVICE_FUNCTION", Usage, "the device function is not valid"),
    rt(107045, "ACL_ERROR_RT_STREAM_NOT_SUPPORT_OPERA", Usage, "the stream does not support the operation"),
    rt(107046, "ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING", Usage, "a sub-graph is being captured"),
    rt(207000, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT", Usage, "the runtime does not support the feature"),
    rt(207001, "ACL_ERROR_RT_MEMORY_ALLOCATION", Resource, "device memory could not be allocated (out of memory); upstream traced one to a binary re-registered on every run, leaking device memory"),
    rt(207002, "ACL_ERROR_RT_MEMORY_FREE", Resource, "device memory could not be freed"),
    rt(207003, "ACL_ERROR_RT_AICORE_OVER_FLOW", Device, "an AICore computation overflowed"),
    rt(207004, "ACL_ERROR_RT_NO_DEVICE", Usage, "no device is present"),
    rt(207005, "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL", Resource, "a runtime resource could not be allocated"),
    rt(207006, "ACL_ERROR_RT_NO_PERMISSION", Usage, "the process lacks the permission"),
    rt(207007, "ACL_ERROR_RT_NO_EVENT_RESOURCE", Resource, "no event resource is left"),
    rt(207008, "ACL_ERROR_RT_NO_STREAM_RESOURCE", Resource, "no stream resource is left"),
    rt(207009, "ACL_ERROR_RT_NO_NOTIFY_RESOURCE", Resource, "no notify resource is left"),
    rt(207010, "ACL_ERROR_RT_NO_MODEL_RESOURCE", Resource, "no model resource is left"),
    rt(207011, "ACL_ERROR_RT_NO_CDQ_RESOURCE", Resource, "no CDQ resource is left"),
    rt(207012, "ACL_ERROR_RT_OVER_LIMIT", Resource, "a runtime limit was exceeded"),
    rt(207013, "ACL_ERROR_RT_QUEUE_EMPTY", Resource, "the queue is empty"),
    rt(207014, "ACL_ERROR_RT_QUEUE_FULL", Resource, "the queue is full"),
    rt(207015, "ACL_ERROR_RT_REPEATED_INIT", Usage, "initialised twice"),
    rt(207016, "ACL_ERROR_RT_AIVEC_OVER_FLOW", Device, "an AI vector computation overflowed"),
    rt(207017, "ACL_ERROR_RT_OVER_FLOW", Device, "a computation overflowed"),
    rt(207018, "ACL_ERROR_RT_DEVICE_OOM", Resource, "the device is out of memory"),
    rt(207019, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP", Usage, "this op cannot be updated"),
    rt(207020, "ACL_ERROR_RT_TIMEOUT", Device, "the driver timed out"),
    rt(507000, "ACL_ERROR_RT_INTERNAL_ERROR", Device, "runtime internal error; on a5 the op-timeout reaped by STARS, seen at the AICPU stream sync"),
    rt(507001, "ACL_ERROR_RT_TS_ERROR", Device, "task scheduler internal error"),
    rt(507002, "ACL_ERROR_RT_STREAM_TASK_FULL", Resource, "the stream's task queue is full"),
    rt(507003, "ACL_ERROR_RT_STREAM_TASK_EMPTY", Device, "the stream's task queue is empty"),
    rt(507004, "ACL_ERROR_RT_STREAM_NOT_COMPLETE", Device, "the stream has not completed"),
    rt(507005, "ACL_ERROR_RT_END_OF_SEQUENCE", Device, "end of sequence"),
    rt(507006, "ACL_ERROR_RT_EVENT_NOT_COMPLETE", Device, "the event has not completed"),
    rt(507007, "ACL_ERROR_RT_CONTEXT_RELEASE_ERROR", Device, "the context could not be released cleanly"),
    rt(507008, "ACL_ERROR_RT_SOC_VERSION", Usage, "the SoC version does not match the library"),
    rt(507009, "ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT", Usage, "the task type is not supported"),
    rt(507010, "ACL_ERROR_RT_LOST_HEARTBEAT", Hardware, "the task scheduler lost the device's heartbeat").label("lost heartbeat"),
    rt(507011, "ACL_ERROR_RT_MODEL_EXECUTE", Device, "a model failed to execute"),
    rt(507012, "ACL_ERROR_RT_REPORT_TIMEOUT", Device, "a report from the device timed out"),
    rt(507013, "ACL_ERROR_RT_SYS_DMA", Device, "system DMA error"),
    rt(507014, "ACL_ERROR_RT_AICORE_TIMEOUT", Device, "an AICore task exceeded its execution time").op_timeout(),
    rt(507015, "ACL_ERROR_RT_AICORE_EXCEPTION", Device, "AICore exception; on a2a3 the bounded device drain of a poisoned context"),
    rt(507016, "ACL_ERROR_RT_AICORE_TRAP_EXCEPTION", Device, "AICore trap exception"),
    rt(507017, "ACL_ERROR_RT_AICPU_TIMEOUT", Device, "an AICPU task exceeded its execution time").op_timeout(),
    rt(507018, "ACL_ERROR_RT_AICPU_EXCEPTION", Device, "AICPU exception; on a2a3 the op-timeout, and any sync of an error-state stream"),
    rt(507019, "ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR", Device, "the AICPU answered a data-dump request with an error"),
    rt(507020, "ACL_ERROR_RT_AICPU_MODEL_RSP_ERR", Device, "the AICPU answered a model operation with an error"),
    rt(507021, "ACL_ERROR_RT_PROFILING_ERROR", Device, "profiling error"),
    rt(507022, "ACL_ERROR_RT_IPC_ERROR", Device, "inter-process communication error"),
    rt(507023, "ACL_ERROR_RT_MODEL_ABORT_NORMAL", Device, "the model was aborted"),
    rt(507024, "ACL_ERROR_RT_KERNEL_UNREGISTERING", Usage, "the kernel is being unregistered"),
    rt(507025, "ACL_ERROR_RT_RINGBUFFER_NOT_INIT", Device, "the ring buffer was never initialised"),
    rt(507026, "ACL_ERROR_RT_RINGBUFFER_NO_DATA", Device, "the ring buffer holds no data"),
    rt(507027, "ACL_ERROR_RT_KERNEL_LOOKUP", Usage, "the kernel cannot be found"),
    rt(507028, "ACL_ERROR_RT_KERNEL_DUPLICATE", Usage, "the kernel is registered twice"),
    rt(507029, "ACL_ERROR_RT_DEBUG_REGISTER_FAIL", Device, "registering for debugging failed"),
    rt(507030, "ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL", Device, "unregistering from debugging failed"),
    rt(507031, "ACL_ERROR_RT_LABEL_CONTEXT", Usage, "the label belongs to another context"),
    rt(507032, "ACL_ERROR_RT_PROGRAM_USE_OUT", Resource, "no program registration slot is left"),
    rt(507033, "ACL_ERROR_RT_DEV_SETUP_ERROR", Device, "the device could not be set up (opened)"),
    rt(507034, "ACL_ERROR_RT_VECTOR_CORE_TIMEOUT", Device, "a vector-core task exceeded its execution time").op_timeout(),
    rt(507035, "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION", Device, "vector-core exception"),
    rt(507036, "ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION", Device, "vector-core trap exception"),
    rt(507037, "ACL_ERROR_RT_CDQ_BATCH_ABNORMAL", Resource, "a CDQ batch allocation went wrong"),
    rt(507038, "ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR", Usage, "the die mode cannot be changed"),
    rt(507039, "ACL_ERROR_RT_DIE_SET_ERROR", Usage, "a die cannot be chosen in single-die mode"),
    rt(507040, "ACL_ERROR_RT_INVALID_DIEID", Usage, "no such die id"),
    rt(507041, "ACL_ERROR_RT_DIE_MODE_NOT_SET", Usage, "the die mode was never set"),
    rt(507042, "ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW", Device, "an AICore trap on a read overflow"),
    rt(507043, "ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW", Device, "an AICore trap on a write overflow"),
    rt(507044, "ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW", Device, "a vector-core trap on a read overflow"),
    rt(507045, "ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW", Device, "a vector-core trap on a write overflow"),
    rt(507046, "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT", Device, "stream sync timed out; on a5 the bounded device drain of a poisoned context"),
    rt(507047, "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT", Device, "event sync timed out"),
    rt(507048, "ACL_ERROR_RT_FFTS_PLUS_TIMEOUT", Device, "an FFTS+ task timed out").op_timeout(),
    rt(507049, "ACL_ERROR_RT_FFTS_PLUS_EXCEPTION", Device, "FFTS+ exception"),
    rt(507050, "ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION", Device, "FFTS+ trap exception"),
    rt(507051, "ACL_ERROR_RT_SEND_MSG", Device, "a message over the host-device channel could not be sent"),
    rt(507052, "ACL_ERROR_RT_COPY_DATA", Device, "copying data failed"),
    rt(507053, "ACL_ERROR_RT_DEVICE_MEM_ERROR", Hardware, "the device's memory reported an error").label("device memory error"),
    rt(507054, "ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR", Hardware, "HBM multi-bit ECC error: the card's memory is damaged").label("HBM ECC"),
    rt(507055, "ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR", Device, "a device memory error is suspected (not confirmed)"),
    rt(507056, "ACL_ERROR_RT_LINK_ERROR", Hardware, "a link of the card failed").label("link error"),
    rt(507057, "ACL_ERROR_RT_SUSPECT_REMOTE_ERROR", Device, "an error on a remote device is suspected"),
    rt(507899, "ACL_ERROR_RT_DRV_INTERNAL_ERROR", Device, "driver internal error; malloc or stream creation on a sticky-errored context (the cascade)"),
    rt(507900, "ACL_ERROR_RT_AICPU_INTERNAL_ERROR", Device, "AICPU internal error"),
    rt(507901, "ACL_ERROR_RT_SOCKET_CLOSE", Hardware, "the host-device channel (hdc) disconnected").label("hdc disconnected"),
    rt(507902, "ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR", Device, "the AICPU answered an info load with an error"),
    rt(507903, "ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED", Device, "the stream's capture was invalidated"),
    rt(507904, "ACL_ERROR_RT_COMM_OP_RETRY_FAIL", Device, "a collective-communication operation failed after its retries"),
    rt(507905, "ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT", Device, "the snapshot lock timed out"),
    rt(507906, "ACL_ERROR_SNAPSHOT_LOCK_FAILED", Device, "the snapshot lock failed"),
    rt(507907, "ACL_ERROR_SNAPSHOT_UNLOCK_FAILED", Device, "the snapshot unlock failed"),
    rt(507908, "ACL_ERROR_SNAPSHOT_BACKUP_FAILED", Device, "the snapshot backup failed"),
    rt(507909, "ACL_ERROR_SNAPSHOT_RESTORE_FAILED", Device, "the snapshot restore failed"),
    rt(507910, "ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED", Usage, "the host memory range is already registered"),
    rt(507911, "ACL_ERROR_HOST_MEMORY_NOT_REGISTERED", Usage, "the host memory was never registered"),
    rt(507912, "ACL_ERROR_SNAPSHOT_CALLBACK_FAILED", Device, "a snapshot callback failed"),
    rt(507913, "ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED", Device, "registering a snapshot callback failed"),
    rt(507914, "ACL_ERROR_RT_L3_PORT_ERROR", Device, "an L3 port error"),
    rt(507915, "ACL_ERROR_RT_CCU_TIMEOUT", Device, "a CCU task timed out").op_timeout(),
    rt(507916, "ACL_ERROR_RT_CCU_EXCEPTION", Device, "CCU exception"),

    other(CodeSpace::Acl, CodeSource::AclBaseRt, 100000, "ACL_ERROR_INVALID_PARAM", Usage,
        "a parameter of the call is invalid"),
    other(CodeSpace::Acl, CodeSource::AclBaseRt, 100002, "ACL_ERROR_REPEAT_INITIALIZE", Usage,
        "aclInit was already called in this process")
        .hint("harmless; callers treat it as success"),
    other(CodeSpace::Hal, CodeSource::HalError, 62, "DRV_ERROR_NO_PROCESS", Device,
        "the driver knows no such process; on a5 halResMap returns it on a sticky context")
        .hint("an earlier fault poisoned this process's context: force-reset the card or use a fresh process"),
    other(CodeSpace::Loader, CodeSource::Cardguard, 1, "CG_LOADER_SYMBOL_MISSING", Harness,
        "the loaded CANN libraries do not export the call's symbol; the call never ran")
        .hint("point ONBOARD_ACL_LIB or ASCEND_HOME_PATH at a CANN install that has it"),
    other(CodeSpace::Loader, CodeSource::Cardguard, 2, "CG_LOADER_BLOB_UNREADABLE", Harness,
        "the kernel blob's file could not be read for registration; the call never ran")
        .hint("rebuild the kernels (cargo cardguard build-kernels) and check the blob directory"),
];
