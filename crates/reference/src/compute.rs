//! The reference computations, written for clarity; each mirrors one kernel's contract (see the
//! comment at the top of `kernels/<name>.cpp`). Shapes are the caller's promise: a slice shorter
//! than its shape says panics on indexing, as slice indexing does.

/// `a + b`, elementwise.
///
/// # Panics
/// If `b` is shorter than `a`.
pub fn vector_add(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(&b[..a.len()]).map(|(x, y)| x + y).collect()
}

/// `C[m][n] = A[m][k] B[k][n]`, row-major, each element summed over `k` in ascending order.
///
/// # Panics
/// If `a` has fewer than `m * k` or `b` fewer than `k * n` values.
pub fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = acc;
        }
    }
    c
}

/// Softmax of each row of `x[rows][cols]`, after subtracting the row's max.
///
/// # Panics
/// If `x` has fewer than `rows * cols` values.
pub fn softmax(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut y = Vec::with_capacity(rows * cols);
    for row in x[..rows * cols].chunks_exact(cols.max(1)).take(rows) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = row.iter().map(|v| (v - max).exp()).collect();
        let sum: f32 = exps.iter().sum();
        y.extend(exps.iter().map(|e| e / sum));
    }
    y
}

/// `y[r][j] = x[r][j] / sqrt(mean_j(x[r][j]^2) + eps) * gamma[j]`.
///
/// # Panics
/// If `x` has fewer than `rows * cols` or `gamma` fewer than `cols` values.
pub fn rms_norm(x: &[f32], gamma: &[f32], rows: usize, cols: usize, eps: f32) -> Vec<f32> {
    let mut y = Vec::with_capacity(rows * cols);
    for row in x[..rows * cols].chunks_exact(cols.max(1)).take(rows) {
        let mean_sq = row.iter().map(|v| v * v).sum::<f32>() / cols as f32;
        let inv_rms = 1.0 / (mean_sq + eps).sqrt();
        y.extend(row.iter().zip(&gamma[..cols]).map(|(v, g)| v * inv_rms * g));
    }
    y
}

/// The inputs of one paged-attention decode step (layouts as in `kernels/paged_attention.cpp`).
#[derive(Debug, Clone, Copy)]
pub struct PagedAttention<'a> {
    /// `f32[num_seqs][num_heads][head_dim]`.
    pub q: &'a [f32],
    /// `f32[num_blocks][block_size][num_kv_heads][head_dim]`.
    pub k_cache: &'a [f32],
    /// Same layout as `k_cache`.
    pub v_cache: &'a [f32],
    /// `i32[num_seqs][max_blocks_per_seq]`: physical block of each logical block.
    pub block_tables: &'a [i32],
    /// `i32[num_seqs]`: tokens in each sequence's context.
    pub context_lens: &'a [i32],
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads; divides `num_heads` (query head h reads kv head h / (num_heads / num_kv_heads)).
    pub num_kv_heads: usize,
    /// Elements per head vector.
    pub head_dim: usize,
    /// Tokens per cache block.
    pub block_size: usize,
    /// Row length of `block_tables`.
    pub max_blocks_per_seq: usize,
    /// Score scale.
    pub scale: f32,
}

/// One decode step: for each sequence and query head, softmax(scale * q.K^T) V over the
/// sequence's context (zeros for an empty context). Returns `f32[num_seqs][num_heads][head_dim]`.
///
/// # Panics
/// If the slices are shorter than their shapes, a used table entry is negative or out of the
/// cache, or `num_kv_heads` is 0.
pub fn paged_attention(p: &PagedAttention<'_>) -> Vec<f32> {
    let group = p.num_heads / p.num_kv_heads;
    let mut out = Vec::with_capacity(p.context_lens.len() * p.num_heads * p.head_dim);
    for (s, &len) in p.context_lens.iter().enumerate() {
        let len = usize::try_from(len).expect("context length is negative");
        let table = &p.block_tables[s * p.max_blocks_per_seq..(s + 1) * p.max_blocks_per_seq];
        let row = |cache: &'_ [f32], t: usize, g: usize| -> std::ops::Range<usize> {
            let physical = usize::try_from(table[t / p.block_size]).expect("table entry is negative");
            let slot = physical * p.block_size + t % p.block_size;
            let start = (slot * p.num_kv_heads + g) * p.head_dim;
            assert!(start + p.head_dim <= cache.len(), "table entry past the cache");
            start..start + p.head_dim
        };
        for h in 0..p.num_heads {
            let g = h / group;
            let qv = &p.q[(s * p.num_heads + h) * p.head_dim..][..p.head_dim];
            let scores: Vec<f32> = (0..len)
                .map(|t| {
                    let kv = &p.k_cache[row(p.k_cache, t, g)];
                    qv.iter().zip(kv).map(|(a, b)| a * b).sum::<f32>() * p.scale
                })
                .collect();
            let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let weights: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f32 = weights.iter().sum();
            let mut o = vec![0.0f32; p.head_dim];
            for (t, w) in weights.iter().enumerate() {
                let vv = &p.v_cache[row(p.v_cache, t, g)];
                for (od, vd) in o.iter_mut().zip(vv) {
                    *od += w * vd;
                }
            }
            out.extend(o.iter().map(|v| if len > 0 { v / sum } else { *v }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_by_identity_is_the_input() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        assert_eq!(matmul(&a, &eye, 2, 3, 3), a);
        assert_eq!(matmul(&[1.0, 2.0], &[3.0, 4.0], 1, 2, 1), [11.0]);
    }

    #[test]
    fn softmax_rows_sum_to_one_and_survive_large_values() {
        let y = softmax(&[1000.0, 1000.0, 0.0, 1.0, 2.0, 3.0], 2, 3);
        assert!(y.iter().all(|v| v.is_finite()));
        assert!((y[0] - 0.5).abs() < 1e-6 && (y[1] - 0.5).abs() < 1e-6 && y[2] == 0.0);
        assert!((y[3..].iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(y[3] < y[4] && y[4] < y[5]);
    }

    #[test]
    fn rms_norm_of_a_known_row() {
        // mean(9, 16) = 12.5, rms = sqrt(12.5).
        let y = rms_norm(&[3.0, 4.0], &[1.0, 2.0], 1, 2, 0.0);
        let rms = 12.5f32.sqrt();
        assert_eq!(y, [3.0 / rms, 4.0 / rms * 2.0]);
    }

    #[test]
    fn paged_attention_with_one_token_returns_its_value() {
        // One sequence, one head, one token in physical block 1 of 2.
        let k = [9.0, 9.0, 0.5, -0.5];
        let v = [7.0, 7.0, 1.25, -3.0];
        let out = paged_attention(&PagedAttention {
            q: &[1.0, 2.0],
            k_cache: &k,
            v_cache: &v,
            block_tables: &[1],
            context_lens: &[1],
            num_heads: 1,
            num_kv_heads: 1,
            head_dim: 2,
            block_size: 1,
            max_blocks_per_seq: 1,
            scale: 1.0,
        });
        assert_eq!(out, [1.25, -3.0]);
    }

    #[test]
    fn paged_attention_weights_by_score() {
        // Two tokens, scores 0 and ln 3: weights 1/4 and 3/4.
        let k = [0.0, 3f32.ln()];
        let v = [4.0, 8.0];
        let out = paged_attention(&PagedAttention {
            q: &[1.0],
            k_cache: &k,
            v_cache: &v,
            block_tables: &[0],
            context_lens: &[2],
            num_heads: 1,
            num_kv_heads: 1,
            head_dim: 1,
            block_size: 2,
            max_blocks_per_seq: 1,
            scale: 1.0,
        });
        assert!((out[0] - 7.0).abs() < 1e-5, "{out:?}");
    }
}
