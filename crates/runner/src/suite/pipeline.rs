//! Classes of launches without a single-kernel focus, on `host_build_graph`:
//!
//! - `MultiLaunch`: several kernels in one case, run in order on one worker, each launch checked
//!   against its own goldens (a decoder-layer-like sequence, every compute kernel, repeats of one
//!   kernel, noops between compute launches).
//! - `Noop`: the probe kernel as a case (one block: its blob is written for one), once and many
//!   times in a row (the worker's per-launch path with no compute).

use cardguard_reference::{
    matmul_case, noop_case, paged_attention_case, rms_norm_case, softmax_case, standard_cases,
    vector_add_case, KernelCase, PagedAttentionParams,
};
use platform_common::Arch;

use super::runtimes;
use crate::case::{CaseSpec, ClassSpec, Suite};

/// The pipeline classes of `arch`.
pub fn builtin(arch: Arch) -> Suite {
    let _ = arch;
    Suite::new().class(multi_launch_class()).class(noop_class())
}

/// Derived seed `i` of a case seed (one per launch, so no two launches share inputs).
fn sub(seed: u64, i: u64) -> u64 {
    seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// A decoder layer's kernels in order: norm, projection, scores, attention, residual add.
fn decoder_layer(seed: u64) -> Vec<KernelCase> {
    let mut launches = vec![
        rms_norm_case(4, 64, 1e-5, 4, sub(seed, 0)),
        matmul_case(4, 64, 32, 4, sub(seed, 1)),
        softmax_case(4, 32, 2, sub(seed, 2)),
    ];
    // `small()` is valid by construction.
    launches.extend(paged_attention_case(
        &PagedAttentionParams::small(),
        4,
        sub(seed, 3),
    ));
    launches.push(vector_add_case(256, 4, sub(seed, 4)));
    launches
}

fn multi_launch_class() -> ClassSpec {
    let all = ["vector_add", "matmul", "softmax", "rms_norm", "paged_attention"];
    let mut every_kernel = all.to_vec();
    every_kernel.push("noop");
    ClassSpec::pooled("MultiLaunch", runtimes::host_build_graph()).cases([
        CaseSpec::compute("decoder_layer", &all, |_, seed| decoder_layer(seed)),
        CaseSpec::compute("every_kernel", &every_kernel, |_, seed| {
            let mut launches = standard_cases(seed);
            launches.push(noop_case(1));
            launches
        }),
        CaseSpec::compute("vector_add_x4", &["vector_add"], |_, seed| {
            [(16, 1), (300, 3), (1024, 4), (77, 8)]
                .into_iter()
                .enumerate()
                .map(|(i, (n, b))| vector_add_case(n, b, sub(seed, i as u64)))
                .collect::<Vec<_>>()
        }),
        CaseSpec::compute("noops_between", &["noop", "matmul", "softmax"], |_, seed| {
            vec![
                noop_case(1),
                matmul_case(8, 8, 8, 2, sub(seed, 0)),
                noop_case(1),
                softmax_case(8, 8, 2, sub(seed, 1)),
                noop_case(1),
            ]
        }),
    ])
}

fn noops(name: &str, launches: usize) -> CaseSpec {
    CaseSpec::compute(name, &["noop"], move |_, _| vec![noop_case(1); launches])
}

fn noop_class() -> ClassSpec {
    ClassSpec::pooled("Noop", runtimes::host_build_graph()).cases([
        noops("once", 1),
        noops("twice", 2),
        noops("x16", 16),
        noops("x64", 64),
    ])
}
