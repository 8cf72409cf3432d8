// noop: does nothing and returns CG_KERNEL_OK. The post-reset probe runs it.
//
// Arguments: none (any that are passed are ignored).
#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "noop", CG_ARCH, 1, 0};

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    (void)ctx;
    return CG_KERNEL_OK;
}
