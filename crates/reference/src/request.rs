//! A reference case as the device runner's request: its kernel, block dim and arguments, in
//! argument order. This file owns that one conversion; it never runs anything.

use platform_common::runner_base::{RunArg, RunRequest};

use super::case::{HostArg, KernelCase};

impl From<&KernelCase> for RunRequest {
    /// The request that launches a reference case: its kernel, block dim and arguments.
    fn from(case: &KernelCase) -> Self {
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
    use crate::vector_add_case;

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
