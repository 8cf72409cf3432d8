//! Element-wise classes: `VectorAdd`, `BlockDimSweep` and `MultiCard`.
//!
//! - `VectorAdd` (`tensormap_and_ringbuffer`): shapes that do and do not divide by the block dim,
//!   and more blocks than elements.
//! - `BlockDimSweep` (`aicpu_build_graph`, SDMA on a2a3): one shape over every block dim from 1 to
//!   the 8 blocks the `vector_add` blob is written for (the runner refuses more; both arches allow
//!   more: 36 on a5, 24 on a2a3).
//! - `MultiCard` (`host_build_graph`): a case that needs two cards; a run with fewer skips it with
//!   a reason.

use cardguard_reference::vector_add_case;
use platform_common::Arch;

use super::runtimes;
use crate::case::{CaseSpec, ClassSpec, Suite};

/// The element-wise classes of `arch`.
pub fn builtin(arch: Arch) -> Suite {
    Suite::new()
        .class(vector_add_class())
        .class(block_dim_sweep_class(arch))
        .class(multi_card_class())
}

fn vector_add(name: &str, n: usize, block_dim: u32) -> CaseSpec {
    CaseSpec::compute(name, &["vector_add"], move |_, seed| {
        vector_add_case(n, block_dim, seed)
    })
}

fn vector_add_class() -> ClassSpec {
    ClassSpec::pooled("VectorAdd", runtimes::tensormap_and_ringbuffer()).cases([
        vector_add("single_element", 1, 1),
        vector_add("n64_blocks4", 64, 4),
        vector_add("uneven_n1000_blocks8", 1000, 8),
        vector_add("more_blocks_than_elements", 5, 8),
        vector_add("odd_n4099_blocks7", 4099, 7),
        vector_add("n16384_blocks8", 16384, 8),
    ])
}

/// Elements of every `BlockDimSweep` case: a prime, so no block dim divides it.
const SWEEP_N: usize = 997;
/// The widest `BlockDimSweep` launch: the block dim the `vector_add` blob is written for.
const SWEEP_MAX_BLOCKS: u32 = 8;

fn block_dim_sweep_class(arch: Arch) -> ClassSpec {
    let class = ClassSpec::pooled("BlockDimSweep", runtimes::aicpu_build_graph(arch));
    class.cases((1..=SWEEP_MAX_BLOCKS).map(|b| vector_add(&format!("blocks{b}"), SWEEP_N, b)))
}

fn multi_card_class() -> ClassSpec {
    ClassSpec::pooled("MultiCard", runtimes::host_build_graph())
        .case(vector_add("vector_add_on_two_cards", 256, 4).devices(2))
}
