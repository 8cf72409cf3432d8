//! Dense classes: `Matmul` (`tensormap_and_ringbuffer`), `Softmax` and `RmsNorm`
//! (`host_build_graph`).
//!
//! Shapes cover the degenerate 1-element case, shapes that do not divide by the block dim, more
//! blocks than rows, and long rows; one `Softmax` case runs only on a5 and one `RmsNorm` case only
//! on a2a3.

use cardguard_reference::{matmul_case, rms_norm_case, softmax_case};
use platform_common::Arch;

use super::runtimes;
use crate::case::{CaseSpec, ClassSpec, Suite};

/// The dense classes of `arch`.
pub fn builtin(arch: Arch) -> Suite {
    let _ = arch;
    Suite::new()
        .class(matmul_class())
        .class(softmax_class())
        .class(rms_norm_class())
}

fn matmul(name: &str, (m, k, n): (usize, usize, usize), block_dim: u32) -> CaseSpec {
    CaseSpec::compute(name, &["matmul"], move |_, seed| {
        matmul_case(m, k, n, block_dim, seed)
    })
}

fn matmul_class() -> ClassSpec {
    ClassSpec::pooled("Matmul", runtimes::tensormap_and_ringbuffer()).cases([
        matmul("scalar", (1, 1, 1), 1),
        matmul("uneven_13x17x11", (13, 17, 11), 4),
        matmul("square_32", (32, 32, 32), 8),
        matmul("tall_64x8x4", (64, 8, 4), 8),
        matmul("wide_4x8x64", (4, 8, 64), 2),
        matmul("more_blocks_than_rows", (5, 3, 7), 8),
    ])
}

fn softmax(name: &str, rows: usize, cols: usize, block_dim: u32) -> CaseSpec {
    CaseSpec::compute(name, &["softmax"], move |_, seed| {
        softmax_case(rows, cols, block_dim, seed)
    })
}

fn softmax_class() -> ClassSpec {
    ClassSpec::pooled("Softmax", runtimes::host_build_graph()).cases([
        softmax("single", 1, 1, 1),
        softmax("uneven_9x33", 9, 33, 4),
        softmax("rows16x256", 16, 256, 8),
        softmax("long_rows_3x1000", 3, 1000, 5),
        softmax("a5_row4096", 2, 4096, 2).only_on(&[Arch::A5]),
    ])
}

fn rms_norm(name: &str, rows: usize, cols: usize, eps: f32, block_dim: u32) -> CaseSpec {
    CaseSpec::compute(name, &["rms_norm"], move |_, seed| {
        rms_norm_case(rows, cols, eps, block_dim, seed)
    })
}

fn rms_norm_class() -> ClassSpec {
    ClassSpec::pooled("RmsNorm", runtimes::host_build_graph()).cases([
        rms_norm("single", 1, 1, 1e-6, 1),
        rms_norm("hidden64", 7, 64, 1e-5, 4),
        rms_norm("hidden512", 16, 512, 1e-5, 8),
        rms_norm("large_eps", 2, 3, 0.5, 3),
        rms_norm("a2a3_hidden1024", 4, 1024, 1e-6, 8).only_on(&[Arch::A2a3]),
    ])
}
