// vector_add: c[i] = a[i] + b[i] for i in [0, n), f32.
//
// Arguments (u64 each):
//   0 a: *const f32, n elements
//   1 b: *const f32, n elements
//   2 c: *mut f32, n elements (output)
//   3 n: element count
// Every buffer must hold n elements (else CG_KERNEL_BAD_ARGS, before any access).
// Blocks split [0, n) into contiguous balanced ranges (cg::block_range); each writes only its own.
#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "vector_add", CG_ARCH, 8, 4};

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (!cg::launch_ok(ctx, 4)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const uint64_t n = cg::scalar(ctx, 3);
    const float *a = cg::buf<const float>(ctx, 0, n);
    const float *b = cg::buf<const float>(ctx, 1, n);
    float *c = cg::buf<float>(ctx, 2, n);
    if (a == nullptr || b == nullptr || c == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    const cg::Range r = cg::block_range(n, ctx->block_idx, ctx->block_dim);
    for (uint64_t i = r.begin; i < r.end; ++i) {
        c[i] = a[i] + b[i];
    }
    return CG_KERNEL_OK;
}
