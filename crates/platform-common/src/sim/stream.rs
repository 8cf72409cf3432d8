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
//!
//! What a sync's timeout counts: only time during which the stream's pending work is stalled on
//! the device, by the reaper's rule (`aicore.rs`): the running AICore op has every unfinished
//! block blocked in the wait API (a hang waiting to be reaped, or a kernel waiting longer than
//! the sync allows), or a pending AICPU task waits on AICore work of its paired stream while that
//! stream is stalled. Time in which an op computes, or queued work waits for its worker thread
//! (or its block threads) to get a CPU, never counts, so a loaded host makes no false
//! `507046`: a real card's kernel runs on the device whatever the host's load. Each stream keeps
//! a stall clock (the stalled time of its finished ops plus the running op's), and a
//! [`StallMeter`] taken when a wait starts reads how far the clocks moved since. The device drain
//! ([`StreamShared::wait_for`]) counts the same way, per stream, from the drain's start: it times
//! out once any stream's work has stalled that long. Only a sync of a stream already in error
//! state counts wall time (nothing runs on it: it blocks for its whole timeout). The AICPU task
//! itself has no timeout (the sim models no scheduler timeout): its poll only notices its own
//! stream's teardown. The ordering scheduler < op-execute < stream-sync keeps its meaning: every
//! block of a stalled op is waiting, so each block's waiting time is at least the stall, and the
//! reaper fires before the sync's count reaches a longer timeout.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::aicore::{AicoreOp, OpControl};
use super::sdma_op::SdmaOp;
use super::stats::StatCounters;
use crate::error::Code;

/// How often a waiting AICPU task looks at its own cancellation (a teardown of its stream wakes
/// the stream's waiters, not the paired stream's, which the task waits on); not a timeout.
const AICPU_POLL: Duration = Duration::from_millis(20);

/// The longest a wait whose work waits on a paired stream sleeps before it reads that stream's
/// stall clock again (the paired stream's blocks wake only their own stream's waiters).
const PAIRED_SLICE: Duration = Duration::from_millis(5);

/// The longest a wait sleeps while its stream is not stalled: a bound, not a poll (the worker
/// wakes it on progress, the blocks when the op enters or leaves the stalled state).
const IDLE_SLICE: Duration = Duration::from_millis(100);

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
    Aicore(Box<AicoreOp>),
    /// The AICPU scheduler task: waits for `aicore`'s work up to op `upto` and reports its failure.
    Aicpu { aicore: Arc<StreamShared>, upto: u64 },
    /// A device-to-device SDMA copy.
    Sdma(SdmaOp),
}

#[derive(Debug, Default)]
struct StreamState {
    queue: VecDeque<(u64, Op)>,
    /// Ops queued so far (the last op's sequence number).
    submitted: u64,
    /// The sequence number of the last op that finished.
    completed: u64,
    current: Option<Arc<OpControl>>,
    /// The running op when it is an AICPU task: the stream it waits on and up to which op.
    running_aicpu: Option<(Arc<StreamShared>, u64)>,
    /// The stalled time of this stream's finished ops (the stall clock without the running op).
    stalled_done: Duration,
    /// Ops of this stream that AICPU tasks wait for: how many tasks, and the stall clock when the
    /// op finished (so a task's stall stops at its own op, whatever runs after it).
    marks: BTreeMap<u64, Mark>,
    /// The first failed op: its sequence number and code. Set means the stream is in error state.
    failure: Option<(u64, Code)>,
    /// Whether a sync has returned the failure's code already.
    failure_reported: bool,
    cancelled: bool,
}

/// The AICPU tasks waiting for one op of a stream, and the stream's stall clock when it finished.
#[derive(Debug, Default)]
struct Mark {
    tasks: u32,
    at: Option<Duration>,
}

/// Where the stall clocks stood when a wait started: its own stream's, and those of the streams
/// its pending AICPU tasks wait on (each with the op its last task waits for).
#[derive(Debug)]
pub(crate) struct StallMeter {
    own: Duration,
    paired: Vec<(Arc<StreamShared>, u64, Duration)>,
}

impl StallMeter {
    /// How long the paired streams' work that the tasks wait for has stalled since the meter.
    fn paired(&self) -> Duration {
        self.paired
            .iter()
            .map(|(s, upto, base)| s.stall_through(*upto).saturating_sub(*base))
            .sum()
    }
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
        if let Op::Aicpu { aicore, upto } = &op {
            aicore.watch(*upto);
        }
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
        let dropped: Vec<(u64, Op)> = st.queue.drain(..).collect();
        if let Some(ctl) = &st.current {
            ctl.cancel();
        }
        self.cv.notify_all();
        drop(st);
        for (_, op) in dropped {
            if let Op::Aicpu { aicore, upto } = op {
                aicore.unwatch(upto);
            }
        }
    }

    /// The stall clock: the stalled time of the finished ops and of the running one.
    fn stall_clock(&self, st: &StreamState) -> Duration {
        st.stalled_done + st.current.as_ref().map_or(Duration::ZERO, |c| c.stalled())
    }

    /// The stall clock as far as op `upto` is concerned: frozen when that op finished.
    fn stall_through(&self, upto: u64) -> Duration {
        let st = self.lock();
        if st.completed >= upto {
            if let Some(at) = st.marks.get(&upto).and_then(|m| m.at) {
                return at;
            }
        }
        self.stall_clock(&st)
    }

    /// An AICPU task will wait for op `upto`: keep the stall clock at its end.
    fn watch(&self, upto: u64) {
        let mut st = self.lock();
        let clock = self.stall_clock(&st);
        let done = st.completed >= upto;
        let mark = st.marks.entry(upto).or_default();
        mark.tasks += 1;
        if done && mark.at.is_none() {
            mark.at = Some(clock);
        }
    }

    /// An AICPU task that waited for op `upto` is gone.
    fn unwatch(&self, upto: u64) {
        let mut st = self.lock();
        if let Some(mark) = st.marks.get_mut(&upto) {
            mark.tasks = mark.tasks.saturating_sub(1);
            if mark.tasks == 0 {
                st.marks.remove(&upto);
            }
        }
    }

    /// Wakes every waiter of the stream (a block's op entered or left the stalled state). Taking
    /// the lock first means a waiter that read the old state is already waiting.
    fn poke(&self) {
        let _st = self.lock();
        self.cv.notify_all();
    }

    /// Where the stall clocks stand for the work queued up to op `upto`: this stream's and, for
    /// its pending AICPU tasks, their paired streams' (up to the op the last task waits for).
    pub(crate) fn meter(&self, upto: u64) -> StallMeter {
        let (own, pairs) = {
            let st = self.lock();
            let running = st.running_aicpu.iter().map(|(s, u)| (s, *u));
            let queued = st.queue.iter().filter_map(|(seq, op)| match op {
                Op::Aicpu { aicore, upto: u } if *seq <= upto => Some((aicore, *u)),
                _ => None,
            });
            let mut pairs: Vec<(Arc<StreamShared>, u64)> = Vec::new();
            for (s, u) in running.chain(queued) {
                match pairs.iter_mut().find(|(p, _)| Arc::ptr_eq(p, s)) {
                    Some(pair) => pair.1 = pair.1.max(u),
                    None => pairs.push((Arc::clone(s), u)),
                }
            }
            (self.stall_clock(&st), pairs)
        };
        let paired = pairs
            .into_iter()
            .map(|(s, u)| {
                let base = s.stall_through(u);
                (s, u, base)
            })
            .collect();
        StallMeter { own, paired }
    }

    /// Waits until `done` holds, or until the work `meter` measures has been stalled for
    /// `budget` since the meter was taken; returns the guard and whether `done` held. A paired
    /// stream's clock is read without this stream's lock held (no lock order between streams).
    fn wait_stalled<'a>(
        &'a self,
        meter: &StallMeter,
        budget: Duration,
        done: impl Fn(&StreamState) -> bool,
    ) -> (MutexGuard<'a, StreamState>, bool) {
        let mut st = self.lock();
        loop {
            if done(&st) {
                return (st, true);
            }
            let mut counted = self.stall_clock(&st).saturating_sub(meter.own);
            let own_stalled = st.current.as_ref().is_some_and(|c| c.is_stalled());
            if !meter.paired.is_empty() {
                drop(st);
                counted += meter.paired();
                st = self.lock();
                if done(&st) {
                    return (st, true);
                }
            }
            if counted >= budget {
                return (st, false);
            }
            let left = budget - counted;
            let slice = if !meter.paired.is_empty() {
                left.min(PAIRED_SLICE)
            } else if own_stalled {
                left
            } else {
                left.min(IDLE_SLICE)
            };
            st = self.wait(st, slice);
        }
    }

    /// `aclrtSynchronizeStreamWithTimeout`: `timeout` counts stalled time only (module docs),
    /// except on a stream already in error state, which blocks for its whole timeout.
    pub(crate) fn sync(&self, timeout: Duration) -> SyncOutcome {
        let deadline = Instant::now() + timeout;
        let mut st = self.lock();
        if st.failure.is_some() && st.failure_reported {
            // A stream already in error state: the sync blocks for its whole timeout, in wall
            // time (nothing runs on it).
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
        drop(st);
        let meter = self.meter(target);
        let (mut st, done) = self.wait_stalled(&meter, timeout, |st| {
            st.failure.is_some() || st.completed >= target || st.cancelled
        });
        if let Some((_, code)) = st.failure {
            st.failure_reported = true;
            self.observe(&st);
            return SyncOutcome::Failed(code);
        }
        if done {
            SyncOutcome::Done
        } else {
            SyncOutcome::TimedOut
        }
    }

    /// Waits until op `upto` finished (or the stream is torn down), until the work `meter`
    /// measures (taken by the drain when it started) has been stalled for `budget`; true when it
    /// finished. A failure the stream recorded by then poisons the context (the device drain has
    /// waited for it).
    pub(crate) fn wait_for(&self, upto: u64, budget: Duration, meter: &StallMeter) -> bool {
        let (st, done) = self.wait_stalled(meter, budget, |st| st.completed >= upto || st.cancelled);
        self.observe(&st);
        done
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
                let ctl = match &op {
                    Op::Aicore(a) => OpControl::new(a.op_timeout, a.block_dim),
                    Op::Aicpu { aicore, upto } => {
                        st.running_aicpu = Some((Arc::clone(aicore), *upto));
                        OpControl::new(Duration::MAX, 0)
                    }
                    Op::Sdma(_) => OpControl::new(Duration::MAX, 1),
                };
                let ctl = Arc::new(ctl);
                st.current = Some(Arc::clone(&ctl));
                // Work queued behind a failed op is discarded, as the card drops it.
                (seq, op, ctl, st.failure.is_some())
            };
            let result = if discard {
                Ok(())
            } else {
                match &op {
                    Op::Aicore(a) => a.run(&ctl, &|| self.poke()),
                    Op::Aicpu { aicore, upto } => run_aicpu(aicore, *upto, &ctl),
                    Op::Sdma(c) => c.run(&ctl, &|| self.poke()),
                }
            };
            let watched = match &op {
                Op::Aicpu { aicore, upto } => Some((Arc::clone(aicore), *upto)),
                Op::Aicore(_) | Op::Sdma(_) => None,
            };
            drop(op);
            let mut st = self.lock();
            st.stalled_done += ctl.stalled();
            st.current = None;
            st.running_aicpu = None;
            st.completed = seq;
            let clock = st.stalled_done;
            if let Some(mark) = st.marks.get_mut(&seq) {
                mark.at = Some(clock);
            }
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
            drop(st);
            if let Some((aicore, upto)) = watched {
                aicore.unwatch(upto);
            }
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
