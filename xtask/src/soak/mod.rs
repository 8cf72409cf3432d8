//! `cargo xtask soak [--runs N]`: every test binary of the workspace, N times each, while busy loops
//! load every core; prints each failing test with its count and closes with
//! `soak: <B> binaries x <N> runs: <F> failed` (F counts failed test runs, plus runs of a binary
//! that crashed or ran past its bound). Exit 1 when F > 0, 2 when the binaries cannot be built.
//!
//! - `build`: `cargo test --workspace --all-features --no-run` and its test executables;
//! - `exec`: one run of one binary, as cargo runs it, bounded, in its own process group;
//! - `libtest`: which tests a run's output says failed;
//! - `busy`: the busy loops;
//! - `command`: the flags, the loop and the output.

mod build;
mod busy;
mod command;
mod exec;
mod libtest;

pub use command::{run, Args};
