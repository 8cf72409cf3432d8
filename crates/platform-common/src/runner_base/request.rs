//! What a caller asks a device runner to run, and what it gets back.

use super::buffers::BufferId;

/// One argument of a run, in the kernel's argument order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunArg {
    /// A buffer copied to the device before the launch; the kernel reads it.
    Input(Vec<u8>),
    /// A device buffer of this many bytes the kernel writes; copied back after the run.
    Output(usize),
    /// A scalar passed by value.
    Scalar(u64),
    /// A buffer the caller allocated ([`BufferId`]) that the kernel reads; it stays allocated.
    BufferIn(BufferId),
    /// A buffer the caller allocated that the kernel writes; read it back with a copy. It stays
    /// allocated (and is the buffer a `corrupt` fault perturbs when it is the first output).
    BufferOut(BufferId),
}

/// One run: a registered kernel, its block dim and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRequest {
    /// The kernel's registered name (its blob's `name`).
    pub kernel: String,
    /// AICore blocks to launch (1..=the arch's limit, and at most the blob's block dim).
    pub block_dim: u32,
    /// Arguments in the kernel's order.
    pub args: Vec<RunArg>,
}

impl RunRequest {
    /// A request for `kernel` with `block_dim` blocks and `args`.
    pub fn new(kernel: impl Into<String>, block_dim: u32, args: Vec<RunArg>) -> Self {
        Self {
            kernel: kernel.into(),
            block_dim,
            args,
        }
    }

    /// How many [`RunArg::Output`]s the request has.
    pub fn output_count(&self) -> usize {
        self.args
            .iter()
            .filter(|a| matches!(a, RunArg::Output(_)))
            .count()
    }
}

/// The result of a successful run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutput {
    /// The bytes of every [`RunArg::Output`], in argument order.
    pub outputs: Vec<Vec<u8>>,
}
