// scale: y[i] = alpha * x[i] + beta (see onboard_suite/kernels.h for the arguments).
#include "cardguard/kernel_util.hpp"
#include "onboard_suite/kernels.h"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "scale", CG_ARCH, ONBOARD_SCALE_BLOCKS,
                                     ONBOARD_SCALE_ARGS};

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (!cg::launch_ok(ctx, ONBOARD_SCALE_ARGS)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const uint64_t n = cg::scalar(ctx, ONBOARD_SCALE_N);
    const float *x = cg::buf<const float>(ctx, ONBOARD_SCALE_X, n);
    float *y = cg::buf<float>(ctx, ONBOARD_SCALE_Y, n);
    if (x == nullptr || y == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    const float alpha = cg::f32_arg(ctx, ONBOARD_SCALE_ALPHA);
    const float beta = cg::f32_arg(ctx, ONBOARD_SCALE_BETA);
    const cg::Range r = cg::block_range(n, ctx->block_idx, ctx->block_dim);
    for (uint64_t i = r.begin; i < r.end; ++i) {
        y[i] = alpha * x[i] + beta;
    }
    return CG_KERNEL_OK;
}
