// softmax: row-wise, numerically stable: y[r][j] = exp(x[r][j] - max_r) / sum_j exp(x[r][j] - max_r).
//
// Arguments (u64 each):
//   0 x: *const f32, rows*cols elements, row-major
//   1 y: *mut f32, rows*cols elements (output)
//   2 rows
//   3 cols
// Every buffer must hold its element count (else CG_KERNEL_BAD_ARGS, before any access).
// Blocks split the rows into contiguous balanced ranges; each writes only its own rows.
#include <math.h>

#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "softmax", CG_ARCH, 8, 4};

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (!cg::launch_ok(ctx, 4)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const uint64_t rows = cg::scalar(ctx, 2);
    const uint64_t cols = cg::scalar(ctx, 3);
    uint64_t size;
    if (!cg::mul_ok(rows, cols, &size)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const float *x = cg::buf<const float>(ctx, 0, size);
    float *y = cg::buf<float>(ctx, 1, size);
    if (x == nullptr || y == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    const cg::Range r = cg::block_range(rows, ctx->block_idx, ctx->block_dim);
    for (uint64_t row = r.begin; row < r.end; ++row) {
        const float *xr = x + row * cols;
        float *yr = y + row * cols;
        float max = -INFINITY;
        for (uint64_t j = 0; j < cols; ++j) {
            max = xr[j] > max ? xr[j] : max;
        }
        float sum = 0.0f;
        for (uint64_t j = 0; j < cols; ++j) {
            yr[j] = expf(xr[j] - max);
            sum += yr[j];
        }
        for (uint64_t j = 0; j < cols; ++j) {
            yr[j] /= sum;
        }
    }
    return CG_KERNEL_OK;
}
