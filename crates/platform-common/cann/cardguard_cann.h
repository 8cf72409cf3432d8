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
 * Every declaration, struct layout and constant below is CANN's own, written here from the public
 * sources cited beside it (the facts, not the text: the CANN headers' licence does not let this
 * project vendor them). The sources, by short name:
 *   [acl_base_rt]  torch_npu wheel (PyPI torch-npu==2.14.0) torch_npu/include/acl/acl_base_rt.h
 *   [acl_rt]       torch_npu wheel torch_npu/include/acl/acl_rt.h
 *   [rt_codes]     torch_npu wheel torch_npu/include/acl/error_codes/rt_error_codes.h
 *   [rt_base]      hicann/runtime pkg_inc/runtime/rt_external_base.h
 *   [rt_kernel]    hicann/runtime pkg_inc/runtime/rt_external_kernel.h
 *   [rt_ktype]     hicann/runtime pkg_inc/runtime/runtime/kernel.h
 *   [hal_base]     hicann/runtime pkg_inc/driver/ascend_hal_base.h
 *   [hal_define]   hicann/runtime pkg_inc/driver/ascend_hal_define.h
 *   [hal_error]    hicann/runtime pkg_inc/driver/ascend_hal_error.h
 *   [hal_common]   hicann/runtime pkg_inc/driver/hal_pkg/common_pkg.h
 *   [dpa_pkg]      hicann/driver pkg_inc/hal_pkg/dpa_pkg.h
 * Enums keep only the enumerators cardguard uses, each with its real value. Types cardguard only
 * passes as NULL (rtSmDesc_t, rtTaskCfgInfo_t) are declared incomplete, under their real tags.
 * `crates/platform-common/tests/cann_conformance.rs` checks the acl* declarations against the
 * wheel's headers; `crates/platform-common/tests/cann_layout.rs` the struct layouts and enum
 * values against the facts above; `cargo xtask cann-check` all of them against an installed CANN.
 *
 * Symbols whose names start with `cgSim`, and types and constants named `cg*`/`CG_*`, are
 * cardguard's own: the `cgSim*` calls are optional extensions exported only by libsim_acl.so
 * (absent from CANN; the driver calls them only when they resolve).
 *
 * With CG_TYPES_ONLY defined the header declares no function, only the types (`PFN_*` included):
 * the conformance checks include it beside CANN's real headers that way.
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
/* C's `bool` without <stdbool.h> (one byte, as in C++). */
#ifdef __cplusplus
#define CG_BOOL bool
#else
#define CG_BOOL _Bool
#endif

#ifdef CG_TYPES_ONLY
#define CG_API(ret, name, params) typedef ret(*PFN_##name) params
#else
#define CG_API(ret, name, params) \
    typedef ret(*PFN_##name) params; \
    ret name params
#endif

/* ---- ACL: acl/acl_base_rt.h, acl/acl_rt.h (in the torch-npu wheel) ------------------------ */

typedef int aclError;   /* [acl_base_rt] */
typedef void *aclrtStream; /* [acl_base_rt] */

/* [acl_base_rt] (there `static const int`) */
#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_INTERNAL_ERROR 500000
/* [rt_codes] (there `static const int32_t`) */
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

/* [acl_rt] aclrtSetStreamFailureMode modes */
#define ACL_CONTINUE_ON_FAILURE 0x00000000u
#define ACL_STOP_ON_FAILURE 0x00000001u

/* [acl_rt] the size aclsysGetVersionStr's versionStr must have room for */
#define ACL_PKG_VERSION_MAX_SIZE 128u

/* [acl_rt] (first enumerators, implicit values 0..2) */
typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

/* [acl_rt] (first enumerators, implicit values 0..3) */
typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
} aclrtMemcpyKind;

/* All [acl_rt]. */
CG_API(aclError, aclInit, (const char *configPath));
CG_API(aclError, aclFinalize, (void));
/* The runtime's own text for this thread's last error; NULL when it has none. */
CG_API(const char *, aclGetRecentErrMsg, (void));
/* The version string of package `pkgName` ("runtime", ...) into `versionStr`
 * (ACL_PKG_VERSION_MAX_SIZE bytes). Absent from older CANN: optional. */
CG_API(aclError, aclsysGetVersionStr, (char *pkgName, char *versionStr));
CG_API(aclError, aclrtGetVersion, (int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion));
CG_API(aclError, aclrtSetDevice, (int32_t deviceId));
CG_API(aclError, aclrtResetDevice, (int32_t deviceId));
CG_API(aclError, aclrtResetDeviceForce, (int32_t deviceId));
/* `timeout` in seconds (CANN 8.1 has only this one). */
CG_API(aclError, aclrtSetOpExecuteTimeOut, (uint32_t timeout));
/* `timeout` in microseconds; the runtime rounds it and writes what it applied (microseconds). */
CG_API(aclError, aclrtSetOpExecuteTimeOutV2, (uint64_t timeout, uint64_t *actualTimeout));
CG_API(aclError, aclrtCreateStream, (aclrtStream *stream));
CG_API(aclError, aclrtSetStreamFailureMode, (aclrtStream stream, uint64_t mode));
CG_API(aclError, aclrtDestroyStream, (aclrtStream stream));
CG_API(aclError, aclrtDestroyStreamForce, (aclrtStream stream));
/* `timeout` in milliseconds; -1 waits forever (cardguard never passes it). */
CG_API(aclError, aclrtSynchronizeStreamWithTimeout, (aclrtStream stream, int32_t timeout));
CG_API(aclError, aclrtSynchronizeDeviceWithTimeout, (int32_t timeout));
CG_API(aclError, aclrtMalloc, (void **devPtr, size_t size, aclrtMemMallocPolicy policy));
CG_API(aclError, aclrtFree, (void *devPtr));
CG_API(aclError, aclrtMemcpy,
       (void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind));
/* Queued on `stream`; cardguard uses it device to device only (the SDMA copy). */
CG_API(aclError, aclrtMemcpyAsync,
       (void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
        aclrtStream stream));

/* ---- runtime: rt_external_base.h, rt_external_kernel.h, runtime/kernel.h ------------------ */

typedef int32_t rtError_t; /* [rt_base] */
typedef void *rtStream_t;  /* [rt_base] */

/* [rt_kernel] */
#define RT_DEV_BINARY_MAGIC_ELF 0x43554245u
#define RT_DEV_BINARY_MAGIC_ELF_AICPU 0x41415243u

/* [rt_kernel] tagRtDevBinary: 24 bytes. */
typedef struct tagRtDevBinary {
    uint32_t magic;   /* RT_DEV_BINARY_MAGIC_* */
    uint32_t version; /* 0 */
    const void *data; /* the kernel binary's bytes */
    uint64_t length;  /* their count */
} rtDevBinary_t;

/* [rt_kernel] rtHostInputInfo: 8 bytes. */
typedef struct rtHostInputInfo {
    uint32_t addrOffset;
    uint32_t dataOffset;
} rtHostInputInfo_t;

/* [rt_kernel] tagRtArgsEx: 40 bytes. The runtime checks args non-NULL, argsSize non-zero, and,
 * unless isNoNeedH2DCopy, the tiling and host-input offsets below argsSize (hicann/runtime
 * src/runtime/api/impl/api_error.cc, CheckArgs). cardguard passes no tiling and no host input. */
typedef struct tagRtArgsEx {
    void *args;                          /* the kernel's arguments, 8 bytes each */
    rtHostInputInfo_t *hostInputInfoPtr; /* NULL: no host-memory input */
    uint32_t argsSize;                   /* bytes at `args` */
    uint32_t tilingAddrOffset;           /* 0 (hasTiling is 0) */
    uint32_t tilingDataOffset;           /* 0 */
    uint16_t hostInputInfoNum;           /* 0 */
    uint8_t hasTiling;                   /* 0 */
    uint8_t isNoNeedH2DCopy;             /* 0: the runtime copies `args` to the device */
    uint8_t reserved[4];                 /* 0 */
} rtArgsEx_t;

/* [rt_kernel] tagRtAicpuArgsEx: 48 bytes. For a CCE-style AICPU kernel (KERNEL_TYPE_AICPU_KFC)
 * the kernel's so and function names live inside `args`, at the two offsets. */
typedef struct tagRtAicpuArgsEx {
    void *args;
    rtHostInputInfo_t *hostInputInfoPtr;    /* NULL */
    rtHostInputInfo_t *kernelOffsetInfoPtr; /* NULL */
    uint32_t argsSize;
    uint16_t hostInputInfoNum;              /* 0 */
    uint16_t kernelOffsetInfoNum;           /* 0 */
    uint32_t soNameAddrOffset;              /* offset of the so name's C string in `args` */
    uint32_t kernelNameAddrOffset;          /* offset of the kernel name's C string in `args` */
    CG_BOOL isNoNeedH2DCopy;                /* false */
    uint16_t timeout;                       /* 0: the runtime's default */
    uint8_t reserved;                       /* 0 */
} rtAicpuArgsEx_t;

typedef struct tagRtSmCtrl rtSmDesc_t;           /* [rt_kernel]; incomplete here, cardguard passes NULL */
typedef struct tagRtTaskCfgInfo rtTaskCfgInfo_t; /* [rt_base]; incomplete here, cardguard passes NULL */

/* [rt_ktype] rtKernelType (the enumerators cardguard names). cardguard launches its AICPU
 * scheduler as upstream launches its own: KERNEL_TYPE_AICPU_KFC with so/kernel-name offsets
 * (hw-native-sys/simpler src/common/aicpu_loader/host/load_aicpu_op.cpp). */
typedef enum rtKernelType {
    KERNEL_TYPE_CCE = 0,
    KERNEL_TYPE_FWK = 1,
    KERNEL_TYPE_AICPU = 2,
    KERNEL_TYPE_AICPU_CUSTOM = 4,
    KERNEL_TYPE_AICPU_KFC = 5
} rtKernelType_t;

/* Registers every kernel of a device binary; the handle selects them at launch (tilingKey). */
CG_API(rtError_t, rtRegisterAllKernel, (const rtDevBinary_t *bin, void **hdl)); /* [rt_kernel] */
CG_API(rtError_t, rtKernelLaunchWithHandleV2,
       (void *hdl, uint64_t tilingKey, uint32_t blockDim, rtArgsEx_t *argsInfo, rtSmDesc_t *smDesc,
        rtStream_t stm, const rtTaskCfgInfo_t *cfgInfo)); /* [rt_ktype] */
CG_API(rtError_t, rtAicpuKernelLaunchExWithArgs,
       (uint32_t kernelType, const char *opName, uint32_t blockDim, const rtAicpuArgsEx_t *argsInfo,
        rtSmDesc_t *smDesc, rtStream_t stm, uint32_t flags)); /* [rt_kernel] */

/* ---- HAL: ascend_hal_base.h, ascend_hal_define.h, ascend_hal_error.h, dpa_pkg.h ------------ */

/* [hal_error] drvError_t is an enum there (int-sized); cardguard reads it as the int it is. */
typedef int drvError_t;

/* [hal_error] */
#define DRV_ERROR_NONE 0
#define DRV_ERROR_INVALID_DEVICE 2
#define DRV_ERROR_INVALID_VALUE 3
#define DRV_ERROR_PARA_ERROR 8
#define DRV_ERROR_NO_PROCESS 62
#define DRV_ERROR_NOT_SUPPORT 0xfffe

/* [hal_common] tagProcType (first enumerator). halResMap's target: the AICPU scheduler. */
typedef enum tagProcType {
    PROCESS_CP1 = 0
} processType_t;

/* [dpa_pkg] res_map_type. 1 is RES_HSCB_AICORE, another register set. */
enum res_map_type {
    RES_AICORE = 0,
    RES_HSCB_AICORE = 1,
    RES_MAP_TYPE_MAX = 0x11
};

/* [dpa_pkg] */
#define RES_MAP_INFO_RSV_LEN 1u

/* [dpa_pkg] res_map_info: 20 bytes. halResMap returns DRV_ERROR_NOT_SUPPORT unless
 * target_proc_type is PROCESS_CP1 and flag and rsv are 0 (hicann/driver
 * src/ascend_hal/dpa/rmo/rmo_user_res_map.c, rmo_res_info_check). */
struct res_map_info {
    processType_t target_proc_type;  /* PROCESS_CP1 */
    enum res_map_type res_type;      /* RES_AICORE */
    unsigned int res_id;             /* the AICore's index */
    unsigned int flag;               /* 0 */
    unsigned int rsv[RES_MAP_INFO_RSV_LEN]; /* 0 */
};

/* [hal_base] */
CG_API(drvError_t, halResMap,
       (unsigned int devId, struct res_map_info *res_info, unsigned long *va, unsigned int *len));

/* [hal_define] ctrlType (the enumerator cardguard uses). A type at or above the install's
 * CTRL_TYPE_MAX (9 in the cited revision, 3 in older drivers) returns DRV_ERROR_NOT_SUPPORT. */
enum ctrlType {
    CTRL_TYPE_ADDR_MAP = 0
};

/* [hal_define] addrMapType (the enumerator cardguard uses): the AICore control registers, as
 * upstream maps them on a2a3 (hw-native-sys/simpler src/a2a3/platform/onboard/host/host_regs.cpp). */
enum addrMapType {
    ADDR_MAP_TYPE_REG_AIC_CTRL = 2
};

/* [hal_define] AddrMapInPara: 8 bytes; the request of halMemCtl(CTRL_TYPE_ADDR_MAP). */
struct AddrMapInPara {
    unsigned int addr_type; /* ADDR_MAP_TYPE_* */
    unsigned int devid;
};

/* [hal_define] AddrMapOutPara: 16 bytes; the reply: the mapped window. */
struct AddrMapOutPara {
    unsigned long long ptr;
    unsigned long long len;
};

/* [hal_base] */
CG_API(drvError_t, halMemCtl,
       (int type, void *param_value, size_t param_value_size, void *out_value, size_t *out_size_ret));

/* [hal_base] DEV_MODULE_TYPE and DEV_INFO_TYPE (the enumerators cardguard uses).
 * halGetDeviceInfoByBuff(MODULE_TYPE_AICORE, INFO_TYPE_OCCUPY) fills a `uint64_t[2]` bitmap of
 * the usable AICores (the partial-good mask; [hal_base], the table above the declaration). */
typedef enum {
    MODULE_TYPE_AICORE = 4
} DEV_MODULE_TYPE;

typedef enum {
    INFO_TYPE_OCCUPY = 8
} DEV_INFO_TYPE;

/* [hal_base] */
CG_API(drvError_t, halGetDeviceInfoByBuff,
       (uint32_t devId, int32_t moduleType, int32_t infoType, void *buf, int32_t *size));

/* ---- cardguard's own (not CANN) -------------------------------------------------------- */

/* The argument block of cardguard's AICPU scheduler task (KERNEL_TYPE_AICPU_KFC), 72 bytes: the
 * AICore stream it schedules, then the kernel and so names the runtime finds through
 * rtAicpuArgsEx_t's kernelNameAddrOffset and soNameAddrOffset. */
#define CG_AICPU_NAME_LEN 32u
typedef struct cgAicpuSchedulerArgs {
    uint64_t aicoreStream;
    char kernelName[CG_AICPU_NAME_LEN];
    char soName[CG_AICPU_NAME_LEN];
} cgAicpuSchedulerArgs;

#define CG_LAUNCH_ORIGIN_CASE 0u
#define CG_LAUNCH_ORIGIN_INTERNAL 1u
/* For the next aclrtMemcpyAsync (device to device: an SDMA copy) instead of a launch: a case's
 * copy (counted by sdma_fault@K), the worker's SDMA warm-up at init, the SDMA probe. */
#define CG_LAUNCH_ORIGIN_SDMA_CASE 2u
#define CG_LAUNCH_ORIGIN_SDMA_WARMUP 3u
#define CG_LAUNCH_ORIGIN_SDMA_PROBE 4u

#define CG_ARG_INPUT 0u
#define CG_ARG_OUTPUT 1u
#define CG_ARG_SCALAR 2u

/* Describes the next rtKernelLaunchWithHandleV2 of the calling thread: why it is launched
 * (fault plans count only case launches) and the role of each of its `numArgs` arguments
 * (CG_ARG_*); with a CG_LAUNCH_ORIGIN_SDMA_* origin (and no arguments), the next SDMA copy's. Real CANN has no such call; the driver skips it where it does not resolve. */
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
