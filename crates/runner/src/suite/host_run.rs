//! Test support: runs one launch of the built-in suite on the host through its kernel blob (one
//! thread per block, as the simulated AICore does), so the suite's content can be checked against
//! its goldens without a card or the runner.
//!
//! Output buffers start as NaNs (an element no block writes fails the comparison) and carry a
//! canary tail (a block writing past its output is caught). The waiter reaps at once: compute
//! kernels never wait, so a wait is reported, never slept through.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use cardguard_reference::{HostArg, KernelCase};
use platform_common::kernel::{KernelBlob, WaitOutcome, Waiter};

/// The kernels' success status.
pub const KERNEL_OK: i32 = 0;

const CANARY_WORDS: usize = 4;
const CANARY: u64 = 0x5A5A_5A5A_5A5A_5A5A;
const UNWRITTEN: u64 = u64::MAX;

/// What one host run of a launch produced.
#[derive(Debug)]
pub struct HostRun {
    /// Each block's status.
    pub statuses: Vec<i32>,
    /// The output buffers' contents, in argument order.
    pub outputs: Vec<Vec<u8>>,
    /// Whether every output's canary tail survived.
    pub canaries_intact: bool,
    /// Calls to the wait API.
    pub waits: usize,
}

#[derive(Default)]
struct ReapAtOnce {
    calls: AtomicUsize,
}

impl Waiter for ReapAtOnce {
    fn wait(&self, _timeout: Duration) -> WaitOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        WaitOutcome::Reaped
    }
}

/// A host buffer: 8-byte aligned words, with a canary tail when it is an output.
struct Buffer {
    words: Vec<u64>,
    bytes: usize,
    output: bool,
}

impl Buffer {
    fn new(arg: &HostArg) -> Option<Self> {
        match arg {
            HostArg::Input(bytes) => Some(Self {
                words: bytes
                    .chunks(8)
                    .map(|c| {
                        let mut w = [0u8; 8];
                        w[..c.len()].copy_from_slice(c);
                        u64::from_ne_bytes(w)
                    })
                    .collect(),
                bytes: bytes.len(),
                output: false,
            }),
            HostArg::Output(bytes) => {
                let body = bytes.div_ceil(8);
                let mut words = vec![UNWRITTEN; body + CANARY_WORDS];
                words[body..].fill(CANARY);
                Some(Self {
                    words,
                    bytes: *bytes,
                    output: true,
                })
            }
            HostArg::Scalar(_) => None,
        }
    }

    fn contents(&self) -> Vec<u8> {
        let mut v: Vec<u8> = self.words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        v.truncate(self.bytes);
        v
    }

    fn canary_intact(&self) -> bool {
        self.words[self.bytes.div_ceil(8)..].iter().all(|&w| w == CANARY)
    }
}

/// Runs `launch` on `blob`: every block at once on its own thread.
pub fn run(blob: &KernelBlob, launch: &KernelCase) -> HostRun {
    let mut buffers: Vec<Option<Buffer>> = launch.args.iter().map(Buffer::new).collect();
    let (args, arg_bytes): (Vec<u64>, Vec<u64>) = launch
        .args
        .iter()
        .zip(&mut buffers)
        .map(|(arg, buf)| match (arg, buf) {
            (HostArg::Scalar(v), _) => (*v, 0),
            (_, Some(buf)) => (buf.words.as_mut_ptr() as u64, buf.bytes as u64),
            (_, None) => unreachable!("every buffer argument has a buffer"),
        })
        .unzip();
    let waiter = ReapAtOnce::default();
    let statuses = std::thread::scope(|s| {
        let handles: Vec<_> = (0..launch.block_dim)
            .map(|i| {
                let (args, arg_bytes, waiter) = (&args, &arg_bytes, &waiter);
                // SAFETY: each buffer length is the byte length of the host buffer its address
                // points to (its words hold at least that many bytes), alive for the scope.
                s.spawn(move || unsafe { blob.run_block(i, launch.block_dim, args, arg_bytes, waiter) })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a kernel block panicked"))
            .collect()
    });
    let outputs: Vec<&Buffer> = buffers.iter().flatten().filter(|b| b.output).collect();
    HostRun {
        statuses,
        outputs: outputs.iter().map(|b| b.contents()).collect(),
        canaries_intact: outputs.iter().all(|b| b.canary_intact()),
        waits: waiter.calls.load(Ordering::SeqCst),
    }
}
