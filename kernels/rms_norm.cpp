// rms_norm: row-wise y[r][j] = x[r][j] / sqrt(mean_j(x[r][j]^2) + eps) * gamma[j], f32.
//
// Arguments (u64 each):
//   0 x: *const f32, rows*cols elements, row-major
//   1 gamma: *const f32, cols elements
//   2 y: *mut f32, rows*cols elements (output)
//   3 rows
//   4 cols
//   5 eps: f32 bits in the low 32 bits (f32::to_bits)
// Every buffer must hold its element count (else CG_KERNEL_BAD_ARGS, before any access).
// Blocks split the rows into contiguous balanced ranges; each writes only its own rows.
#include <math.h>

#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "rms_norm", CG_ARCH, 8, 6};

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (!cg::launch_ok(ctx, 6)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const uint64_t rows = cg::scalar(ctx, 3);
    const uint64_t cols = cg::scalar(ctx, 4);
    const float eps = cg::f32_arg(ctx, 5);
    uint64_t size;
    if (!cg::mul_ok(rows, cols, &size)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const float *x = cg::buf<const float>(ctx, 0, size);
    const float *gamma = cg::buf<const float>(ctx, 1, cols);
    float *y = cg::buf<float>(ctx, 2, size);
    if (x == nullptr || gamma == nullptr || y == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    const cg::Range r = cg::block_range(rows, ctx->block_idx, ctx->block_dim);
    for (uint64_t row = r.begin; row < r.end; ++row) {
        const float *xr = x + row * cols;
        float *yr = y + row * cols;
        float sum_sq = 0.0f;
        for (uint64_t j = 0; j < cols; ++j) {
            sum_sq += xr[j] * xr[j];
        }
        const float inv_rms = 1.0f / sqrtf(sum_sq / static_cast<float>(cols) + eps);
        for (uint64_t j = 0; j < cols; ++j) {
            yr[j] = xr[j] * inv_rms * gamma[j];
        }
    }
    return CG_KERNEL_OK;
}
