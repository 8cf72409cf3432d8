// matmul: C[M,N] = A[M,K] * B[K,N], f32, row-major; each C element sums over k in ascending order.
//
// Arguments (u64 each):
//   0 a: *const f32, M*K elements
//   1 b: *const f32, K*N elements
//   2 c: *mut f32, M*N elements (output)
//   3 m: rows of A and C
//   4 k: columns of A, rows of B
//   5 n: columns of B and C
// Every buffer must hold its element count (else CG_KERNEL_BAD_ARGS, before any access).
// Blocks split the M rows of C into contiguous balanced ranges; each writes only its own rows.
#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "matmul", CG_ARCH, 8, 6};

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (!cg::launch_ok(ctx, 6)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const uint64_t m = cg::scalar(ctx, 3);
    const uint64_t k = cg::scalar(ctx, 4);
    const uint64_t n = cg::scalar(ctx, 5);
    uint64_t a_len, b_len, c_len;
    if (!cg::mul_ok(m, k, &a_len) || !cg::mul_ok(k, n, &b_len) || !cg::mul_ok(m, n, &c_len)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const float *a = cg::buf<const float>(ctx, 0, a_len);
    const float *b = cg::buf<const float>(ctx, 1, b_len);
    float *c = cg::buf<float>(ctx, 2, c_len);
    if (a == nullptr || b == nullptr || c == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    const cg::Range rows = cg::block_range(m, ctx->block_idx, ctx->block_dim);
    for (uint64_t i = rows.begin; i < rows.end; ++i) {
        float *c_row = c + i * n;
        for (uint64_t j = 0; j < n; ++j) {
            c_row[j] = 0.0f;
        }
        // i-p-j order: streams B's rows, and still adds the K products of each C[i][j] in order.
        for (uint64_t p = 0; p < k; ++p) {
            const float a_ip = a[i * k + p];
            const float *b_row = b + p * n;
            for (uint64_t j = 0; j < n; ++j) {
                c_row[j] += a_ip * b_row[j];
            }
        }
    }
    return CG_KERNEL_OK;
}
