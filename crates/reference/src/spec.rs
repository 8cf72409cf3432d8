//! The argument list of every built-in kernel, as data: the runner builds launches from it and the
//! golden tests check each blob's metadata against it. Keep in step with the comment at the top of
//! each `kernels/<name>.cpp`.

use crate::case::{ArgKind, KernelCase};

/// One argument of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgSpec {
    /// Its name, as in the kernel source.
    pub name: &'static str,
    /// What it carries.
    pub kind: ArgKind,
    /// Element type and shape, or the scalar's meaning.
    pub doc: &'static str,
}

/// A built-in kernel: its name, the block dim its blob declares, and its arguments in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSpec {
    /// Kernel name (the blob's file stem and metadata name).
    pub name: &'static str,
    /// The block dim in the blob's metadata (launches may use any block dim >= 1).
    pub block_dim: u32,
    /// The arguments, in the order the kernel reads them.
    pub args: &'static [ArgSpec],
    /// What it computes.
    pub doc: &'static str,
}

impl KernelSpec {
    /// How many arguments the kernel takes (its metadata's `num_args`).
    pub fn num_args(&self) -> u32 {
        self.args.len() as u32
    }
}

const fn input(name: &'static str, doc: &'static str) -> ArgSpec {
    ArgSpec {
        name,
        kind: ArgKind::Input,
        doc,
    }
}

const fn output(name: &'static str, doc: &'static str) -> ArgSpec {
    ArgSpec {
        name,
        kind: ArgKind::Output,
        doc,
    }
}

const fn scalar(name: &'static str, doc: &'static str) -> ArgSpec {
    ArgSpec {
        name,
        kind: ArgKind::Scalar,
        doc,
    }
}

/// Every built-in kernel.
pub const KERNELS: [KernelSpec; 7] = [
    KernelSpec {
        name: "noop",
        block_dim: 1,
        args: &[],
        doc: "does nothing and returns 0 (the post-reset probe)",
    },
    KernelSpec {
        name: "hang",
        block_dim: 1,
        args: &[],
        doc: "waits in the wait API until reaped, then returns CG_KERNEL_REAPED (2)",
    },
    KernelSpec {
        name: "vector_add",
        block_dim: 8,
        args: &[
            input("a", "f32[n]"),
            input("b", "f32[n]"),
            output("c", "f32[n] = a + b"),
            scalar("n", "element count"),
        ],
        doc: "c = a + b; blocks split [0, n)",
    },
    KernelSpec {
        name: "matmul",
        block_dim: 8,
        args: &[
            input("a", "f32[m][k]"),
            input("b", "f32[k][n]"),
            output("c", "f32[m][n] = a b"),
            scalar("m", "rows of a and c"),
            scalar("k", "columns of a, rows of b"),
            scalar("n", "columns of b and c"),
        ],
        doc: "C = A B, row-major; blocks split the rows of C",
    },
    KernelSpec {
        name: "softmax",
        block_dim: 8,
        args: &[
            input("x", "f32[rows][cols]"),
            output("y", "f32[rows][cols], softmax of each row"),
            scalar("rows", "row count"),
            scalar("cols", "row length"),
        ],
        doc: "row-wise numerically stable softmax; blocks split the rows",
    },
    KernelSpec {
        name: "rms_norm",
        block_dim: 8,
        args: &[
            input("x", "f32[rows][cols]"),
            input("gamma", "f32[cols]"),
            output("y", "f32[rows][cols] = x / sqrt(mean(x^2) + eps) * gamma"),
            scalar("rows", "row count"),
            scalar("cols", "row length"),
            scalar("eps", "f32 bits (f32::to_bits) in the low 32 bits"),
        ],
        doc: "row-wise RMS normalisation with a gain; blocks split the rows",
    },
    KernelSpec {
        name: "paged_attention",
        block_dim: 8,
        args: &[
            input("q", "f32[num_seqs][num_heads][head_dim]"),
            input("k_cache", "f32[num_blocks][block_size][num_kv_heads][head_dim]"),
            input("v_cache", "f32[num_blocks][block_size][num_kv_heads][head_dim]"),
            input(
                "block_tables",
                "i32[num_seqs][max_blocks_per_seq], unused entries -1",
            ),
            input(
                "context_lens",
                "i32[num_seqs], each <= max_blocks_per_seq * block_size",
            ),
            output("out", "f32[num_seqs][num_heads][head_dim]"),
            scalar("num_seqs", "sequences in the batch"),
            scalar("num_heads", "query heads"),
            scalar("num_kv_heads", "key/value heads (divides num_heads)"),
            scalar("head_dim", "elements per head vector"),
            scalar("block_size", "tokens per cache block"),
            scalar("max_blocks_per_seq", "row length of block_tables"),
            scalar("num_blocks", "physical blocks in each cache"),
            scalar("scale", "f32 bits of the score scale, usually 1/sqrt(head_dim)"),
        ],
        doc: "one decode step: each query head attends over its sequence's paged KV cache; blocks \
              split the (sequence, head) pairs",
    },
];

/// The kernels that compute something checkable (all but `noop` and `hang`).
pub const COMPUTE_KERNELS: [&str; 5] = ["vector_add", "matmul", "softmax", "rms_norm", "paged_attention"];

impl KernelCase {
    /// Whether `args` matches the kernel's argument list in [`KERNELS`] (kind by kind); false for
    /// a kernel that is not a built-in.
    pub fn matches_spec(&self) -> bool {
        spec(self.kernel).is_some_and(|s| {
            s.args.len() == self.args.len() && s.args.iter().zip(&self.args).all(|(s, a)| s.kind == a.kind())
        })
    }
}

/// The spec of kernel `name`.
pub fn spec(name: &str) -> Option<&'static KernelSpec> {
    KERNELS.iter().find(|k| k.name == name)
}
