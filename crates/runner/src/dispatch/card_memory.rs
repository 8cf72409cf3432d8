//! Cards remember their health (issue 9, item 4): a card quarantined for a fault of its own is
//! recorded host-wide beside its lock file (its health record: when, why, by which run, its
//! health events of the run), and a run that leases a card whose record says quarantined checks
//! it first, in a preflight lane (init and probe, nothing else), before any work goes to it:
//! passing clears the record (the health event `preflight_ok`; the card was recovered, e.g. by a
//! driver reset between runs) and the card gets work; failing quarantines it at once
//! (`quarantined_at_start`), its record kept (rewritten by this run) and its work left to the
//! other cards. A quarantine that is the host's, not the card's (a lost lease, a lane that
//! cannot start, lanes killed from outside again and again), is not recorded.
//!
//! This file owns taking a card out of the run and what the card's record gets. The decisions
//! are [`super::policy`]'s (`lane_exit`'s preflight step, `quarantine`'s blame); the record
//! files are `platform_common::lease`'s. It never judges an attempt.

use platform_common::lease::{CardHealth, HealthStatus};

use super::event_loop::Dispatcher;
use super::policy::{self, Blamed, PreflightStep};
use super::state::Start;
use crate::report::model::{HealthRecord, RunnerEventKind};

impl Dispatcher {
    /// Reads every card's health record and starts a preflight lane on each card whose record
    /// says quarantined (at the run's start, before any work is handed out).
    pub(super) fn start_preflights(&mut self) {
        for card in 0..self.cards.len() {
            let Some(rec) = self.cards[card].lease.health_record() else {
                continue;
            };
            if !rec.is_quarantined() {
                continue;
            }
            let device = self.cards[card].device;
            tracing::info!(
                device,
                "card {device}'s health record says {rec}: preflight first"
            );
            self.cards[card].preflight = Some(rec);
            self.spawn(card, Start::Preflight);
        }
    }

    /// The preflight lane of `card` (pid `pid`) ended with `step`.
    pub(super) fn preflight_ended(&mut self, card: usize, pid: u32, step: PreflightStep) {
        let device = self.cards[card].device;
        let remembered = self.cards[card]
            .preflight
            .as_ref()
            .map_or_else(|| "quarantined".to_owned(), ToString::to_string);
        match step {
            PreflightStep::Passed => {
                self.cards[card].preflight = None;
                let detail = format!(
                    "init and probe passed in lane pid {pid}; the card's health record was cleared \
                     (it said: {remembered})"
                );
                let at_ms = self.now_ms();
                self.health(
                    card,
                    HealthRecord::runner(at_ms, RunnerEventKind::PreflightOk, detail).with_pid(pid),
                );
                let reason = format!("preflight passed in run {}", self.settings.run_id);
                if let Err(e) = self.cards[card]
                    .lease
                    .clear_health(&self.settings.run_id, &reason)
                {
                    tracing::warn!(device, "cannot clear the card's health record: {e}");
                }
            }
            PreflightStep::Failed(what) => {
                self.cards[card].preflight = None;
                let reason = policy::quarantine::preflight_failed(device, &what, &remembered);
                self.take_out(card, RunnerEventKind::QuarantinedAtStart, &reason, Blamed::Card);
            }
            PreflightStep::Again => {
                self.cards[card].infra_kills += 1;
                self.spawn(card, Start::Preflight);
            }
            PreflightStep::HostQuarantine(reason) => {
                self.cards[card].preflight = None;
                self.quarantine_host(card, &reason);
            }
        }
    }

    /// Takes `card` out of the run (once) for a fault of its own, recording `quarantined` with
    /// the reason and remembering it in the card's health record.
    pub(super) fn quarantine(&mut self, card: usize, reason: &str) {
        self.take_out(card, RunnerEventKind::Quarantined, reason, Blamed::Card);
    }

    /// Takes `card` out of the run (once) for a reason of the host's (a lost lease, lanes that
    /// cannot start or keep being killed from outside): `quarantined`, and the card's health
    /// record is left as it is.
    pub(super) fn quarantine_host(&mut self, card: usize, reason: &str) {
        self.take_out(card, RunnerEventKind::Quarantined, reason, Blamed::Host);
    }

    fn take_out(&mut self, card: usize, kind: RunnerEventKind, reason: &str, blamed: Blamed) {
        if self.cards[card].quarantined {
            return;
        }
        self.cards[card].quarantined = true;
        let device = self.cards[card].device;
        tracing::warn!(device, "card quarantined: {reason}");
        let at_ms = self.now_ms();
        self.health(card, HealthRecord::runner(at_ms, kind, reason));
        if blamed == Blamed::Card {
            self.remember(card, reason);
        }
    }

    /// Writes `card`'s health record: quarantined now by this run for `reason`, with its health
    /// events of the run (a failure to write is a warning: the run's own report has it all).
    fn remember(&mut self, card: usize, reason: &str) {
        let c = &self.cards[card];
        let events = c
            .recent
            .iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .collect();
        let rec = CardHealth::now(c.device, HealthStatus::Quarantined, &self.settings.run_id, reason)
            .with_events(events);
        if let Err(e) = c.lease.remember_health(&rec) {
            tracing::warn!(
                device = c.device,
                "cannot record the card's health beside its lock: {e}"
            );
        }
    }
}
