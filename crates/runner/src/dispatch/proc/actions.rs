//! Carrying out the state machine's actions: starting a lane (its leases checked, a sink for a
//! regular lane, the process spawned with its retries), sending it a line (an assignment only
//! while its card's lease holds), closing its channel, signalling its group, capturing a hung
//! lane's stacks, recording a journal event, and a card's health record written or cleared.
//!
//! An action that can fail answers with an event of its own ([`Event::Spawned`] or
//! [`Event::NotSpawned`], [`Event::NotSent`], a stack capture that cannot start as
//! [`Event::Stacks`]), which the loop hands to the state at once. This file owns that carrying
//! out; it never decides what to do next.

use std::sync::mpsc::Sender;

use super::event_loop::{Dispatcher, ProcLane};
use super::kill::signal_lane;
use super::lane_event::LaneEvent;
use super::lane_proc::LaneSpec;
use super::peak_rss::peak_rss_kib;
use super::stacks::STACK_BOUND;
use super::stacks::{StackError, StackTool};
use crate::dispatch::cards::memory;
use crate::dispatch::policy::LaneKind;
use crate::dispatch::state::{Action, Event, LaneId, NotSpawned};
use crate::protocol::ToLane;
use crate::report::model::Event as Journal;
use crate::report::ReportError;
use crate::sink::Sink;

impl Dispatcher {
    /// Carries out `action`; the event it answers with, if any.
    pub(super) fn carry_out(&mut self, action: Action) -> Option<Event> {
        match action {
            Action::Spawn { lane, cards, kind } => Some(self.spawn(lane, &cards, kind)),
            Action::Send { lane, msg } => self.send(lane, msg),
            Action::Close { lane, done } => {
                if let Some(l) = self.lane_mut(lane) {
                    let rss = done.then(|| peak_rss_kib(&l.proc_.pid.to_string())).flatten();
                    l.proc_.close();
                    self.lane_peak_rss_kib = self.lane_peak_rss_kib.max(rss);
                }
                None
            }
            Action::Signal { lane, signal } => {
                if let Some(l) = self.lane_mut(lane) {
                    signal_lane(l.proc_.pid, signal);
                }
                None
            }
            Action::CaptureStacks { lane } => self.capture_stacks(lane),
            Action::Record(event) => {
                self.record(&event);
                None
            }
            Action::Remember {
                card,
                status,
                reason,
                events,
                capability,
            } => {
                memory::remember(
                    &self.leases[card],
                    status,
                    &self.settings.run_id,
                    &reason,
                    &events,
                    capability,
                );
                None
            }
            Action::Forget { card, reason } => {
                memory::forget(&self.leases[card], &self.settings.run_id, &reason);
                None
            }
            Action::Finish => None,
        }
    }

    fn lane_mut(&mut self, lane: LaneId) -> Option<&mut ProcLane> {
        self.lanes.get_mut(lane).and_then(Option::as_mut)
    }

    /// Starts lane `lane` on `cards` as a lane of `kind`, once every card's lease holds.
    fn spawn(&mut self, lane: LaneId, cards: &[usize], kind: LaneKind) -> Event {
        for &card in cards {
            if let Err(lost) = self.leases[card].verify() {
                return Event::NotSpawned {
                    lane,
                    why: NotSpawned::LeaseLost { card, lost },
                };
            }
        }
        let card = cards[0];
        let device = self.leases[card].card();
        let sink = match (kind, self.settings.sink_dir.as_deref()) {
            // A multi-card lane may go on as its card's regular lane (`ToLane::Release`).
            (LaneKind::Regular | LaneKind::Multi, Some(dir)) => match Sink::create(dir, device) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!(
                        device,
                        "cannot create a poison sink ({e}); the lane runs without one"
                    );
                    None
                }
            },
            _ => None,
        };
        let leases: Vec<_> = cards.iter().map(|&c| &self.leases[c]).collect();
        let spec = LaneSpec {
            id: lane,
            device,
            leases: &leases,
            sink: sink.as_ref().map(Sink::path),
            preflight: kind == LaneKind::Preflight,
            // In the run's private directory, removed with it (and by the watcher at the exit).
            device_log: self
                .settings
                .sink_dir
                .as_deref()
                .map(|dir| dir.join(format!("device-log-lane{lane}"))),
        };
        match self.spawner.spawn(&spec, &self.tx) {
            Ok(proc_) => {
                let pid = proc_.pid;
                self.live.add(pid);
                tracing::debug!(device, pid, "lane started");
                if self.lanes.len() <= lane {
                    self.lanes.resize_with(lane + 1, || None);
                }
                self.lanes[lane] = Some(ProcLane { card, proc_, sink });
                Event::Spawned { lane, pid }
            }
            Err(failed) => {
                if let Some(s) = sink {
                    s.take();
                }
                Event::NotSpawned {
                    lane,
                    why: NotSpawned::Failed {
                        error: failed.error,
                        tries: failed.tries,
                    },
                }
            }
        }
    }

    /// Sends `msg` to lane `lane`; an assignment only while the lease of its card holds (one
    /// `stat` and one `fstat`).
    fn send(&mut self, lane: LaneId, msg: ToLane) -> Option<Event> {
        let l = self.lanes.get_mut(lane).and_then(Option::as_mut)?;
        if matches!(msg, ToLane::Run { .. }) {
            if let Err(lost) = self.leases[l.card].verify() {
                return Some(Event::NotSent { lane, msg, lost });
            }
        }
        l.proc_.send(&msg);
        None
    }

    /// Captures the stacks of lane `lane` on a thread of its own; the result comes back as
    /// [`LaneEvent::Stacks`] (a thread that cannot start: at once, as the event).
    fn capture_stacks(&mut self, lane: LaneId) -> Option<Event> {
        let pid = self.lane_mut(lane)?.proc_.pid;
        let tool = self.settings.stack_tool.clone()?;
        let name = tool.name;
        match spawn_capture(tool, lane, pid, self.tx.clone()) {
            Ok(()) => None,
            Err(e) => {
                let error = StackError::Spawn {
                    tool: name,
                    reason: e.to_string(),
                };
                Some(Event::Stacks(lane, Err(error.to_string())))
            }
        }
    }

    fn record(&mut self, event: &Journal) {
        if let Err(e) = self.reporter.event(event) {
            match e {
                ReportError::Io { .. } => tracing::warn!("cannot append to the journal: {e}"),
                other => tracing::error!("report rejected an event: {other}"),
            }
        }
    }
}

/// Captures the stacks of lane `id` (process `pid`) with `tool` on a thread of its own; the
/// result comes back as [`LaneEvent::Stacks`].
fn spawn_capture(tool: StackTool, id: LaneId, pid: u32, tx: Sender<LaneEvent>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("stacks-{pid}"))
        .spawn(move || {
            let got = tool.capture(pid, STACK_BOUND);
            let _ = tx.send(LaneEvent::Stacks(id, got));
        })
        .map(drop)
}
