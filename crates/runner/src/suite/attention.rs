//! Paged-attention classes, both on `tensormap_and_ringbuffer` (the runtime of the seed's
//! cascades):
//!
//! - `PagedAttentionUnrollManualScope`: each case runs several decode steps on one worker; every
//!   step adds one token to each sequence's context (crossing block boundaries on the way), with
//!   fresh inputs and goldens per step. Shapes vary heads (MHA, GQA, MQA), head dim, block size
//!   and context lengths.
//! - `PagedAttentionManualScope`: one decode step per case, over edge shapes (empty contexts, one
//!   token, many sequences, a wide head).
//!
//! Each class has one case that runs on one arch only: the seed's cascades were triggered by an
//! unrolled paged-attention case on a5 and a single-step one on a2a3.
//!
//! A shape here is valid by construction (the tests check every one); were one not, the generator
//! logs why and returns no launch, which the runner reports as a usage failure of that case.

use cardguard_reference::{paged_attention_case, KernelCase, PagedAttentionParams};
use platform_common::Arch;

use super::runtimes;
use crate::case::{CaseSpec, ClassSpec, Suite, Workload};

/// The paged-attention classes of `arch`.
pub fn builtin(arch: Arch) -> Suite {
    let _ = arch;
    Suite::new().class(unroll_class()).class(single_step_class())
}

/// A paged-attention shape: `heads` query heads over `kv_heads` key/value heads.
fn shape(
    (heads, kv_heads): (usize, usize),
    head_dim: usize,
    block_size: usize,
    context_lens: &[usize],
) -> PagedAttentionParams {
    PagedAttentionParams {
        num_heads: heads,
        num_kv_heads: kv_heads,
        head_dim,
        block_size,
        context_lens: context_lens.to_vec(),
        spare_blocks: 2,
    }
}

/// `steps` decode steps from `start`: step `i` grows every context by `i` tokens and draws its
/// inputs from `seed + i`.
fn decode_steps(start: &PagedAttentionParams, steps: usize, block_dim: u32, seed: u64) -> Workload {
    let launches: Result<Vec<KernelCase>, _> = (0..steps)
        .map(|i| {
            let mut p = start.clone();
            for len in &mut p.context_lens {
                *len += i;
            }
            paged_attention_case(&p, block_dim, seed.wrapping_add(i as u64))
        })
        .collect();
    match launches {
        Ok(launches) => Workload { launches },
        Err(e) => {
            tracing::error!(params = ?start, "bad paged-attention shape in the built-in suite: {e}");
            Workload::default()
        }
    }
}

fn unrolled(name: &str, start: PagedAttentionParams, steps: usize, block_dim: u32) -> CaseSpec {
    CaseSpec::compute(name, &["paged_attention"], move |_, seed| {
        decode_steps(&start, steps, block_dim, seed)
    })
}

fn unroll_class() -> ClassSpec {
    ClassSpec::pooled(
        "PagedAttentionUnrollManualScope",
        runtimes::tensormap_and_ringbuffer(),
    )
    .cases([
        unrolled("gqa4x2_bs4_4steps", PagedAttentionParams::small(), 4, 4),
        unrolled("mha3_bs1_3steps", shape((3, 3), 8, 1, &[1, 7, 0]), 3, 2),
        unrolled("mqa8x1_bs16_2steps", shape((8, 1), 32, 16, &[100, 33, 64]), 2, 8),
        unrolled(
            "block_boundary_bs8_3steps",
            shape((4, 4), 16, 8, &[7, 15, 8]),
            3,
            3,
        ),
        unrolled("single_seq_bs32_4steps", shape((2, 1), 64, 32, &[190]), 4, 1),
        unrolled("gqa8x2_hd64_2steps", shape((8, 2), 64, 16, &[40, 1, 77]), 2, 8),
        // The a5 cascade's trigger was an unrolled paged-attention class on a5.
        unrolled("a5_mqa16x1_bs64_3steps", shape((16, 1), 32, 64, &[129, 63]), 3, 8).only_on(&[Arch::A5]),
    ])
}

fn single_step(name: &str, params: PagedAttentionParams, block_dim: u32) -> CaseSpec {
    unrolled(name, params, 1, block_dim)
}

fn single_step_class() -> ClassSpec {
    let many_seqs: Vec<usize> = (1..=8).map(|i| i * 3).collect();
    ClassSpec::pooled("PagedAttentionManualScope", runtimes::tensormap_and_ringbuffer()).cases([
        single_step("gqa4x2_bs4", PagedAttentionParams::small(), 4),
        single_step("empty_contexts", shape((4, 2), 16, 4, &[0, 3, 0]), 2),
        single_step("one_token", shape((2, 2), 16, 4, &[1]), 1),
        single_step("many_seqs", shape((4, 1), 16, 4, &many_seqs), 8),
        single_step("wide_head_dim128", shape((2, 1), 128, 8, &[17, 9]), 4),
        // The a2a3 cascade's trigger was a paged-attention class on a2a3.
        single_step("a2a3_gqa6x3_bs2", shape((6, 3), 16, 2, &[9, 2, 31, 4]), 6).only_on(&[Arch::A2a3]),
    ])
}
