// paged_attention: one decode step of multi-head attention over a paged KV cache, f32.
//
// For each sequence s and query head h, with kv head g = h / (num_heads / num_kv_heads) (grouped
// queries; num_kv_heads == num_heads is plain multi-head attention) and L = context_lens[s]:
//   score[t] = scale * dot(q[s][h], K[s][t][g])                  for t in [0, L)
//   out[s][h] = sum_t softmax(score)[t] * V[s][t][g]             (zeros when L == 0)
// where token t of sequence s lives in physical cache block block_tables[s][t / block_size], at
// slot t % block_size. The softmax subtracts the row max (numerically stable).
//
// Arguments (u64 each):
//   0  q: *const f32, [num_seqs][num_heads][head_dim]
//   1  k_cache: *const f32, [num_blocks][block_size][num_kv_heads][head_dim]
//   2  v_cache: *const f32, [num_blocks][block_size][num_kv_heads][head_dim]
//   3  block_tables: *const i32, [num_seqs][max_blocks_per_seq]; entries past a sequence's last
//      used block are never read (the reference fills them with -1)
//   4  context_lens: *const i32, [num_seqs]; each in [0, max_blocks_per_seq * block_size]
//   5  out: *mut f32, [num_seqs][num_heads][head_dim] (output)
//   6  num_seqs
//   7  num_heads
//   8  num_kv_heads (divides num_heads)
//   9  head_dim
//   10 block_size (tokens per cache block)
//   11 max_blocks_per_seq (row length of block_tables)
//   12 num_blocks (physical blocks in each cache; every used table entry must be below it)
//   13 scale: f32 bits in the low 32 bits (usually 1/sqrt(head_dim))
// Blocks split the num_seqs * num_heads (sequence, head) pairs, numbered s * num_heads + h, into
// contiguous balanced ranges; each writes only the out rows of its own pairs. A buffer shorter than
// its shape above, a bad context length or a bad table entry returns CG_KERNEL_BAD_ARGS (the buffer
// checks come before any access; with them and the entry checks every access is in bounds).
#include <math.h>

#include "cardguard/kernel_util.hpp"

static const cg_kernel_meta kMeta = {CG_KERNEL_ABI_VERSION, "paged_attention", CG_ARCH, 8, 14};

extern "C" const cg_kernel_meta *cg_kernel_metadata(void) { return &kMeta; }

namespace {

struct Shape {
    uint64_t num_heads, num_kv_heads, head_dim, block_size, max_blocks_per_seq, num_blocks;
};

// Where token t of sequence s keeps its key (or value) vector for kv head g; null if the table
// entry is out of range.
const float *token_row(const float *cache, const int32_t *table_row, const Shape &sh, uint64_t t,
                       uint64_t g) {
    const int32_t physical = table_row[t / sh.block_size];
    if (physical < 0 || static_cast<uint64_t>(physical) >= sh.num_blocks) {
        return nullptr;
    }
    const uint64_t slot = static_cast<uint64_t>(physical) * sh.block_size + t % sh.block_size;
    return cache + (slot * sh.num_kv_heads + g) * sh.head_dim;
}

float dot(const float *a, const float *b, uint64_t n) {
    float acc = 0.0f;
    for (uint64_t d = 0; d < n; ++d) {
        acc += a[d] * b[d];
    }
    return acc;
}

}  // namespace

extern "C" int32_t cg_kernel_main(const cg_kernel_ctx *ctx) {
    if (!cg::launch_ok(ctx, 14)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const uint64_t num_seqs = cg::scalar(ctx, 6);
    const Shape sh = {cg::scalar(ctx, 7),  cg::scalar(ctx, 8),  cg::scalar(ctx, 9),
                      cg::scalar(ctx, 10), cg::scalar(ctx, 11), cg::scalar(ctx, 12)};
    const float scale = cg::f32_arg(ctx, 13);

    uint64_t pairs, q_len, tokens, cache_len, table_len;
    if (!cg::mul_ok(num_seqs, sh.num_heads, &pairs) || !cg::mul_ok(pairs, sh.head_dim, &q_len) ||
        !cg::mul_ok(sh.max_blocks_per_seq, sh.block_size, &tokens) ||
        !cg::mul_ok(num_seqs, sh.max_blocks_per_seq, &table_len) ||
        !cg::mul_ok(sh.num_blocks, sh.block_size, sh.num_kv_heads, &cache_len) ||
        !cg::mul_ok(cache_len, sh.head_dim, &cache_len)) {
        return CG_KERNEL_BAD_ARGS;
    }
    const float *q = cg::buf<const float>(ctx, 0, q_len);
    const float *k_cache = cg::buf<const float>(ctx, 1, cache_len);
    const float *v_cache = cg::buf<const float>(ctx, 2, cache_len);
    const int32_t *block_tables = cg::buf<const int32_t>(ctx, 3, table_len);
    const int32_t *context_lens = cg::buf<const int32_t>(ctx, 4, num_seqs);
    float *out = cg::buf<float>(ctx, 5, q_len);
    if (q == nullptr || k_cache == nullptr || v_cache == nullptr || block_tables == nullptr ||
        context_lens == nullptr || out == nullptr) {
        return CG_KERNEL_BAD_ARGS;
    }
    if (pairs == 0) {
        return CG_KERNEL_OK;
    }
    if (sh.num_kv_heads == 0 || sh.num_heads % sh.num_kv_heads != 0 || sh.block_size == 0) {
        return CG_KERNEL_BAD_ARGS;
    }
    const uint64_t group = sh.num_heads / sh.num_kv_heads;

    const cg::Range r = cg::block_range(pairs, ctx->block_idx, ctx->block_dim);
    for (uint64_t pair = r.begin; pair < r.end; ++pair) {
        const uint64_t s = pair / sh.num_heads;
        const uint64_t g = (pair % sh.num_heads) / group;
        const float *qv = q + pair * sh.head_dim;
        float *o = out + pair * sh.head_dim;
        const int32_t len_raw = context_lens[s];
        if (len_raw < 0 || static_cast<uint64_t>(len_raw) > tokens) {
            return CG_KERNEL_BAD_ARGS;
        }
        const uint64_t len = static_cast<uint64_t>(len_raw);
        const int32_t *table_row = block_tables + s * sh.max_blocks_per_seq;

        // Pass 1: the max score, for a stable softmax.
        float max = -INFINITY;
        for (uint64_t t = 0; t < len; ++t) {
            const float *kv = token_row(k_cache, table_row, sh, t, g);
            if (kv == nullptr) {
                return CG_KERNEL_BAD_ARGS;
            }
            const float score = dot(qv, kv, sh.head_dim) * scale;
            max = score > max ? score : max;
        }
        // Pass 2: accumulate exp-weighted values straight into this pair's output row.
        for (uint64_t d = 0; d < sh.head_dim; ++d) {
            o[d] = 0.0f;
        }
        float sum = 0.0f;
        for (uint64_t t = 0; t < len; ++t) {
            const float *kv = token_row(k_cache, table_row, sh, t, g);
            const float *vv = token_row(v_cache, table_row, sh, t, g);
            const float w = expf(dot(qv, kv, sh.head_dim) * scale - max);
            sum += w;
            for (uint64_t d = 0; d < sh.head_dim; ++d) {
                o[d] += w * vv[d];
            }
        }
        if (len > 0) {
            for (uint64_t d = 0; d < sh.head_dim; ++d) {
                o[d] /= sum;
            }
        }
    }
    return CG_KERNEL_OK;
}
