//! The process layer's event loop: it owns the lane processes, their channels and sinks, the
//! run's leases, the reporter and the clock, and a [`DispatchState`] that owns everything else.
//! One watcher thread per lane (and the signal thread, and a hung lane's stack capture) feed it
//! through a channel; it turns each report into a state [`Event`], hands it to the state with the
//! time, and carries out the [`Action`]s that come back (`actions`). When nothing is waiting it
//! writes the journal's batch and waits for the next report or the state's next deadline
//! ([`Event::Tick`]).
//!
//! This file owns the loop, the translation of OS events, and the figures of the run. It never
//! decides anything (the state does) and never writes a report file itself (the [`Reporter`]
//! does).

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

use platform_common::lease::LeaseError;
use platform_common::DeviceLease;

use super::lane_event::LaneEvent;
use super::lane_proc::{LaneCommand, LaneProc};
use super::live::LiveLanes;
use super::spawn::Spawner;
use super::stacks::StackTool;
use crate::clock;
use crate::dispatch::cards::memory;
use crate::dispatch::state::{self, Action, CardSeed, DispatchState, Event, LaneId, Work};
use crate::report::Reporter;
use crate::sink::Sink;

/// The process layer's settings for one run (the state's are [`state::Settings`]).
#[derive(Debug, Clone)]
pub struct ProcSettings {
    /// How lanes are started.
    pub command: LaneCommand,
    /// Where sinks and the lanes' device-log directories are created (the run's private
    /// [`crate::sink::SinkDir`]); none when it could not be made: lanes then run without a sink
    /// and without a private `ASCEND_PROCESS_LOG_PATH`.
    pub sink_dir: Option<std::path::PathBuf>,
    /// The stack tool a hung case's diagnosis runs (none found: the breadcrumb alone).
    pub stack_tool: Option<StackTool>,
    /// The run's id (for the cards' health records).
    pub run_id: String,
}

/// A lane process the loop holds.
#[derive(Debug)]
pub(super) struct ProcLane {
    /// Its own card (an index of the run's cards).
    pub(super) card: usize,
    pub(super) proc_: LaneProc,
    pub(super) sink: Option<Sink>,
}

/// The process layer of a run (see the module docs).
pub struct Dispatcher {
    pub(super) state: DispatchState,
    pub(super) settings: ProcSettings,
    /// The run's leases, by card index.
    pub(super) leases: Vec<DeviceLease>,
    /// The lane processes, by lane id (none before their start and after their exit).
    pub(super) lanes: Vec<Option<ProcLane>>,
    /// The live lanes' process groups, shared with the signal thread.
    pub(super) live: LiveLanes,
    pub(super) spawner: Spawner,
    pub(super) reporter: Reporter,
    pub(super) tx: Sender<LaneEvent>,
    rx: Receiver<LaneEvent>,
    /// The largest peak RSS (KiB) of a lane read as its work was done.
    pub(super) lane_peak_rss_kib: Option<u64>,
    /// The run's clock start (`CLOCK_MONOTONIC`, ns), the reporter's.
    clock_start_ns: u64,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field(
                "cards",
                &self.leases.iter().map(DeviceLease::card).collect::<Vec<_>>(),
            )
            .field("lanes", &self.lanes.len())
            .finish_non_exhaustive()
    }
}

/// What a run's loop gave: the reporter (to finish the report), the figures and the leases lost
/// on the way.
#[derive(Debug)]
pub struct LoopEnd {
    /// The reporter, every event recorded.
    pub reporter: Reporter,
    /// Cases with a verdict.
    pub cases: usize,
    /// From the first assignment to the last verdict.
    pub window: Duration,
    /// The largest peak RSS (KiB) of the lanes closed with their work done.
    pub lane_peak_rss_kib: Option<u64>,
    /// Leases whose lock file was deleted or replaced during the run.
    pub leases_lost: Vec<LeaseError>,
    /// The run's leases, still held (a stress run's next iteration runs on them).
    pub leases: Vec<DeviceLease>,
}

impl Dispatcher {
    /// A dispatcher over `leases` (one card each) for `work`, recording into `reporter`, with
    /// a state of `state_settings` (whose clock start is the reporter's).
    pub fn new(
        settings: ProcSettings,
        state_settings: state::Settings,
        work: Work,
        leases: Vec<DeviceLease>,
        mut reporter: Reporter,
    ) -> Self {
        let (tx, rx) = mpsc::channel();
        reporter.batch_journal();
        let clock_start_ns = state_settings.clock_start_ns;
        let seeds = leases
            .iter()
            .map(|l| CardSeed {
                device: l.card(),
                physical: l.physical(),
                health: memory::found(l),
            })
            .collect();
        Self {
            state: DispatchState::new(state_settings, work, seeds),
            spawner: Spawner::new(settings.command.clone()),
            settings,
            leases,
            lanes: Vec::new(),
            live: LiveLanes::default(),
            reporter,
            tx,
            rx,
            lane_peak_rss_kib: None,
            clock_start_ns,
        }
    }

    /// A sender into the loop's channel (for the signal thread).
    pub fn sender(&self) -> Sender<LaneEvent> {
        self.tx.clone()
    }

    /// The live lanes' process groups (the signal thread ends them on a second signal).
    pub fn live_lanes(&self) -> LiveLanes {
        self.live.clone()
    }

    /// Runs until the state finishes (every case has a verdict and every lane has exited). The
    /// leases come back with the end, still held.
    pub fn run(mut self) -> LoopEnd {
        self.feed(Event::Begin);
        while !self.state.finished() {
            let report = match self.rx.try_recv() {
                Ok(r) => Some(r),
                Err(TryRecvError::Empty) => {
                    // Nothing more to handle now: the burst's journal lines go to disk before the
                    // loop waits.
                    self.flush_journal();
                    let wait = self
                        .state
                        .next_deadline()
                        .map_or(Duration::from_secs(3600), |d| d.saturating_sub(self.now()));
                    match self.rx.recv_timeout(wait) {
                        Ok(r) => Some(r),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                Err(TryRecvError::Disconnected) => break,
            };
            let event = match report {
                Some(r) => self.translate(r),
                None => Event::Tick,
            };
            self.feed(event);
        }
        let (cases, window) = self.state.figures();
        LoopEnd {
            leases_lost: self.state.take_leases_lost(),
            reporter: self.reporter,
            cases,
            window,
            lane_peak_rss_kib: self.lane_peak_rss_kib,
            leases: self.leases,
        }
    }

    /// Now, on the run's clock.
    pub(super) fn now(&self) -> Duration {
        Duration::from_nanos(clock::mono_ns().saturating_sub(self.clock_start_ns))
    }

    /// Hands `event` to the state and carries out what follows; an action that answers with an
    /// event of its own (a spawn, a refused assignment, a stack capture that cannot start) has
    /// that event handled at once, its actions carried out before the rest.
    pub(super) fn feed(&mut self, event: Event) {
        let now = self.now();
        let mut todo: std::collections::VecDeque<Action> = self.state.handle(event, now).into();
        while let Some(action) = todo.pop_front() {
            if let Some(answer) = self.carry_out(action) {
                let now = self.now();
                for a in self.state.handle(answer, now).into_iter().rev() {
                    todo.push_front(a);
                }
            }
        }
    }

    /// A watcher's report as the state's event (a lane's exit: its process let go, its sink
    /// read and deleted).
    fn translate(&mut self, report: LaneEvent) -> Event {
        match report {
            LaneEvent::Msg(id, msg) => Event::Message(id, msg),
            LaneEvent::Output(id, stream, bytes) => Event::Output(id, stream, bytes),
            LaneEvent::LineTooLong(id) => Event::LineTooLong(id),
            LaneEvent::Stacks(id, got) => Event::Stacks(id, got.map_err(|e| e.to_string())),
            LaneEvent::Exited(id, status) => Event::Exited {
                lane: id,
                status,
                sink: self.exited(id),
            },
            LaneEvent::Interrupted(signal) => Event::Interrupted(signal),
        }
    }

    /// Lane `id` exited: it leaves the live set, its channel is dropped, its sink is read and
    /// deleted.
    fn exited(&mut self, id: LaneId) -> Option<crate::sink::SinkContents> {
        let mut lane = self.lanes.get_mut(id).and_then(Option::take)?;
        self.live.remove(lane.proc_.pid);
        lane.proc_.close();
        lane.sink.map(Sink::take)
    }

    /// Writes the journal lines batched so far.
    pub(super) fn flush_journal(&mut self) {
        if let Err(e) = self.reporter.flush_journal() {
            tracing::warn!("cannot append to the journal: {e}");
        }
    }
}
