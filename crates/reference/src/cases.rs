//! Parametric case constructors, one per built-in kernel. Each draws its inputs from
//! [`SplitMix64`] seeded with `seed` (same arguments, same case, on every machine), computes the
//! expected outputs with [`crate::compute`], and sets tolerances that absorb summation-order and
//! libm differences but not a wrong result.
//!
//! `block_dim` is the number of blocks to launch (>= 1 for a valid launch; any value works with
//! any shape, blocks with no share of the work do nothing). Sizes of 0 are valid and give empty
//! buffers.

use super::case::{HostArg, KernelCase};
use super::compute::{self, PagedAttention};
use super::data::{f32s_to_bytes, i32s_to_bytes, SplitMix64};

fn u64_of(n: usize) -> HostArg {
    HostArg::Scalar(n as u64)
}

fn f32_bits(v: f32) -> HostArg {
    HostArg::Scalar(u64::from(v.to_bits()))
}

fn output_of(values: &[f32]) -> HostArg {
    HostArg::Output(values.len() * 4)
}

/// `noop` with `block_dim` blocks: no arguments, nothing to check.
pub fn noop_case(block_dim: u32) -> KernelCase {
    KernelCase {
        kernel: "noop",
        label: format!("noop blocks={block_dim}"),
        block_dim,
        args: Vec::new(),
        expected: Vec::new(),
        rtol: 0.0,
        atol: 0.0,
    }
}

/// `hang` with `block_dim` blocks: no arguments; it never finishes until reaped.
pub fn hang_case(block_dim: u32) -> KernelCase {
    KernelCase {
        kernel: "hang",
        label: format!("hang blocks={block_dim}"),
        block_dim,
        args: Vec::new(),
        expected: Vec::new(),
        rtol: 0.0,
        atol: 0.0,
    }
}

/// `vector_add` of `n` elements: a, b uniform in [-1, 1). Args: `[a, b, c, n]`.
pub fn vector_add_case(n: usize, block_dim: u32, seed: u64) -> KernelCase {
    let mut rng = SplitMix64::new(seed);
    let a = rng.f32_vec(n, -1.0, 1.0);
    let b = rng.f32_vec(n, -1.0, 1.0);
    let c = compute::vector_add(&a, &b);
    KernelCase {
        kernel: "vector_add",
        label: format!("vector_add n={n} blocks={block_dim} seed={seed}"),
        block_dim,
        args: vec![
            HostArg::Input(f32s_to_bytes(&a)),
            HostArg::Input(f32s_to_bytes(&b)),
            output_of(&c),
            u64_of(n),
        ],
        expected: vec![c],
        rtol: 1e-6,
        atol: 1e-6,
    }
}

/// `matmul` `C[m,n] = A[m,k] B[k,n]`: A, B uniform in [-1, 1). Args: `[a, b, c, m, k, n]`.
pub fn matmul_case(m: usize, k: usize, n: usize, block_dim: u32, seed: u64) -> KernelCase {
    let mut rng = SplitMix64::new(seed);
    let a = rng.f32_vec(m * k, -1.0, 1.0);
    let b = rng.f32_vec(k * n, -1.0, 1.0);
    let c = compute::matmul(&a, &b, m, k, n);
    KernelCase {
        kernel: "matmul",
        label: format!("matmul m={m} k={k} n={n} blocks={block_dim} seed={seed}"),
        block_dim,
        args: vec![
            HostArg::Input(f32s_to_bytes(&a)),
            HostArg::Input(f32s_to_bytes(&b)),
            output_of(&c),
            u64_of(m),
            u64_of(k),
            u64_of(n),
        ],
        expected: vec![c],
        rtol: 1e-4,
        atol: 1e-4,
    }
}

/// Row-wise `softmax` of `x[rows][cols]`: x uniform in [-8, 8). Args: `[x, y, rows, cols]`.
pub fn softmax_case(rows: usize, cols: usize, block_dim: u32, seed: u64) -> KernelCase {
    let mut rng = SplitMix64::new(seed);
    let x = rng.f32_vec(rows * cols, -8.0, 8.0);
    let y = compute::softmax(&x, rows, cols);
    KernelCase {
        kernel: "softmax",
        label: format!("softmax rows={rows} cols={cols} blocks={block_dim} seed={seed}"),
        block_dim,
        args: vec![
            HostArg::Input(f32s_to_bytes(&x)),
            output_of(&y),
            u64_of(rows),
            u64_of(cols),
        ],
        expected: vec![y],
        rtol: 1e-5,
        atol: 1e-6,
    }
}

/// Row-wise `rms_norm` of `x[rows][cols]` with gain `gamma[cols]` and `eps`: x uniform in [-2, 2),
/// gamma in [0.5, 1.5). Args: `[x, gamma, y, rows, cols, eps_bits]`.
pub fn rms_norm_case(rows: usize, cols: usize, eps: f32, block_dim: u32, seed: u64) -> KernelCase {
    let mut rng = SplitMix64::new(seed);
    let x = rng.f32_vec(rows * cols, -2.0, 2.0);
    let gamma = rng.f32_vec(cols, 0.5, 1.5);
    let y = compute::rms_norm(&x, &gamma, rows, cols, eps);
    KernelCase {
        kernel: "rms_norm",
        label: format!("rms_norm rows={rows} cols={cols} eps={eps:e} blocks={block_dim} seed={seed}"),
        block_dim,
        args: vec![
            HostArg::Input(f32s_to_bytes(&x)),
            HostArg::Input(f32s_to_bytes(&gamma)),
            output_of(&y),
            u64_of(rows),
            u64_of(cols),
            f32_bits(eps),
        ],
        expected: vec![y],
        rtol: 1e-5,
        atol: 1e-5,
    }
}

/// The shape of a paged-attention case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagedAttentionParams {
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads (divides `num_heads`; fewer than `num_heads` is grouped-query attention).
    pub num_kv_heads: usize,
    /// Elements per head vector (>= 1).
    pub head_dim: usize,
    /// Tokens per cache block (>= 1).
    pub block_size: usize,
    /// The context length of each sequence (one entry per sequence; 0 is allowed).
    pub context_lens: Vec<usize>,
    /// Physical cache blocks no sequence uses, filled with noise (a kernel reading them is wrong).
    pub spare_blocks: usize,
}

impl PagedAttentionParams {
    /// A small batch that covers the interesting paths: grouped-query heads, contexts shorter than
    /// a block, exactly whole blocks, and partial last blocks. 4 sequences x 4 heads, head_dim 16,
    /// block_size 4, contexts 5, 16, 1, 11, 2 spare blocks.
    pub fn small() -> Self {
        Self {
            num_heads: 4,
            num_kv_heads: 2,
            head_dim: 16,
            block_size: 4,
            context_lens: vec![5, 16, 1, 11],
            spare_blocks: 2,
        }
    }
}

/// Paged-attention parameters that describe no valid launch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadPagedAttention {
    /// `num_kv_heads` is 0 or does not divide `num_heads`.
    #[error("num_kv_heads ({num_kv_heads}) must be at least 1 and divide num_heads ({num_heads})")]
    Heads {
        /// Query heads.
        num_heads: usize,
        /// Key/value heads.
        num_kv_heads: usize,
    },
    /// `head_dim` or `block_size` is 0.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// A context length does not fit the kernel's i32.
    #[error("context length {0} does not fit in an i32")]
    ContextTooLong(usize),
}

/// One `paged_attention` decode step of `params`'s shape. q, K and V are uniform in [-1, 1); the
/// scale is 1/sqrt(head_dim). Each sequence's logical blocks map to physical blocks through a
/// seeded shuffle of all blocks (so tables are not contiguous); padding slots and spare blocks are
/// noise and unused table entries are -1, so reading past a context changes the result.
///
/// Args: `[q, k_cache, v_cache, block_tables, context_lens, out, num_seqs, num_heads,
/// num_kv_heads, head_dim, block_size, max_blocks_per_seq, num_blocks, scale_bits]`;
/// `max_blocks_per_seq` and `num_blocks` are at least 1 so no buffer is empty.
pub fn paged_attention_case(
    params: &PagedAttentionParams,
    block_dim: u32,
    seed: u64,
) -> Result<KernelCase, BadPagedAttention> {
    let p = params;
    if p.num_kv_heads == 0 || p.num_heads % p.num_kv_heads != 0 {
        return Err(BadPagedAttention::Heads {
            num_heads: p.num_heads,
            num_kv_heads: p.num_kv_heads,
        });
    }
    if p.head_dim == 0 {
        return Err(BadPagedAttention::Zero("head_dim"));
    }
    if p.block_size == 0 {
        return Err(BadPagedAttention::Zero("block_size"));
    }
    let context_lens = p
        .context_lens
        .iter()
        .map(|&l| i32::try_from(l).map_err(|_| BadPagedAttention::ContextTooLong(l)))
        .collect::<Result<Vec<i32>, _>>()?;

    let num_seqs = p.context_lens.len();
    let blocks_of: Vec<usize> = p.context_lens.iter().map(|l| l.div_ceil(p.block_size)).collect();
    let max_blocks_per_seq = blocks_of.iter().copied().max().unwrap_or(0).max(1);
    let num_blocks = (blocks_of.iter().sum::<usize>() + p.spare_blocks).max(1);

    let mut rng = SplitMix64::new(seed);
    let mut physical: Vec<usize> = (0..num_blocks).collect();
    rng.shuffle(&mut physical);
    let mut free = physical.into_iter();
    let mut block_tables = vec![-1i32; num_seqs * max_blocks_per_seq];
    for (s, &nb) in blocks_of.iter().enumerate() {
        for entry in &mut block_tables[s * max_blocks_per_seq..][..nb] {
            // `num_blocks` counts every used block, so the shuffle never runs out.
            *entry = free.next().map_or(-1, |b| b as i32);
        }
    }

    let q = rng.f32_vec(num_seqs * p.num_heads * p.head_dim, -1.0, 1.0);
    let cache_len = num_blocks * p.block_size * p.num_kv_heads * p.head_dim;
    let k_cache = rng.f32_vec(cache_len, -1.0, 1.0);
    let v_cache = rng.f32_vec(cache_len, -1.0, 1.0);
    let scale = 1.0 / (p.head_dim as f32).sqrt();
    let out = compute::paged_attention(&PagedAttention {
        q: &q,
        k_cache: &k_cache,
        v_cache: &v_cache,
        block_tables: &block_tables,
        context_lens: &context_lens,
        num_heads: p.num_heads,
        num_kv_heads: p.num_kv_heads,
        head_dim: p.head_dim,
        block_size: p.block_size,
        max_blocks_per_seq,
        scale,
    });
    Ok(KernelCase {
        kernel: "paged_attention",
        label: format!(
            "paged_attention seqs={num_seqs} heads={}/{} head_dim={} block_size={} contexts={:?} \
             blocks={block_dim} seed={seed}",
            p.num_heads, p.num_kv_heads, p.head_dim, p.block_size, p.context_lens
        ),
        block_dim,
        args: vec![
            HostArg::Input(f32s_to_bytes(&q)),
            HostArg::Input(f32s_to_bytes(&k_cache)),
            HostArg::Input(f32s_to_bytes(&v_cache)),
            HostArg::Input(i32s_to_bytes(&block_tables)),
            HostArg::Input(i32s_to_bytes(&context_lens)),
            output_of(&out),
            u64_of(num_seqs),
            u64_of(p.num_heads),
            u64_of(p.num_kv_heads),
            u64_of(p.head_dim),
            u64_of(p.block_size),
            u64_of(max_blocks_per_seq),
            u64_of(num_blocks),
            f32_bits(scale),
        ],
        expected: vec![out],
        rtol: 1e-4,
        atol: 1e-5,
    })
}

/// One moderately sized case per compute kernel, with shapes that do not divide evenly by the
/// block dims, seeded from `seed` (each case gets its own derived seed).
pub fn standard_cases(seed: u64) -> Vec<KernelCase> {
    let s = |i: u64| seed.wrapping_add(i);
    let mut cases = vec![
        vector_add_case(1000, 8, s(0)),
        matmul_case(13, 17, 11, 4, s(1)),
        softmax_case(9, 33, 4, s(2)),
        rms_norm_case(7, 64, 1e-5, 4, s(3)),
    ];
    // `small()` is valid by construction.
    cases.extend(paged_attention_case(&PagedAttentionParams::small(), 4, s(4)));
    cases
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::CaseMismatch;
    use crate::spec::KERNELS;

    #[test]
    fn every_constructor_matches_its_spec() {
        let mut cases = standard_cases(1);
        cases.push(noop_case(1));
        cases.push(hang_case(2));
        assert_eq!(cases.len(), KERNELS.len());
        for case in &cases {
            assert!(case.matches_spec(), "{}", case.label);
            assert_eq!(case.output_sizes().len(), case.expected.len(), "{}", case.label);
            for (size, expected) in case.output_sizes().iter().zip(&case.expected) {
                assert_eq!(*size, expected.len() * 4, "{}", case.label);
            }
        }
    }

    #[test]
    fn the_expected_output_checks_and_a_perturbed_one_does_not() {
        for case in standard_cases(5) {
            let good: Vec<Vec<u8>> = case.expected.iter().map(|e| f32s_to_bytes(e)).collect();
            assert_eq!(case.check(&good), Ok(()), "{}", case.label);
            let mut bad = case.expected.clone();
            bad[0][3] += 0.01 + bad[0][3].abs() * 0.01;
            let bad: Vec<Vec<u8>> = bad.iter().map(|e| f32s_to_bytes(e)).collect();
            assert!(
                matches!(case.check(&bad), Err(CaseMismatch::Values { output: 0, .. })),
                "{}",
                case.label
            );
            assert!(matches!(
                case.check::<Vec<u8>>(&[]),
                Err(CaseMismatch::OutputCount { .. })
            ));
        }
    }

    #[test]
    fn paged_attention_tables_are_a_partial_permutation() {
        let params = PagedAttentionParams::small();
        let case = paged_attention_case(&params, 2, 9).unwrap();
        let HostArg::Input(tables) = &case.args[3] else {
            panic!("arg 3 is the block table")
        };
        let mut used: Vec<i32> = tables
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .filter(|&b| b >= 0)
            .collect();
        // contexts 5, 16, 1, 11 with block_size 4 use 2 + 4 + 1 + 3 blocks.
        assert_eq!(used.len(), 10);
        used.sort_unstable();
        used.dedup();
        assert_eq!(used.len(), 10, "a physical block is shared");
        assert!(used.iter().all(|&b| b < 12));
    }

    #[test]
    fn bad_paged_attention_params_are_rejected() {
        let mut p = PagedAttentionParams::small();
        p.num_kv_heads = 3;
        assert!(matches!(
            paged_attention_case(&p, 1, 0),
            Err(BadPagedAttention::Heads { .. })
        ));
        let mut p = PagedAttentionParams::small();
        p.block_size = 0;
        assert_eq!(
            paged_attention_case(&p, 1, 0),
            Err(BadPagedAttention::Zero("block_size"))
        );
    }
}
