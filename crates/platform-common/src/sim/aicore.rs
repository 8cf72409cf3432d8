//! Running one AICore op: `block_dim` threads, each running one block of a real kernel blob, the
//! reaper that enforces the op-execute timeout, and the op's stall clock.
//!
//! The reaper counts only time a block spends blocked in the kernel wait API: a block whose
//! cumulative waiting exceeds the op's op-execute timeout is reaped (its wait returns
//! [`WaitOutcome::Reaped`]), and so is every other block of the op the next time it waits. Compute
//! time never counts, so a loaded machine causes no false timeouts.
//!
//! The stall clock ([`OpControl::stalled`]) is the time during which every block of the op that
//! has not returned is blocked in the wait API (a block not started yet is not blocked: it waits
//! for a host CPU, not for the device). The stream sync counts only that time, by the same rule as
//! the reaper. Each time the op enters or leaves that state, the op calls the stream's notifier,
//! so a sync waiting on it recomputes its deadline.
//!
//! This file never touches streams, contexts or card files; it returns the op's result code to
//! the stream worker.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::memory::DeviceBuffer;
use crate::arch::ArchFacts;
use crate::error::{codes, Code};
use crate::kernel::{KernelBlob, WaitOutcome, Waiter};

/// How an op's kernel is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpMode {
    /// As launched.
    Normal,
    /// Replaced by a hang: every block waits until reaped (`op_timeout@K`).
    Hang,
    /// As launched, then the first output buffer is perturbed (`corrupt@K`).
    Corrupt,
    /// The kernel does not run: the op fails on the device with this code, which the stream's
    /// sync then reports and which poisons the context (`sync_fail@K=CODE`).
    Fail(Code),
}

/// One queued AICore launch.
#[derive(Debug)]
pub(crate) struct AicoreOp {
    pub(crate) blob: KernelBlob,
    pub(crate) block_dim: u32,
    /// Arguments as the kernel receives them (buffers as addresses).
    pub(crate) args: Vec<u64>,
    /// Per argument, the bytes valid from its address to the end of its allocation (0: scalar).
    pub(crate) arg_bytes: Vec<u64>,
    /// The buffers the arguments point into, kept alive until the op is done.
    pub(crate) _buffers: Vec<Arc<DeviceBuffer>>,
    /// The first output buffer and the argument's offset into it (what `corrupt` perturbs).
    pub(crate) first_output: Option<(Arc<DeviceBuffer>, usize)>,
    pub(crate) mode: OpMode,
    /// The op-execute timeout in force when the op was launched.
    pub(crate) op_timeout: Duration,
    pub(crate) arch: ArchFacts,
}

#[derive(Debug, Default)]
struct Flags {
    reaped: bool,
    cancelled: bool,
    /// Blocks that have not returned (blocks not started yet included).
    unfinished: u32,
    /// Blocks blocked in the wait API right now.
    waiting: u32,
    /// Since when every unfinished block has been waiting, while that lasts.
    stalled_since: Option<Instant>,
    /// Stalled time before `stalled_since`.
    stalled_before: Duration,
}

impl Flags {
    /// Brings the stall clock up to date after `waiting` or `unfinished` changed; true when the
    /// op entered or left the stalled state.
    fn restall(&mut self) -> bool {
        let stalled = self.waiting > 0 && self.waiting >= self.unfinished;
        match (self.stalled_since, stalled) {
            (None, true) => {
                self.stalled_since = Some(Instant::now());
                true
            }
            (Some(since), false) => {
                self.stalled_before += since.elapsed();
                self.stalled_since = None;
                true
            }
            _ => false,
        }
    }
}

/// What a block calls when its op enters or leaves the stalled state (the stream's notifier).
pub(crate) type StallNotify<'a> = &'a (dyn Fn() + Sync);

/// Shared control of one running op: reaped or cancelled, and the condvar its waiters sleep on.
#[derive(Debug)]
pub(crate) struct OpControl {
    flags: Mutex<Flags>,
    cv: Condvar,
    limit: Duration,
}

impl OpControl {
    /// The control of an op of `blocks` blocks (0 for a task without blocks, which never stalls)
    /// whose blocks are reaped after `limit` of waiting.
    pub(crate) fn new(limit: Duration, blocks: u32) -> Self {
        Self {
            flags: Mutex::new(Flags {
                unfinished: blocks,
                ..Flags::default()
            }),
            cv: Condvar::new(),
            limit,
        }
    }

    fn flags(&self) -> MutexGuard<'_, Flags> {
        self.flags.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The stream was torn down: every wait of the op returns `Reaped` at once.
    pub(crate) fn cancel(&self) {
        self.flags().cancelled = true;
        self.cv.notify_all();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.flags().cancelled
    }

    fn is_reaped(&self) -> bool {
        self.flags().reaped
    }

    /// The op's stall clock: how long every unfinished block has been blocked in the wait API.
    pub(crate) fn stalled(&self) -> Duration {
        let f = self.flags();
        f.stalled_before + f.stalled_since.map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// Whether every unfinished block is blocked in the wait API right now.
    pub(crate) fn is_stalled(&self) -> bool {
        self.flags().stalled_since.is_some()
    }

    /// An op of one block that never finishes: it counts as stalled from now until the stream is
    /// torn down (a wedged SDMA copy on a stream that continues on failure).
    pub(crate) fn stall_until_cancelled(&self, notify: StallNotify<'_>) {
        let mut f = self.flags();
        f.waiting += 1;
        let changed = f.restall();
        drop(f);
        if changed {
            notify();
        }
        let mut f = self.flags();
        while !f.cancelled {
            f = self.cv.wait(f).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// A block returned (or never started).
    fn block_done(&self, notify: StallNotify<'_>) {
        let mut f = self.flags();
        f.unfinished = f.unfinished.saturating_sub(1);
        let changed = f.restall();
        drop(f);
        if changed {
            notify();
        }
    }
}

/// The wait API as one block sees it: tracks that block's cumulative blocked time.
struct BlockWaiter<'a> {
    ctl: &'a OpControl,
    blocked_ns: AtomicU64,
    notify: StallNotify<'a>,
}

impl Waiter for BlockWaiter<'_> {
    fn wait(&self, timeout: Duration) -> WaitOutcome {
        let start = Instant::now();
        let before = Duration::from_nanos(self.blocked_ns.load(Ordering::Relaxed));
        let mut flags = self.ctl.flags();
        flags.waiting += 1;
        if flags.restall() {
            drop(flags);
            (self.notify)();
            flags = self.ctl.flags();
        }
        let outcome = loop {
            if flags.reaped || flags.cancelled {
                break WaitOutcome::Reaped;
            }
            let waited = start.elapsed();
            if before + waited >= self.ctl.limit {
                flags.reaped = true;
                self.ctl.cv.notify_all();
                break WaitOutcome::Reaped;
            }
            if waited >= timeout {
                break WaitOutcome::Woken;
            }
            let slice = (timeout - waited).min(self.ctl.limit - (before + waited));
            flags = self
                .ctl
                .cv
                .wait_timeout(flags, slice)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        flags.waiting -= 1;
        let changed = flags.restall();
        drop(flags);
        if changed {
            (self.notify)();
        }
        let total = before + start.elapsed();
        self.blocked_ns.store(
            u64::try_from(total.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        if timeout.is_zero() && outcome == WaitOutcome::Woken {
            std::thread::yield_now();
        }
        outcome
    }
}

impl AicoreOp {
    /// Runs every block to its end and returns the op's result: the arch's op-timeout code when
    /// the op was reaped, 507015 when a block returned a non-zero status (e.g. a kernel refusing
    /// a buffer too small for its sizes: on a card that out-of-bounds access is an AICore
    /// exception, and the stream then poisons the context). `ctl` was made for `block_dim`
    /// blocks; `notify` is called when the op enters or leaves the stalled state.
    pub(crate) fn run(&self, ctl: &OpControl, notify: StallNotify<'_>) -> Result<(), Code> {
        if let OpMode::Fail(code) = self.mode {
            for _ in 0..self.block_dim {
                ctl.block_done(notify);
            }
            tracing::warn!(kernel = %self.blob.meta().name, %code, "sim fault sync_fail: the op fails on the device");
            return Err(code);
        }
        let statuses: Vec<i32> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.block_dim)
                .map(|idx| {
                    std::thread::Builder::new()
                        .name(format!("sim-aicore-{idx}"))
                        .spawn_scoped(s, move || {
                            let status = self.run_block(idx, ctl, notify);
                            ctl.block_done(notify);
                            status
                        })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h.join().unwrap_or(-1),
                    Err(e) => {
                        tracing::error!(error = %e, "cannot start a simulated AICore thread");
                        ctl.block_done(notify);
                        -1
                    }
                })
                .collect()
        });
        if ctl.is_reaped() {
            tracing::info!(
                kernel = %self.blob.meta().name,
                timeout = ?self.op_timeout,
                "op-execute timeout: kernel reaped"
            );
            return Err(self.arch.op_timeout_code());
        }
        if ctl.is_cancelled() {
            return Ok(());
        }
        if let Some(status) = statuses.iter().find(|&&s| s != 0) {
            tracing::warn!(kernel = %self.blob.meta().name, status, "kernel block failed");
            return Err(codes::RT_AICORE_EXCEPTION);
        }
        if self.mode == OpMode::Corrupt {
            self.corrupt_output();
        }
        Ok(())
    }

    fn run_block(&self, idx: u32, ctl: &OpControl, notify: StallNotify<'_>) -> i32 {
        let waiter = BlockWaiter {
            ctl,
            blocked_ns: AtomicU64::new(0),
            notify,
        };
        match self.mode {
            OpMode::Hang => {
                while waiter.wait(Duration::from_millis(1)) == WaitOutcome::Woken {}
                0
            }
            OpMode::Fail(_) => 0,
            // SAFETY: every non-zero `arg_bytes[i]` is the length from `args[i]` to the end of a
            // live allocation (`launch::resolve_args`), kept alive by `_buffers` until the op is
            // done; the host copies into those buffers only through atomic words.
            OpMode::Normal | OpMode::Corrupt => unsafe {
                self.blob
                    .run_block(idx, self.block_dim, &self.args, &self.arg_bytes, &waiter)
            },
        }
    }

    /// Adds 1.0 to f32 element 0 of the first output buffer, so a golden comparison fails.
    fn corrupt_output(&self) {
        let Some((buf, offset)) = &self.first_output else {
            tracing::warn!(
                kernel = %self.blob.meta().name,
                "corrupt: the launch has no output buffer to perturb"
            );
            return;
        };
        let mut word = [0u8; 4];
        if buf.read(*offset, &mut word) {
            let bumped = f32::from_ne_bytes(word) + 1.0;
            buf.write(*offset, &bumped.to_ne_bytes());
        } else if buf.read(*offset, &mut word[..1]) {
            buf.write(*offset, &[word[0] ^ 0xff]);
        }
        tracing::info!(kernel = %self.blob.meta().name, "corrupt: perturbed the first output buffer");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiter(ctl: &OpControl) -> BlockWaiter<'_> {
        BlockWaiter {
            ctl,
            blocked_ns: AtomicU64::new(0),
            notify: &|| {},
        }
    }

    fn blocked(w: &BlockWaiter<'_>) -> Duration {
        Duration::from_nanos(w.blocked_ns.load(Ordering::Relaxed))
    }

    #[test]
    fn only_time_blocked_in_wait_counts_toward_the_limit() {
        // Of a 10 s limit, all but 500 ms was already spent waiting.
        let limit = Duration::from_secs(10);
        let left = Duration::from_millis(500);
        let ctl = OpControl::new(limit, 1);
        let w = waiter(&ctl);
        w.blocked_ns
            .store((limit - left).as_nanos() as u64, Ordering::Relaxed);
        // More compute than is left, in wall time: none of it counts. (Only the time the wait
        // itself takes counts, which is why the margin is wide: a loaded machine may keep the
        // waiting thread off a core for a while, and that time is waiting.)
        let spin = Instant::now();
        while spin.elapsed() < left + Duration::from_millis(100) {
            std::hint::spin_loop();
        }
        assert_eq!(w.wait(Duration::ZERO), WaitOutcome::Woken);
        assert!(blocked(&w) < limit, "{:?}", blocked(&w));
        assert!(!ctl.is_reaped());
        // Waiting on reaches the limit: the block is reaped, having waited at least the limit.
        while w.wait(Duration::from_millis(5)) == WaitOutcome::Woken {}
        assert!(blocked(&w) >= limit);
        assert!(ctl.is_reaped());
    }

    #[test]
    fn one_reaped_block_reaps_the_whole_op_and_cancel_releases_waiters() {
        let ctl = OpControl::new(Duration::from_millis(20), 2);
        let (first, second) = (waiter(&ctl), waiter(&ctl));
        while first.wait(Duration::from_millis(5)) == WaitOutcome::Woken {}
        assert_eq!(second.wait(Duration::from_secs(60)), WaitOutcome::Reaped);
        assert!(blocked(&second) < Duration::from_secs(1));

        let ctl = OpControl::new(Duration::from_secs(3600), 1);
        std::thread::scope(|s| {
            let w = waiter(&ctl);
            let h = s.spawn(move || w.wait(Duration::from_secs(3600)));
            ctl.cancel();
            assert_eq!(h.join().unwrap(), WaitOutcome::Reaped);
        });
        assert!(!ctl.is_reaped(), "a cancelled op is not an op-timeout");
    }

    #[test]
    fn the_op_is_stalled_only_while_every_unfinished_block_waits() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let notify = move || tx.send(()).unwrap();
        let ctl = OpControl::new(Duration::from_secs(3600), 3);
        // One block returned without waiting; a second computes (never waits): nothing stalls.
        ctl.block_done(&notify);
        let w = BlockWaiter {
            ctl: &ctl,
            blocked_ns: AtomicU64::new(0),
            notify: &notify,
        };
        assert_eq!(w.wait(Duration::ZERO), WaitOutcome::Woken);
        assert!(rx.try_recv().is_err(), "one of two unfinished blocks waited");
        assert!(!ctl.is_stalled());
        assert_eq!(ctl.stalled(), Duration::ZERO);
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                let w = BlockWaiter {
                    ctl: &ctl,
                    blocked_ns: AtomicU64::new(0),
                    notify: &notify,
                };
                w.wait(Duration::from_secs(3600))
            });
            // The computing block returns: the waiting one is now every unfinished block.
            ctl.block_done(&notify);
            rx.recv().unwrap();
            assert!(ctl.is_stalled());
            let at_least = ctl.stalled();
            // Released: the op leaves the stalled state and its clock stops.
            ctl.cancel();
            assert_eq!(h.join().unwrap(), WaitOutcome::Reaped);
            rx.recv().unwrap();
            assert!(!ctl.is_stalled());
            let frozen = ctl.stalled();
            assert!(frozen >= at_least);
            assert_eq!(ctl.stalled(), frozen);
        });
    }
}
