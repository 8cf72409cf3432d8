/* cardguard kernel-blob ABI, version 2.
 *
 * A kernel blob is a shared object built from one C++ source under kernels/. It exports:
 *   const cg_kernel_meta *cg_kernel_metadata(void);
 *   int32_t cg_kernel_main(const cg_kernel_ctx *ctx);   -- runs one block
 * The simulated AICore runs cg_kernel_main once per block, each block on its own thread.
 * A kernel that must wait (for data, for a flag, forever) waits only through ctx->api->wait:
 * the simulator reaps a kernel blocked there for longer than the op-execute timeout, and then
 * wait returns CG_WAIT_REAPED and the kernel must return at once.
 *
 * Bounds (new in version 2): ctx->arg_bytes[i] is how many bytes are valid from the address in
 * ctx->args[i] on (0 for a scalar). Before it touches memory, a kernel checks that every buffer it
 * reads or writes is a buffer (non-null, non-zero length, aligned) long enough for its size
 * scalars, and returns CG_KERNEL_BAD_ARGS otherwise (cg::buf in kernel_util.hpp does the check).
 * The simulator passes each buffer's length from the address to the end of its allocation.
 */
#ifndef CARDGUARD_KERNEL_H
#define CARDGUARD_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CG_KERNEL_ABI_VERSION 2u

#define CG_WAIT_WOKEN 0
#define CG_WAIT_REAPED 1

#define CG_KERNEL_OK 0
#define CG_KERNEL_BAD_ARGS 1
#define CG_KERNEL_REAPED 2

typedef struct cg_kernel_meta {
    uint32_t abi_version;   /* CG_KERNEL_ABI_VERSION */
    const char *name;       /* e.g. "vector_add" */
    const char *arch;       /* "a5" or "a2a3": the arch the blob was built for */
    uint32_t block_dim;     /* the block dim the kernel is written for (launches may use fewer) */
    uint32_t num_args;      /* how many u64 arguments cg_kernel_main expects */
} cg_kernel_meta;

typedef struct cg_sim_api {
    /* Block until woken or `timeout_us` passes; CG_WAIT_REAPED once the op-execute timeout reaped
     * this kernel. */
    int32_t (*wait)(void *token, uint64_t timeout_us);
} cg_sim_api;

typedef struct cg_kernel_ctx {
    uint32_t block_idx;
    uint32_t block_dim;
    const uint64_t *args;   /* buffers as addresses, scalars by value, in the kernel's order */
    const uint64_t *arg_bytes; /* per argument: bytes valid from its address on; 0 for a scalar */
    uint32_t num_args;      /* the length of args and of arg_bytes */
    const cg_sim_api *api;
    void *token;            /* pass back to api->wait */
} cg_kernel_ctx;

/* The two entry points every blob defines (declared here so that a C++ definition gets C linkage).
 * cg_kernel_main returns CG_KERNEL_OK, CG_KERNEL_BAD_ARGS (wrong argument count, a buffer slot
 * holding no buffer or one shorter than the size scalars need, a size that overflows,
 * block_idx >= block_dim) or CG_KERNEL_REAPED. */
const cg_kernel_meta *cg_kernel_metadata(void);
int32_t cg_kernel_main(const cg_kernel_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* CARDGUARD_KERNEL_H */
