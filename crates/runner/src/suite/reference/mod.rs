//! Host references for the built-in kernels: what each kernel's arguments are, deterministic
//! inputs from a seed, the expected outputs computed in Rust, and the tolerance check.
//!
//! They live with the built-in suite, their user; the test kit (`cardguard-test-support`) and the
//! golden tests use them from here. The parts a suite author needs for a kernel of their own
//! ([`KernelCase`] and its check, [`allclose`], [`SplitMix64`] and the byte packing) are public,
//! so a suite in its own crate, which links the runner, can use them as they are.
//!
//! - [`spec`](mod@spec): the argument list of every kernel ([`KERNELS`]), in the order `cg_kernel_main`
//!   reads them; the same order is written at the top of each `kernels/<name>.cpp`.
//! - [`case`]: [`KernelCase`], a ready-to-launch description (host inputs, output sizes, scalars,
//!   expected outputs, tolerances) and its output check.
//! - [`cases`]: parametric constructors, one per kernel (`vector_add_case`, `matmul_case`, ...).
//! - [`compute`]: the reference computations themselves.
//! - [`data`]: the seeded generator and byte packing (native-endian, as kernels read host memory).
//! - [`compare`]: [`allclose`] and [`Mismatch`].
//! - `request`: a case as the device runner's `RunRequest` (`From<&KernelCase>`).
//!
//! This module never runs a kernel: the simulator, the runner and the golden tests do, and compare
//! what came back with [`KernelCase::check`].

pub mod case;
pub mod cases;
pub mod compare;
pub mod compute;
pub mod data;
mod request;
pub mod spec;

pub use case::{CaseMismatch, HostArg, KernelCase};
pub use cases::{
    hang_case, matmul_case, noop_case, paged_attention_case, rms_norm_case, softmax_case, standard_cases,
    vector_add_case, BadPagedAttention, PagedAttentionParams,
};
pub use compare::{allclose, Mismatch};
pub use data::{bytes_to_f32s, f32s_to_bytes, i32s_to_bytes, BadByteLength, SplitMix64};
pub use spec::{spec, ArgKind, ArgSpec, KernelSpec, COMPUTE_KERNELS, KERNELS};
