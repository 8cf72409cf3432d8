/* Helpers for writing cardguard kernels in C++ (C++17). Header-only, no allocation, no STL.
 *
 * Every kernel source includes this header, which includes kernel.h and requires CG_ARCH (the
 * builder passes -DCG_ARCH="a5" or -DCG_ARCH="a2a3"; it becomes the metadata's arch).
 */
#ifndef CARDGUARD_KERNEL_UTIL_HPP
#define CARDGUARD_KERNEL_UTIL_HPP

#include <stdint.h>
#include <string.h>

#include "cardguard/kernel.h"

#ifndef CG_ARCH
#error "build kernels with -DCG_ARCH=\"a5\" or -DCG_ARCH=\"a2a3\" (cargo xtask build-kernels does)"
#endif

namespace cg {

/* A half-open range [begin, end) of work items. */
struct Range {
    uint64_t begin;
    uint64_t end;
};

/* The contiguous share of `total` items that block `idx` of `dim` owns. Shares are disjoint, cover
 * [0, total) and differ in length by at most one; a block may own nothing when dim > total. */
inline Range block_range(uint64_t total, uint32_t idx, uint32_t dim) {
    const uint64_t base = total / dim;
    const uint64_t rem = total % dim;
    const uint64_t i = idx;
    const uint64_t begin = i * base + (i < rem ? i : rem);
    return Range{begin, begin + base + (i < rem ? 1 : 0)};
}

/* True when the launch is well formed for a kernel of exactly `num_args` arguments. */
inline bool launch_ok(const cg_kernel_ctx *ctx, uint32_t num_args) {
    return ctx != nullptr && ctx->block_dim > 0 && ctx->block_idx < ctx->block_dim &&
           ctx->num_args == num_args &&
           (num_args == 0 || (ctx->args != nullptr && ctx->arg_bytes != nullptr));
}

/* Bytes valid from argument `i`'s address on (0 for a scalar). */
inline uint64_t arg_bytes(const cg_kernel_ctx *ctx, uint32_t i) { return ctx->arg_bytes[i]; }

/* Argument `i` as a buffer of at least `count` elements of T, or null when it is not one: the slot
 * holds no buffer (a null address or zero bytes, e.g. a scalar), count * sizeof(T) overflows or
 * exceeds the bytes valid there, or the address is not aligned for T. A kernel takes every buffer
 * it touches through this, with the element count its size scalars imply, and returns
 * CG_KERNEL_BAD_ARGS on null before it touches memory: then every access below `count` is in
 * bounds. A buffer slot is required even when `count` is 0. */
template <class T>
inline T *buf(const cg_kernel_ctx *ctx, uint32_t i, uint64_t count) {
    const uint64_t addr = ctx->args[i];
    const uint64_t have = ctx->arg_bytes[i];
    uint64_t need;
    if (addr == 0 || have == 0 || addr % alignof(T) != 0 || __builtin_mul_overflow(count, sizeof(T), &need) ||
        need > have) {
        return nullptr;
    }
    return reinterpret_cast<T *>(static_cast<uintptr_t>(addr));
}

/* Argument `i` as an unsigned scalar. */
inline uint64_t scalar(const cg_kernel_ctx *ctx, uint32_t i) { return ctx->args[i]; }

/* Argument `i` as an f32 passed by its bits in the low 32 bits. */
inline float f32_arg(const cg_kernel_ctx *ctx, uint32_t i) {
    const uint32_t bits = static_cast<uint32_t>(ctx->args[i]);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* a * b without wrapping; false when it would overflow. */
inline bool mul_ok(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }

/* a * b * c without wrapping; false when it would overflow. */
inline bool mul_ok(uint64_t a, uint64_t b, uint64_t c, uint64_t *out) {
    return mul_ok(a, b, out) && mul_ok(*out, c, out);
}

}  // namespace cg

#endif /* CARDGUARD_KERNEL_UTIL_HPP */
