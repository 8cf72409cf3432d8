//! `onboard-suite`: an example suite in its own crate, as a team would write one. Its binary is
//! the suite binary (dispatcher, and lane when the runner starts it as one), so it runs under
//! cardguard's whole containment chain: `cargo xtask onboard --package onboard-suite --arch a5`.
//!
//! - `chained`: kernel A's output is kernel B's input (this crate's `scale`, then the built-in
//!   `vector_add`), checked on the host; a bigger one tagged `slow`;
//! - `invariants`: checks that are not goldens (softmax rows sum to one, stay in [0, 1] and keep
//!   their argmax; `scale` by 1 and 0 is the identity);
//! - `calibrated`: a class fixture (a gain table built once per lane, uploaded once per worker);
//! - `bounds`: an expected failure (the kernel refuses a buffer shorter than its size: a device
//!   fault, in a standalone class, which heals the card).
//!
//! Its kernel (`kernels/scale.cpp`, ABI in `kernels/include/onboard_suite/kernels.h`) is built by
//! `build.rs`; the suite names the directory with [`Suite::kernel_dir`], and the built-in kernels
//! are found as well.

mod bounds;
mod calibrated;
mod chained;
mod invariants;

use runner::prelude::*;

/// This suite's runtime (the pool key its classes share).
fn runtime() -> Runtime {
    Runtime::new("onboard_suite")
}

/// The suite, for `arch`.
fn suite(arch: Arch) -> Suite {
    Suite::new()
        .kernel_dir(env!("ONBOARD_SUITE_KERNELS"))
        .class(chained::class(runtime()))
        .class(invariants::class(runtime(), arch))
        .class(calibrated::class(runtime()))
        .class(bounds::class(runtime()))
}

fn main() -> std::process::ExitCode {
    runner::app::main(suite)
}
