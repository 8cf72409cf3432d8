//! A simulated stream: an in-order queue of ops run by the stream's own worker thread, and the
//! error state a failed op leaves behind.
//!
//! This file owns queueing, running ops in order, the AICPU task's wait on its paired AICore
//! stream, stream sync (first sync after a failure reports the op's code; a sync of a stream
//! already in error state blocks until its timeout) and teardown.
//!
//! When a failure becomes sticky: a failed op puts its stream in error state at once, but it
//! poisons the context (through its [`StickyCell`]) only when the host is told of it or waits for
//! it: the stream sync that reports it (of its own stream, or of the AICPU stream whose task waited
//! on it), the device drain ([`StreamShared::wait_for`]), or the stream's teardown (a destroy,
//! which waits for no work because it refuses pending work, or a reset). So what the host sees
//! follows the order of its own calls, never the timing of the stream's worker thread: a launch
//! queued right after a kernel that fails at once is not refused by a failure nobody has looked at
//! yet (on a loaded machine it used to be, one time in fifteen). A torn-down stream's later
//! results are discarded and poison nothing. It never decides *whether* a call may queue work
//! (the driver's sticky rules do).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::aicore::{AicoreOp, OpControl};
use super::stats::StatCounters;
use crate::error::Code;

/// How often a waiting AICPU task looks at its own cancellation.
const AICPU_POLL: Duration = Duration::from_millis(20);

/// The sticky error of one process's context on one card: the first failure's code.
#[derive(Debug, Default)]
pub(crate) struct StickyCell(Mutex<Option<Code>>);

impl StickyCell {
    fn lock(&self) -> MutexGuard<'_, Option<Code>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Poisons the context; the first cause is kept.
    pub(crate) fn poison(&self, code: Code) {
        let mut g = self.lock();
        if g.is_none() {
            tracing::warn!(%code, "sim context is now sticky-errored");
            *g = Some(code);
        }
    }

    /// The first cause, when poisoned.
    pub(crate) fn get(&self) -> Option<Code> {
        *self.lock()
    }

    /// Clears the sticky error (a force reset that really cleared it).
    pub(crate) fn clear(&self) {
        *self.lock() = None;
    }
}

/// One queued op.
#[derive(Debug)]
pub(crate) enum Op {
    /// An AICore kernel launch.
    Aicore(AicoreOp),
    /// The AICPU scheduler task: waits for `aicore`'s work up to op `upto` and reports its failure.
    Aicpu { aicore: Arc<StreamShared>, upto: u64 },
}

#[derive(Debug, Default)]
struct StreamState {
    queue: VecDeque<(u64, Op)>,
    /// Ops queued so far (the last op's sequence number).
    submitted: u64,
    /// The sequence number of the last op that finished.
    completed: u64,
    current: Option<Arc<OpControl>>,
    /// The first failed op: its sequence number and code. Set means the stream is in error state.
    failure: Option<(u64, Code)>,
    /// Whether a sync has returned the failure's code already.
    failure_reported: bool,
    cancelled: bool,
}

/// What a stream sync saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncOutcome {
    /// Every op queued before the sync finished without error.
    Done,
    /// An op failed with this code (reported once).
    Failed(Code),
    /// The stream was already in error state: the sync blocked until its timeout.
    ErrorState,
    /// Work was still pending when the timeout passed.
    TimedOut,
}

/// The shared half of a stream: the queue the worker thread drains.
#[derive(Debug)]
pub(crate) struct StreamShared {
    id: u64,
    state: Mutex<StreamState>,
    cv: Condvar,
    /// The context's sticky error, poisoned when the host learns of this stream's failure.
    sticky: Arc<StickyCell>,
    /// The driver's counters (failed ops are counted when they fail).
    stats: Arc<StatCounters>,
}

impl StreamShared {
    /// A stream of the context whose sticky error is `sticky`, with its worker thread started.
    pub(crate) fn spawn(
        id: u64,
        sticky: Arc<StickyCell>,
        stats: Arc<StatCounters>,
    ) -> std::io::Result<Arc<Self>> {
        let stream = Arc::new(Self {
            id,
            state: Mutex::new(StreamState::default()),
            cv: Condvar::new(),
            sticky,
            stats,
        });
        let worker = Arc::clone(&stream);
        std::thread::Builder::new()
            .name(format!("sim-stream-{id}"))
            .spawn(move || worker.work())?;
        Ok(stream)
    }

    /// The host has been told of, or has waited for, the stream's failure (if it has one): the
    /// context is now sticky with its code.
    fn observe(&self, st: &StreamState) {
        if let Some((_, code)) = st.failure {
            self.sticky.poison(code);
        }
    }

    fn lock(&self) -> MutexGuard<'_, StreamState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `op`; returns its sequence number.
    pub(crate) fn submit(&self, op: Op) -> u64 {
        let mut st = self.lock();
        st.submitted += 1;
        let seq = st.submitted;
        st.queue.push_back((seq, op));
        self.cv.notify_all();
        seq
    }

    /// The sequence number of the last op queued.
    pub(crate) fn submitted(&self) -> u64 {
        self.lock().submitted
    }

    /// Whether queued work has not finished.
    pub(crate) fn has_pending(&self) -> bool {
        let st = self.lock();
        st.completed < st.submitted
    }

    /// Tears the stream down: drops queued ops, reaps the running one, discards its result and
    /// lets the worker exit. A failure the stream already recorded poisons the context.
    pub(crate) fn cancel(&self) {
        let mut st = self.lock();
        if !st.cancelled {
            self.observe(&st);
        }
        st.cancelled = true;
        st.queue.clear();
        if let Some(ctl) = &st.current {
            ctl.cancel();
        }
        self.cv.notify_all();
    }

    /// `aclrtSynchronizeStreamWithTimeout`.
    pub(crate) fn sync(&self, timeout: Duration) -> SyncOutcome {
        let deadline = Instant::now() + timeout;
        let mut st = self.lock();
        if st.failure.is_some() && st.failure_reported {
            // A stream already in error state: the sync blocks for its whole timeout.
            while !st.cancelled {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                st = self.wait(st, deadline - now);
            }
            return SyncOutcome::ErrorState;
        }
        let target = st.submitted;
        loop {
            if let Some((_, code)) = st.failure {
                st.failure_reported = true;
                self.observe(&st);
                return SyncOutcome::Failed(code);
            }
            if st.completed >= target || st.cancelled {
                return SyncOutcome::Done;
            }
            let now = Instant::now();
            if now >= deadline {
                return SyncOutcome::TimedOut;
            }
            st = self.wait(st, deadline - now);
        }
    }

    /// Waits until op `upto` finished (or the stream is torn down), at most until `deadline`;
    /// true when it did. A failure the stream recorded by then poisons the context (the device
    /// drain has waited for it).
    pub(crate) fn wait_for(&self, upto: u64, deadline: Instant) -> bool {
        let mut st = self.lock();
        loop {
            if st.completed >= upto || st.cancelled {
                self.observe(&st);
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                self.observe(&st);
                return false;
            }
            st = self.wait(st, deadline - now);
        }
    }

    fn wait<'a>(&self, st: MutexGuard<'a, StreamState>, d: Duration) -> MutexGuard<'a, StreamState> {
        self.cv
            .wait_timeout(st, d)
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }

    /// The worker: runs ops in order until the stream is torn down.
    fn work(&self) {
        loop {
            let (seq, op, ctl, discard) = {
                let mut st = self.lock();
                loop {
                    if st.cancelled {
                        return;
                    }
                    if !st.queue.is_empty() {
                        break;
                    }
                    st = self.cv.wait(st).unwrap_or_else(PoisonError::into_inner);
                }
                let Some((seq, op)) = st.queue.pop_front() else {
                    continue;
                };
                let limit = match &op {
                    Op::Aicore(a) => a.op_timeout,
                    Op::Aicpu { .. } => Duration::MAX,
                };
                let ctl = Arc::new(OpControl::new(limit));
                st.current = Some(Arc::clone(&ctl));
                // Work queued behind a failed op is discarded, as the card drops it.
                (seq, op, ctl, st.failure.is_some())
            };
            let result = if discard {
                Ok(())
            } else {
                match &op {
                    Op::Aicore(a) => a.run(&ctl),
                    Op::Aicpu { aicore, upto } => run_aicpu(aicore, *upto, &ctl),
                }
            };
            drop(op);
            let mut st = self.lock();
            st.current = None;
            st.completed = seq;
            if !st.cancelled {
                if let Err(code) = result {
                    tracing::warn!(stream = self.id, %code, "sim op failed; stream is in error state");
                    self.stats.op_failed();
                    if st.failure.is_none() {
                        st.failure = Some((seq, code));
                    }
                }
            }
            self.cv.notify_all();
        }
    }
}

/// The AICPU scheduler task: waits for the paired AICore stream's work and fails with that work's
/// code when it failed.
fn run_aicpu(aicore: &StreamShared, upto: u64, ctl: &OpControl) -> Result<(), Code> {
    let mut st = aicore.lock();
    while st.completed < upto && !st.cancelled {
        if ctl.is_cancelled() {
            return Ok(());
        }
        st = aicore.wait(st, AICPU_POLL);
    }
    match st.failure {
        Some((seq, code)) if seq <= upto => Err(code),
        _ => Ok(()),
    }
}
