//! What a caller asks a device runner to run, and what it gets back.

/// One argument of a run, in the kernel's argument order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunArg {
    /// A buffer copied to the device before the launch; the kernel reads it.
    Input(Vec<u8>),
    /// A device buffer of this many bytes the kernel writes; copied back after the run.
    Output(usize),
    /// A scalar passed by value.
    Scalar(u64),
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

impl From<&crate::reference::KernelCase> for RunRequest {
    /// The request that launches a reference case: its kernel, block dim and arguments.
    fn from(case: &crate::reference::KernelCase) -> Self {
        use crate::reference::HostArg;
        let args = case
            .args
            .iter()
            .map(|a| match a {
                HostArg::Input(bytes) => RunArg::Input(bytes.clone()),
                HostArg::Output(len) => RunArg::Output(*len),
                HostArg::Scalar(v) => RunArg::Scalar(*v),
            })
            .collect();
        Self::new(case.kernel, case.block_dim, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::vector_add_case;

    #[test]
    fn a_reference_case_becomes_a_request_in_argument_order() {
        let case = vector_add_case(16, 2, 1);
        let req = RunRequest::from(&case);
        assert_eq!((req.kernel.as_str(), req.block_dim), ("vector_add", 2));
        assert!(matches!(req.args[0], RunArg::Input(ref b) if b.len() == 64));
        assert!(matches!(req.args[1], RunArg::Input(_)));
        assert_eq!(req.args[2], RunArg::Output(64));
        assert_eq!(req.args[3], RunArg::Scalar(16));
        assert_eq!(req.output_count(), 1);
    }
}
