// spin: a test kernel (built by the sim tests, not a built-in) that computes on its own clock and,
// in the blocks that do not compute, waits for the ones that do.
//
// Blocks 0 .. spinners-1 compute: each runs an xorshift loop until `spin_us` microseconds of
// CLOCK_MONOTONIC have passed since the block started, then stores its iteration count (at least
// 1) in out[block_idx]. They never call the wait API. Every other block waits through
// ctx->api->wait, in slices of kWaitSliceUs, until every computing block has stored its count, then
// stores 1 + the number of waits it made; it returns CG_KERNEL_REAPED as soon as a wait reports
// CG_WAIT_REAPED.
//
// Arguments: out (u64[block_dim]), spin_us (u64), spinners (u64, 1 .. block_dim).
#include <time.h>

#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "spin", CG_ARCH, 8, 3};

static const uint64_t kWaitSliceUs = 1000;

static uint64_t now_us() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (!cg::launch_ok(ctx, 3) || ctx->api == nullptr || ctx->api->wait == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    uint64_t *out = cg::buf<uint64_t>(ctx, 0, ctx->block_dim);
    const uint64_t spin_us = cg::scalar(ctx, 1);
    const uint64_t spinners = cg::scalar(ctx, 2);
    if (out == nullptr || spinners == 0 || spinners > ctx->block_dim) {
        return CG_KERNEL_BAD_ARGS;
    }
    if (ctx->block_idx < spinners) {
        const uint64_t start = now_us();
        uint64_t x = 0x9e3779b97f4a7c15u ^ ctx->block_idx;
        uint64_t iterations = 0;
        do {
            for (int i = 0; i < 1024; ++i) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
            }
            ++iterations;
        } while (now_us() - start < spin_us);
        // The state joins the count's low bit so the loop cannot be optimised away.
        __atomic_store_n(&out[ctx->block_idx], (iterations << 1) | (x & 1u) | 2u, __ATOMIC_RELEASE);
        return CG_KERNEL_OK;
    }
    uint64_t waits = 0;
    for (;;) {
        bool all = true;
        for (uint64_t i = 0; i < spinners; ++i) {
            all = all && __atomic_load_n(&out[i], __ATOMIC_ACQUIRE) != 0;
        }
        if (all) {
            break;
        }
        ++waits;
        if (ctx->api->wait(ctx->token, kWaitSliceUs) == CG_WAIT_REAPED) {
            return CG_KERNEL_REAPED;
        }
    }
    __atomic_store_n(&out[ctx->block_idx], waits + 1, __ATOMIC_RELEASE);
    return CG_KERNEL_OK;
}
