//! Kernel cases and their host references: a kernel launch described with its inputs, its
//! expected outputs and tolerances ([`KernelCase`]), the comparison that judges what came back
//! ([`KernelCase::check`], [`allclose`]), and the host references of the built-in kernels under
//! `kernels/`, computed in Rust from seeded inputs.
//!
//! Two parts, and the first never uses the second:
//! - for any kernel (what a suite author writes a kernel of their own with, and what the runner's
//!   authoring API builds on): [`case`] ([`KernelCase`], [`HostArg`], [`ArgKind`] and the
//!   check), [`compare`] ([`allclose`], [`Mismatch`]), [`data`] (the seeded generator
//!   [`SplitMix64`] and the byte packing, native-endian as kernels read host memory), and
//!   `request` (a case as the device runner's `RunRequest`);
//! - the built-in kernels: [`spec`](mod@spec) (the argument list of every kernel, [`KERNELS`], in
//!   the order `cg_kernel_main` reads them, written at the top of each `kernels/<name>.cpp` too),
//!   [`compute`] (the reference computations) and [`cases`] (parametric constructors, one per
//!   kernel: `vector_add_case`, `matmul_case`, ...).
//!
//! Its users: the runner's built-in suite and benchmark cases, the authoring API (through the
//! first part only), the test kit (`cardguard-test-support`), the golden tests and the sim-acl
//! parity test, which need no runner for it. This crate never runs a kernel: the simulator, the
//! runner and the golden tests do, and compare what came back with [`KernelCase::check`].

pub mod case;
pub mod cases;
pub mod compare;
pub mod compute;
pub mod data;
mod request;
pub mod spec;

pub use case::{ArgKind, CaseMismatch, HostArg, KernelCase};
pub use cases::{
    hang_case, matmul_case, noop_case, paged_attention_case, rms_norm_case, softmax_case, standard_cases,
    vector_add_case, BadPagedAttention, PagedAttentionParams,
};
pub use compare::{allclose, Mismatch};
pub use data::{bytes_to_f32s, f32s_to_bytes, i32s_to_bytes, BadByteLength, SplitMix64};
pub use spec::{spec, ArgSpec, KernelSpec, COMPUTE_KERNELS, KERNELS};
