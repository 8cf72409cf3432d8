//! Golden tests of the built kernel blobs: every blob of both arches is loaded from the directory
//! `build.rs` filled and run on the host through `KernelBlob::run_block`, one thread per block, on
//! seeded inputs; outputs are compared with the Rust references in `reference`. Also: every
//! buffer of every kernel is bounds-checked (too short, absent, a scalar or misaligned: BAD_ARGS
//! with nothing written), `hang` returns once reaped, blob metadata matches the specs, and bad
//! loads are typed errors.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use cardguard_reference::{
    self as reference, f32s_to_bytes, matmul_case, paged_attention_case, rms_norm_case, softmax_case,
    vector_add_case, HostArg, KernelCase, PagedAttentionParams,
};
use platform_common::kernel::{
    built_blob_dir, load_named, KernelBlob, KernelError, WaitOutcome, Waiter, KERNEL_BAD_ARGS,
};
use platform_common::Arch;

const CG_KERNEL_OK: i32 = 0;
const CG_KERNEL_BAD_ARGS: i32 = 1;
const CG_KERNEL_REAPED: i32 = 2;

/// Bytes after every output buffer that must survive the kernel untouched.
const CANARY_WORDS: usize = 8;
const CANARY: u64 = 0xA5A5_A5A5_A5A5_A5A5;
/// Output buffers start as NaNs, so an element no block writes fails the comparison.
const UNWRITTEN: u64 = u64::MAX;

fn load(arch: Arch, name: &str) -> KernelBlob {
    load_named(&built_blob_dir(arch), arch, name).unwrap()
}

/// For compute kernels, which never wait: counts calls (the tests expect none).
#[derive(Default)]
struct NoWait {
    calls: AtomicUsize,
}

impl Waiter for NoWait {
    fn wait(&self, timeout: Duration) -> WaitOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(timeout);
        WaitOutcome::Woken
    }
}

/// A host buffer, 8-byte aligned, with a canary tail for outputs. An empty one still takes one
/// byte (`alloc`), as a driver refuses a zero-byte allocation: kernels refuse a zero-length buffer.
struct Buffer {
    words: Vec<u64>,
    bytes: usize,
    output: bool,
}

impl Buffer {
    fn input(bytes: &[u8]) -> Self {
        let mut words: Vec<u64> = bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_ne_bytes(w)
            })
            .collect();
        if words.is_empty() {
            words.push(0);
        }
        Self {
            words,
            bytes: bytes.len(),
            output: false,
        }
    }

    fn output(bytes: usize) -> Self {
        let body = bytes.max(1).div_ceil(8);
        let mut words = vec![UNWRITTEN; body + CANARY_WORDS];
        words[body..].fill(CANARY);
        Self {
            words,
            bytes,
            output: true,
        }
    }

    fn contents(&self) -> Vec<u8> {
        let mut v: Vec<u8> = self.words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        v.truncate(self.bytes);
        v
    }

    fn canary_intact(&self) -> bool {
        self.words[self.bytes.max(1).div_ceil(8)..]
            .iter()
            .all(|&w| w == CANARY)
    }

    /// The bytes the kernel is told are valid at its address.
    fn alloc(&self) -> u64 {
        self.bytes.max(1) as u64
    }

    /// Whether no element of this output was written.
    fn untouched(&self) -> bool {
        self.words[..self.bytes.div_ceil(8)]
            .iter()
            .all(|&w| w == UNWRITTEN)
    }
}

/// What a host run of a case produced.
struct Run {
    statuses: Vec<i32>,
    outputs: Vec<Vec<u8>>,
    canaries_intact: bool,
    /// No element of any output was written.
    outputs_untouched: bool,
    waits: usize,
}

/// A case's arguments as the kernel gets them: buffers allocated, addresses and lengths.
struct Prepared {
    buffers: Vec<Option<Buffer>>,
    args: Vec<u64>,
    arg_bytes: Vec<u64>,
}

fn prepare(case: &KernelCase) -> Prepared {
    let mut buffers: Vec<Option<Buffer>> = case
        .args
        .iter()
        .map(|a| match a {
            HostArg::Input(bytes) => Some(Buffer::input(bytes)),
            HostArg::Output(n) => Some(Buffer::output(*n)),
            HostArg::Scalar(_) => None,
        })
        .collect();
    let (args, arg_bytes) = case
        .args
        .iter()
        .zip(&mut buffers)
        .map(|(a, b)| match (a, b) {
            (HostArg::Scalar(v), _) => (*v, 0),
            (_, Some(buf)) => (buf.words.as_mut_ptr() as u64, buf.alloc()),
            (_, None) => unreachable!("every buffer argument has a buffer"),
        })
        .unzip();
    Prepared {
        buffers,
        args,
        arg_bytes,
    }
}

/// Runs blocks `0..block_dim` of `blob` on `p`: one thread per block, all at once, as the
/// simulated AICore does.
fn run_prepared(blob: &KernelBlob, block_dim: u32, p: &Prepared) -> Run {
    let waiter = NoWait::default();
    let statuses = std::thread::scope(|s| {
        let handles: Vec<_> = (0..block_dim)
            .map(|i| {
                let waiter = &waiter;
                // SAFETY: each non-zero length is at most the bytes of the buffer the address
                // points into (`prepare`, and the tests only shrink lengths or move addresses
                // inward by as much as they shrink them); the buffers outlive the scope.
                s.spawn(move || unsafe { blob.run_block(i, block_dim, &p.args, &p.arg_bytes, waiter) })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let outputs: Vec<&Buffer> = p.buffers.iter().flatten().filter(|b| b.output).collect();
    Run {
        statuses,
        outputs: outputs.iter().map(|b| b.contents()).collect(),
        canaries_intact: outputs.iter().all(|b| b.canary_intact()),
        outputs_untouched: outputs.iter().all(|b| b.untouched()),
        waits: waiter.calls.load(Ordering::SeqCst),
    }
}

/// Runs `case` on `blob`.
fn run_case(blob: &KernelBlob, case: &KernelCase) -> Run {
    run_prepared(blob, case.block_dim, &prepare(case))
}

/// Runs `case` on both arches' blobs and checks it against its reference.
fn check_golden(case: &KernelCase) {
    assert!(case.matches_spec(), "{}", case.label);
    for arch in Arch::ALL {
        let blob = load(arch, case.kernel);
        let run = run_case(&blob, case);
        assert!(
            run.statuses.iter().all(|&s| s == CG_KERNEL_OK),
            "{arch} {}: statuses {:?}",
            case.label,
            run.statuses
        );
        assert!(
            run.canaries_intact,
            "{arch} {}: a block wrote past an output",
            case.label
        );
        assert_eq!(run.waits, 0, "{arch} {}: a compute kernel waited", case.label);
        if let Err(e) = case.check(&run.outputs) {
            panic!("{arch} {}: {e}", case.label);
        }
    }
}

#[test]
fn vector_add_matches_reference() {
    for (n, block_dim) in [(0, 1), (1, 1), (7, 3), (1000, 8), (4099, 24), (5, 24)] {
        check_golden(&vector_add_case(n, block_dim, n as u64));
    }
}

#[test]
fn matmul_matches_reference() {
    for (m, k, n, block_dim) in [
        (1, 1, 1, 1),
        (13, 17, 11, 4),
        (32, 64, 16, 8),
        (5, 3, 7, 8),
        (4, 0, 3, 2),
    ] {
        check_golden(&matmul_case(m, k, n, block_dim, (m * k * n) as u64));
    }
}

#[test]
fn softmax_matches_reference() {
    for (rows, cols, block_dim) in [(1, 1, 1), (9, 33, 4), (16, 256, 8), (3, 1000, 5)] {
        check_golden(&softmax_case(rows, cols, block_dim, cols as u64));
    }
}

#[test]
fn rms_norm_matches_reference() {
    for (rows, cols, eps, block_dim) in [
        (1, 1, 1e-6, 1),
        (7, 64, 1e-5, 4),
        (16, 512, 1e-5, 8),
        (2, 3, 0.5, 3),
    ] {
        check_golden(&rms_norm_case(rows, cols, eps, block_dim, rows as u64));
    }
}

#[test]
fn paged_attention_matches_reference() {
    let small = PagedAttentionParams::small();
    let mha = PagedAttentionParams {
        num_heads: 3,
        num_kv_heads: 3,
        head_dim: 8,
        block_size: 1,
        context_lens: vec![1, 7, 0],
        spare_blocks: 3,
    };
    let long = PagedAttentionParams {
        num_heads: 8,
        num_kv_heads: 1,
        head_dim: 32,
        block_size: 16,
        context_lens: vec![100, 33, 64],
        spare_blocks: 4,
    };
    for (params, block_dim) in [(&small, 1), (&small, 4), (&small, 24), (&mha, 2), (&long, 8)] {
        check_golden(&paged_attention_case(params, block_dim, 42).unwrap());
    }
}

#[test]
fn standard_cases_pass_on_both_arches() {
    for case in reference::standard_cases(2026) {
        check_golden(&case);
    }
}

#[test]
fn a_wrong_result_is_caught() {
    // Ask vector_add to add only half the elements: the other half stays unwritten (NaN).
    let mut case = vector_add_case(64, 4, 3);
    case.args[3] = HostArg::Scalar(32);
    let run = run_case(&load(Arch::A5, "vector_add"), &case);
    assert!(run.statuses.iter().all(|&s| s == CG_KERNEL_OK));
    let err = case.check(&run.outputs).unwrap_err();
    assert!(err.to_string().contains("32 of 64 values"), "{err}");
}

/// Runs one block of `blob` with these arguments and lengths.
fn run_one(blob: &KernelBlob, block_idx: u32, block_dim: u32, args: &[u64], arg_bytes: &[u64]) -> i32 {
    // SAFETY: the callers pass lengths no larger than the host buffers the addresses point into.
    unsafe { blob.run_block(block_idx, block_dim, args, arg_bytes, &NoWait::default()) }
}

#[test]
fn malformed_launches_return_bad_args() {
    let blob = load(Arch::A2a3, "vector_add");
    let (a, b, mut c) = (vec![0f32; 4], vec![0f32; 4], vec![0f32; 4]);
    let args = [a.as_ptr() as u64, b.as_ptr() as u64, c.as_mut_ptr() as u64, 4];
    let bytes = [16, 16, 16, 0];
    assert_eq!(
        run_one(&blob, 0, 1, &args[..3], &bytes[..3]),
        CG_KERNEL_BAD_ARGS,
        "too few args"
    );
    assert_eq!(
        run_one(&blob, 0, 1, &args, &bytes[..3]),
        KERNEL_BAD_ARGS,
        "lengths of another count than the args"
    );
    assert_eq!(
        run_one(&blob, 1, 1, &args, &bytes),
        CG_KERNEL_BAD_ARGS,
        "block_idx >= block_dim"
    );
    assert_eq!(
        run_one(&blob, 0, 0, &args, &bytes),
        CG_KERNEL_BAD_ARGS,
        "block_dim 0"
    );
    let null_out = [args[0], args[1], 0, 4];
    assert_eq!(
        run_one(&blob, 0, 1, &null_out, &bytes),
        CG_KERNEL_BAD_ARGS,
        "null output"
    );
    assert_eq!(run_one(&blob, 0, 1, &args, &bytes), CG_KERNEL_OK);

    // A block table entry past the cache.
    let mut case = paged_attention_case(&PagedAttentionParams::small(), 1, 1).unwrap();
    let HostArg::Scalar(num_blocks) = case.args[12] else {
        panic!("arg 12 is num_blocks")
    };
    let HostArg::Input(tables) = &mut case.args[3] else {
        panic!("arg 3 is the block table")
    };
    tables[..4].copy_from_slice(&(num_blocks as i32).to_ne_bytes());
    let run = run_case(&load(Arch::A5, "paged_attention"), &case);
    assert_eq!(run.statuses, [CG_KERNEL_BAD_ARGS]);
    assert!(run.canaries_intact);
}

/// Runs `p` on both arches' `kernel` blobs and asserts every block refused it and nothing was
/// written.
fn assert_refused(kernel: &str, block_dim: u32, p: &Prepared, what: &str) {
    for arch in Arch::ALL {
        let run = run_prepared(&load(arch, kernel), block_dim, p);
        assert!(
            run.statuses.iter().all(|&s| s == CG_KERNEL_BAD_ARGS),
            "{arch} {kernel} {what}: statuses {:?}",
            run.statuses
        );
        assert!(
            run.canaries_intact,
            "{arch} {kernel} {what}: wrote past an output"
        );
        assert!(
            run.outputs_untouched,
            "{arch} {kernel} {what}: wrote an output before refusing"
        );
    }
}

/// The buffer arguments of `case`, by index.
fn buffer_slots(case: &KernelCase) -> Vec<usize> {
    (0..case.args.len())
        .filter(|&i| !matches!(case.args[i], HostArg::Scalar(_)))
        .collect()
}

#[test]
fn a_buffer_one_element_short_is_refused_before_any_write() {
    for case in reference::standard_cases(7) {
        for i in buffer_slots(&case) {
            let mut p = prepare(&case);
            // Every buffer of the standard cases holds 4-byte elements.
            assert!(p.arg_bytes[i] >= 4, "{}: arg {i}", case.label);
            p.arg_bytes[i] -= 4;
            assert_refused(
                case.kernel,
                case.block_dim,
                &p,
                &format!("arg {i} short by one element"),
            );
        }
    }
}

#[test]
fn a_huge_size_scalar_over_small_buffers_is_refused() {
    // The review's case: 4-byte buffers and n = 1 << 22.
    let mut case = vector_add_case(1, 1, 1);
    case.args[3] = HostArg::Scalar(1 << 22);
    assert_refused("vector_add", 1, &prepare(&case), "n = 1 << 22");
    // Shapes whose element counts overflow u64 are refused too.
    let mut case = matmul_case(2, 2, 2, 1, 1);
    case.args[3] = HostArg::Scalar(1 << 33);
    case.args[4] = HostArg::Scalar(1 << 33);
    assert_refused("matmul", 1, &prepare(&case), "m * k overflows");
}

#[test]
fn a_scalar_null_or_misaligned_address_in_a_buffer_slot_is_refused() {
    for case in reference::standard_cases(8) {
        for i in buffer_slots(&case) {
            // A scalar there: its value is even a real buffer's address, but no length comes with it.
            let mut p = prepare(&case);
            p.arg_bytes[i] = 0;
            assert_refused(case.kernel, case.block_dim, &p, &format!("scalar in arg {i}"));
            // A null address with a length.
            let mut p = prepare(&case);
            p.args[i] = 0;
            assert_refused(case.kernel, case.block_dim, &p, &format!("null arg {i}"));
            // An address inside the buffer, not aligned for its elements.
            let mut p = prepare(&case);
            p.args[i] += 1;
            p.arg_bytes[i] -= 1;
            assert_refused(case.kernel, case.block_dim, &p, &format!("misaligned arg {i}"));
        }
    }
}

#[test]
fn zero_sized_work_still_needs_its_buffers() {
    // n = 0 with real (one-byte) buffers is fine; with a scalar in a buffer slot it is not.
    check_golden(&vector_add_case(0, 1, 0));
    let p = {
        let mut p = prepare(&vector_add_case(0, 1, 0));
        p.arg_bytes[2] = 0;
        p
    };
    assert_refused("vector_add", 1, &p, "n = 0, scalar output");
}

#[test]
fn noop_returns_ok_on_every_block() {
    for arch in Arch::ALL {
        let blob = load(arch, "noop");
        let run = run_case(&blob, &reference::noop_case(4));
        assert_eq!(run.statuses, [CG_KERNEL_OK; 4], "{arch}");
        assert_eq!(run.waits, 0);
    }
}

/// Says Woken `woken_calls` times, then Reaped; records every call.
struct ReapAfter {
    woken_calls: usize,
    calls: AtomicUsize,
    zero_timeouts: AtomicUsize,
}

impl Waiter for ReapAfter {
    fn wait(&self, timeout: Duration) -> WaitOutcome {
        if timeout.is_zero() {
            self.zero_timeouts.fetch_add(1, Ordering::SeqCst);
        }
        if self.calls.fetch_add(1, Ordering::SeqCst) < self.woken_calls {
            WaitOutcome::Woken
        } else {
            WaitOutcome::Reaped
        }
    }
}

#[test]
fn hang_keeps_waiting_until_reaped_then_returns_at_once() {
    for arch in Arch::ALL {
        let waiter = ReapAfter {
            woken_calls: 5,
            calls: AtomicUsize::new(0),
            zero_timeouts: AtomicUsize::new(0),
        };
        // SAFETY: no arguments, so no addresses.
        let status = unsafe { load(arch, "hang").run_block(0, 1, &[], &[], &waiter) };
        assert_eq!(status, CG_KERNEL_REAPED, "{arch}");
        // Five Woken calls did not end it; the sixth (Reaped) did, with no call after it.
        assert_eq!(waiter.calls.load(Ordering::SeqCst), 6, "{arch}");
        assert_eq!(
            waiter.zero_timeouts.load(Ordering::SeqCst),
            0,
            "{arch}: hang busy-waits"
        );
    }
}

/// Reaped once `reaped` is set (by another thread); tells `waiting` each time a block waits.
struct FlagWaiter {
    reaped: AtomicBool,
    waiting: Mutex<mpsc::Sender<()>>,
}

impl Waiter for FlagWaiter {
    fn wait(&self, timeout: Duration) -> WaitOutcome {
        if self.reaped.load(Ordering::SeqCst) {
            return WaitOutcome::Reaped;
        }
        let _ = self.waiting.lock().unwrap().send(());
        // Honour the requested slice, as the simulator's wait does when nothing happens.
        std::thread::sleep(timeout);
        if self.reaped.load(Ordering::SeqCst) {
            WaitOutcome::Reaped
        } else {
            WaitOutcome::Woken
        }
    }
}

#[test]
fn hang_blocks_all_return_once_reaped_from_another_thread() {
    for arch in Arch::ALL {
        let blob = load(arch, "hang");
        let (tx, rx) = mpsc::channel();
        let waiter = FlagWaiter {
            reaped: AtomicBool::new(false),
            waiting: Mutex::new(tx),
        };
        let block_dim = 3;
        let results: Vec<(i32, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..block_dim)
                .map(|i| {
                    let (blob, waiter) = (&blob, &waiter);
                    s.spawn(move || {
                        // SAFETY: no arguments, so no addresses.
                        let status = unsafe { blob.run_block(i, block_dim, &[], &[], waiter) };
                        (status, waiter.reaped.load(Ordering::SeqCst))
                    })
                })
                .collect();
            // Wait until blocks are inside the wait API (several waits seen), then reap.
            for _ in 0..block_dim * 2 {
                rx.recv().unwrap();
            }
            waiter.reaped.store(true, Ordering::SeqCst);
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (status, reaped_when_returned) in results {
            assert_eq!(status, CG_KERNEL_REAPED, "{arch}");
            assert!(reaped_when_returned, "{arch}: hang returned before it was reaped");
        }
    }
}

#[test]
fn blob_metadata_matches_the_specs() {
    for arch in Arch::ALL {
        for spec in &reference::KERNELS {
            let blob = load(arch, spec.name);
            let meta = blob.meta();
            assert_eq!(meta.name, spec.name);
            assert_eq!(meta.arch, arch);
            assert_eq!(meta.block_dim, spec.block_dim, "{arch} {}", spec.name);
            assert_eq!(meta.num_args, spec.num_args(), "{arch} {}", spec.name);
            assert!(meta.block_dim <= runner::platform::arch_entry(arch).facts.max_block_dim());
        }
    }
}

#[test]
fn loading_for_the_wrong_arch_is_an_error() {
    let err = load_named(&built_blob_dir(Arch::A5), Arch::A2a3, "noop").unwrap_err();
    match err {
        KernelError::WrongArch { expected, found, .. } => {
            assert_eq!((expected, found), (Arch::A2a3, Arch::A5));
        }
        other => panic!("expected WrongArch, got {other}"),
    }
}

#[test]
fn loading_a_non_blob_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("junk.so"), b"this is not a shared object").unwrap();
    assert!(matches!(
        load_named(dir.path(), Arch::A5, "junk"),
        Err(KernelError::Open { .. })
    ));
    assert!(matches!(
        load_named(dir.path(), Arch::A5, "absent"),
        Err(KernelError::NotFound { arch: Arch::A5, .. })
    ));
    // A real blob under another kernel's name.
    let noop = platform_common::kernel::blob_path(&built_blob_dir(Arch::A5), "noop");
    std::fs::copy(noop, dir.path().join("matmul.so")).unwrap();
    assert!(matches!(
        load_named(dir.path(), Arch::A5, "matmul"),
        Err(KernelError::Meta { .. })
    ));
}

#[test]
fn f32_outputs_round_trip_through_the_harness() {
    // The harness itself: an input buffer's bytes come back unchanged.
    let bytes = f32s_to_bytes(&[1.0, 2.5, -3.0]);
    assert_eq!(Buffer::input(&bytes).contents(), bytes);
    assert!(Buffer::output(12).canary_intact());
}
