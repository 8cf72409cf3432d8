/* The slice of the CANN API that cardguard's `acl` driver calls, and nothing else.
 *
 * Source of the Rust bindings in crates/platform-common/src/acl/bindings.rs: regenerate them with
 * `cargo xtask bindgen` after any change here (a test fails while they differ).
 *
 * Three libraries export these symbols on a CANN install (they may be separate files):
 *   libascendcl.so    the acl* calls                       (ascend-toolkit/latest/lib64)
 *   libruntime.so     the rt* calls                        (ascend-toolkit/latest/lib64)
 *   libascend_hal.so  the hal* calls                       (driver/lib64)
 * crates/sim-acl (libsim_acl.so) exports all of them, with the simulated card behind them.
 *
 * The declarations follow CANN's public headers (acl/acl_base.h, acl/acl_rt.h, runtime/kernel.h,
 * runtime/rt_ffts*.h, ascend_hal.h) with these simplifications, so that this file stays small:
 *  - rtArgsEx_t and rtAicpuArgsEx_t keep only their leading fields (args, argsSize); cardguard
 *    passes no host-input or tiling information, and the callee reads no further than argsSize.
 *  - rtSmDesc_t and rtTaskCfgInfo_t are opaque: cardguard always passes NULL for them.
 *  - struct res_map_info keeps the four fields halResMap reads for an AICore register mapping.
 *  - halMemCtl's register-window request and reply (CG_MEM_CTL_REG_WINDOW) are cardguard's
 *    names for the a2a3 register window and partial-good mask query.
 * Symbols whose names start with `cgSim` are cardguard extensions: optional, exported only by
 * libsim_acl.so, absent from CANN. The driver calls them only when they resolve.
 */
#ifndef CARDGUARD_CANN_H
#define CARDGUARD_CANN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CG_API(ret, name, params) declares the function `name` and its pointer type `PFN_name`.
 * The driver resolves each symbol at run time into a `PFN_name`; nothing links against them. */
#define CG_API(ret, name, params) \
    typedef ret(*PFN_##name) params; \
    ret name params

/* ---- acl/acl_base.h ---------------------------------------------------------------------- */

typedef int aclError;

#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_INTERNAL_ERROR 507000
#define ACL_ERROR_RT_CONTEXT_RELEASE_ERROR 507007
#define ACL_ERROR_RT_AICORE_TIMEOUT 507014
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015
#define ACL_ERROR_RT_AICPU_TIMEOUT 507017
#define ACL_ERROR_RT_AICPU_EXCEPTION 507018
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046
#define ACL_ERROR_RT_DRV_INTERNAL_ERROR 507899
#define ACL_ERROR_RT_SOCKET_CLOSE 507901

/* ---- acl/acl_rt.h ------------------------------------------------------------------------ */

typedef void *aclrtStream;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
} aclrtMemcpyKind;

CG_API(aclError, aclInit, (const char *configPath));
CG_API(aclError, aclFinalize, (void));
CG_API(aclError, aclrtSetDevice, (int32_t deviceId));
CG_API(aclError, aclrtResetDevice, (int32_t deviceId));
CG_API(aclError, aclrtResetDeviceForce, (int32_t deviceId));
/* `timeout` in microseconds; the runtime rounds it and reports what it applied. */
CG_API(aclError, aclrtSetOpExecuteTimeOutV2, (uint64_t timeout, uint64_t *actualTimeout));
CG_API(aclError, aclrtCreateStream, (aclrtStream *stream));
CG_API(aclError, aclrtDestroyStream, (aclrtStream stream));
/* `timeout` in milliseconds; -1 waits forever (cardguard never passes it). */
CG_API(aclError, aclrtSynchronizeStreamWithTimeout, (aclrtStream stream, int32_t timeout));
CG_API(aclError, aclrtSynchronizeDeviceWithTimeout, (int32_t timeout));
CG_API(aclError, aclrtMalloc, (void **devPtr, size_t size, aclrtMemMallocPolicy policy));
CG_API(aclError, aclrtFree, (void *devPtr));
CG_API(aclError, aclrtMemcpy,
       (void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind));

/* ---- runtime/base.h, runtime/kernel.h ---------------------------------------------------- */

typedef int32_t rtError_t;
typedef void *rtStream_t;

#define RT_DEV_BINARY_MAGIC_ELF 0x43554245u
#define RT_DEV_BINARY_MAGIC_ELF_AICPU 0x41415243u

typedef struct tagRtDevBinary {
    uint32_t magic;   /* RT_DEV_BINARY_MAGIC_* */
    uint32_t version; /* 0 */
    const void *data; /* the kernel binary's bytes */
    uint64_t length;  /* their count */
} rtDevBinary_t;

/* Simplified: CANN's struct continues after argsSize with host-input and tiling fields. */
typedef struct tagRtArgsEx {
    void *args;        /* the kernel's arguments, 8 bytes each: device addresses or values */
    void *hostInputInfoPtr; /* NULL */
    uint32_t argsSize; /* bytes at `args` */
} rtArgsEx_t;

/* Simplified like rtArgsEx_t. */
typedef struct tagRtAicpuArgsEx {
    void *args;
    void *hostInputInfoPtr; /* NULL */
    void *kernelOffsetInfoPtr; /* NULL */
    uint32_t argsSize;
} rtAicpuArgsEx_t;

typedef struct tagRtSmDesc rtSmDesc_t;         /* opaque here; cardguard passes NULL */
typedef struct tagRtTaskCfgInfo rtTaskCfgInfo_t; /* opaque here; cardguard passes NULL */

#define KERNEL_TYPE_AICPU 1u

/* Registers every kernel of a device binary; the handle selects them at launch (tilingKey). */
CG_API(rtError_t, rtRegisterAllKernel, (const rtDevBinary_t *bin, void **hdl));
CG_API(rtError_t, rtKernelLaunchWithHandleV2,
       (void *hdl, uint64_t tilingKey, uint32_t blockDim, rtArgsEx_t *argsInfo, rtSmDesc_t *smDesc,
        rtStream_t stm, const rtTaskCfgInfo_t *cfgInfo));
CG_API(rtError_t, rtAicpuKernelLaunchExWithArgs,
       (uint32_t kernelType, const char *opName, uint32_t blockDim, const rtAicpuArgsEx_t *argsInfo,
        rtSmDesc_t *smDesc, rtStream_t stm, uint32_t flags));

/* ---- ascend_hal.h ------------------------------------------------------------------------ */

typedef int drvError_t;

#define DRV_ERROR_NONE 0
#define DRV_ERROR_INVALID_VALUE 3

#define RES_ADDR_TYPE_AICORE 1u

/* Simplified: the four fields halResMap reads for an AICore register mapping. */
struct res_map_info {
    uint32_t target_proc_type; /* 0: the calling host process */
    uint32_t res_type;         /* RES_ADDR_TYPE_AICORE */
    uint32_t res_id;           /* the AICore's index */
    uint32_t flag;             /* 0 */
};

CG_API(drvError_t, halResMap,
       (unsigned int devId, struct res_map_info *res_info, unsigned long *va, unsigned int *len));

/* cardguard's name for the a2a3 register window query of halMemCtl. */
#define CG_MEM_CTL_REG_WINDOW 0x4347u

struct cg_mem_ctl_reg_window_in {
    uint32_t devId;
};

struct cg_mem_ctl_reg_window_out {
    uint64_t base;      /* AICore register window base */
    uint64_t core_mask; /* partial-good mask: bit i set when AICore i is usable */
};

CG_API(drvError_t, halMemCtl,
       (int type, void *paramValue, size_t paramValueSize, void *outValue, size_t *outSizeRet));

/* ---- cardguard extensions (libsim_acl.so only; optional) ------------------------------- */

#define CG_LAUNCH_ORIGIN_CASE 0u
#define CG_LAUNCH_ORIGIN_INTERNAL 1u

#define CG_ARG_INPUT 0u
#define CG_ARG_OUTPUT 1u
#define CG_ARG_SCALAR 2u

/* Describes the next rtKernelLaunchWithHandleV2 of the calling thread: why it is launched
 * (fault plans count only case launches) and the role of each of its `numArgs` arguments
 * (CG_ARG_*). Real CANN has no such call; the driver skips it where it does not resolve. */
CG_API(aclError, cgSimSetLaunchInfo, (uint32_t origin, const uint8_t *argRoles, uint32_t numArgs));

/* Starts a simulated run on `numCards` cards: installs the fault plan `plan` (the `--faults`
 * grammar; NULL reads ONBOARD_SIM_FAULTS, unset meaning no faults) and zeroes the cards' fault
 * counters, as the dispatcher does for the simulated platform before any lane starts. */
CG_API(aclError, cgSimStartRun, (const uint32_t *cards, uint32_t numCards, const char *plan));

/* This process's simulator counters (what the in-process simulator's `stats()` reports). */
typedef struct cgSimStats {
    uint64_t calls;           /* driver calls made */
    uint64_t errorStateSyncs; /* syncs of a stream already in error state */
    uint64_t aicoreLaunches;  /* AICore launches queued */
    uint64_t forceResetsOk;   /* force resets that returned 0 */
} cgSimStats;

CG_API(aclError, cgSimGetStats, (cgSimStats *out));

#define CG_CODE_SPACE_ACL 0u
#define CG_CODE_SPACE_HAL 1u

/* The sticky error of this process's context on `card`: *poisoned is 0 when there is none, else
 * 1 with the code's space (CG_CODE_SPACE_*) and raw value. */
CG_API(aclError, cgSimGetStickyError,
       (uint32_t card, uint32_t *poisoned, uint32_t *space, int32_t *raw));

#ifdef __cplusplus
}
#endif

#endif /* CARDGUARD_CANN_H */
