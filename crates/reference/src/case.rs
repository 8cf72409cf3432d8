//! A kernel case: everything needed to launch a kernel once and judge its outputs, for any
//! kernel (a built-in's or a suite's own).
//!
//! This file owns the description and its check. It knows no kernel by name (the built-ins' argument
//! lists are `spec`'s).

use crate::compare::{allclose, Mismatch};
use crate::data::bytes_to_f32s;

/// What one u64 argument carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// The address of a buffer the kernel reads.
    Input,
    /// The address of a buffer the kernel writes (its result).
    Output,
    /// A value passed as is (a size, or an f32's bits).
    Scalar,
}

/// One u64 argument of a launch, as the host prepares it.
#[derive(Debug, Clone, PartialEq)]
pub enum HostArg {
    /// A buffer to allocate, fill with these bytes, and pass by address.
    Input(Vec<u8>),
    /// A buffer of this many bytes to allocate (zeroed), pass by address, and read back.
    Output(usize),
    /// A value passed as is.
    Scalar(u64),
}

impl HostArg {
    /// What this argument carries.
    pub fn kind(&self) -> ArgKind {
        match self {
            HostArg::Input(_) => ArgKind::Input,
            HostArg::Output(_) => ArgKind::Output,
            HostArg::Scalar(_) => ArgKind::Scalar,
        }
    }
}

/// One launch of a kernel with its inputs, and the outputs it must produce.
///
/// To run it: allocate a buffer per [`HostArg::Input`] (copy the bytes in) and per
/// [`HostArg::Output`] (that many bytes), build the u64 argument list in `args` order (buffers by
/// address, scalars by value), run blocks `0..block_dim`, read the outputs back in order and pass
/// them to [`KernelCase::check`].
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCase {
    /// The kernel (blob) name.
    pub kernel: &'static str,
    /// A short description of the shape and seed, e.g. `vector_add n=1000 seed=1`.
    pub label: String,
    /// How many blocks to launch.
    pub block_dim: u32,
    /// The kernel's arguments, in its order (a built-in's: [`crate::spec::KERNELS`]).
    pub args: Vec<HostArg>,
    /// The expected contents of each [`HostArg::Output`], in argument order.
    pub expected: Vec<Vec<f32>>,
    /// Relative tolerance of the check.
    pub rtol: f32,
    /// Absolute tolerance of the check.
    pub atol: f32,
}

/// How a case's outputs differ from what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaseMismatch {
    /// A different number of outputs than the case has.
    #[error("{actual} outputs where the case has {expected}")]
    OutputCount {
        /// Outputs the case has.
        expected: usize,
        /// Outputs given.
        actual: usize,
    },
    /// An output buffer of the wrong size.
    #[error("output {output} has {actual} bytes, expected {expected}")]
    OutputSize {
        /// Output index (among outputs).
        output: usize,
        /// Bytes expected.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// An output whose values are out of tolerance.
    #[error("output {output}: {mismatch}")]
    Values {
        /// Output index (among outputs).
        output: usize,
        /// How the values differ.
        #[source]
        mismatch: Mismatch,
    },
}

impl KernelCase {
    /// The sizes in bytes of the output buffers, in argument order.
    pub fn output_sizes(&self) -> Vec<usize> {
        self.args
            .iter()
            .filter_map(|a| match a {
                HostArg::Output(n) => Some(*n),
                _ => None,
            })
            .collect()
    }

    /// Checks the bytes read back from the output buffers (in argument order) against
    /// [`KernelCase::expected`] with the case's tolerances.
    pub fn check<B: AsRef<[u8]>>(&self, outputs: &[B]) -> Result<(), CaseMismatch> {
        if outputs.len() != self.expected.len() {
            return Err(CaseMismatch::OutputCount {
                expected: self.expected.len(),
                actual: outputs.len(),
            });
        }
        for (output, (bytes, expected)) in outputs.iter().zip(&self.expected).enumerate() {
            let bytes = bytes.as_ref();
            let size_err = CaseMismatch::OutputSize {
                output,
                expected: expected.len() * 4,
                actual: bytes.len(),
            };
            if bytes.len() != expected.len() * 4 {
                return Err(size_err);
            }
            let actual = bytes_to_f32s(bytes).map_err(|_| size_err)?;
            allclose(&actual, expected, self.rtol, self.atol)
                .map_err(|mismatch| CaseMismatch::Values { output, mismatch })?;
        }
        Ok(())
    }
}
