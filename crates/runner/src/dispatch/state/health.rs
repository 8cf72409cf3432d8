//! Cards' health in the run: their health events, the strikes against them, taking a card out of
//! the run, and cards that remember their health (issue 9, item 4).
//!
//! - A strike (a lane death, an infrastructure kill, an init timeout, a multi-card init failure)
//!   is counted here, in [`DispatchState::strike`], and only here; what its count means is the
//!   policy's ([`crate::dispatch::policy::after_strike`]): nothing yet, a fresh process next, or
//!   the card out of the run.
//! - A card quarantined for a fault of its own is remembered host-wide beside its lock
//!   ([`Action::Remember`]: when, why, by which run, its health events of the run), and a run that
//!   leases a card whose record says quarantined checks it first, in a preflight lane (init and
//!   probe, nothing else), before any work goes to it: passing clears the record (the health
//!   event `preflight_ok`; [`Action::Forget`]) and the card gets work; failing quarantines it at
//!   once (`quarantined_at_start`), its record kept (rewritten by this run) and its work left to
//!   the other cards. A quarantine that is the host's, not the card's (a lost lease, a lane that
//!   cannot start, lanes killed from outside again and again), is not remembered.
//!
//! - A card that reports a hardware fault (a code of class `hardware`: HBM ECC, device memory, a
//!   link, the heartbeat, the hdc channel) is taken out at once, "needs service", recorded so
//!   (`needs_service`): no force-reset loop, its lane gets no more work, the failed case is
//!   retried on another card, and later runs skip the card (no preflight either) until an operator
//!   clears the record (`cargo cardguard cards --clear N`).
//!
//! This file owns those steps. The decisions are the policy's (`lane_exit`'s preflight step,
//! `strikes`, `quarantine`'s reasons); the record files are the process layer's. It never judges
//! an attempt.

use platform_common::health::Capability;
use platform_common::lease::{HealthStatus, LeaseError};
use platform_common::Code;

use super::event::Action;
use super::handout::Start;
use super::machine::DispatchState;
use crate::dispatch::policy::{self, Blamed, PreflightStep, Strike, StrikeStep};
use crate::report::model::{Event as Journal, HealthRecord, RunnerEventKind};

impl DispatchState {
    /// Records a health event of card `card` (and keeps it for the card's health record).
    pub(super) fn health(&mut self, card: usize, record: HealthRecord) {
        let device = self.cards[card].device;
        let at_ms = record.at_ms;
        self.cards[card].keep(record.clone());
        self.record(Journal::Health {
            at_ms,
            device,
            record,
        });
    }

    /// Counts `strike` against card `card` (the one place a card's strikes are counted) and
    /// applies what the new count means: nothing yet, a fresh process next (its reason kept for
    /// that lane's `fresh_process`), or the card out of the run.
    pub(super) fn strike(&mut self, card: usize, strike: Strike) -> StrikeStep {
        let in_a_row = self.cards[card].strikes.add(strike.kind());
        let step = policy::after_strike(&strike, in_a_row, self.cards[card].device);
        match &step {
            StrikeStep::Stay => {}
            StrikeStep::FreshNext(reason) => self.cards[card].replacement = Some(reason.clone()),
            StrikeStep::Quarantine(reason, blamed) => {
                self.take_out(card, RunnerEventKind::Quarantined, reason, *blamed);
            }
        }
        step
    }

    /// Counts `strike` (a death or a kill from outside) against the multi-card lanes: the
    /// multi-card phase reads their counts.
    pub(super) fn strike_multi(&mut self, strike: Strike) {
        self.multi.add(strike.kind());
    }

    /// Starts a preflight lane on each card whose record says quarantined (at the run's start,
    /// before any work is handed out); a card whose record says it needs service is taken out
    /// at once, its record left as it is.
    pub(super) fn start_preflights(&mut self) {
        for card in 0..self.cards.len() {
            if let Some(rec) = self.cards[card].serviced.take() {
                let (device, physical) = (self.cards[card].device, self.cards[card].physical);
                let reason = policy::quarantine::still_needs_service(device, physical, &rec.to_string());
                self.take_out(card, RunnerEventKind::QuarantinedAtStart, &reason, Blamed::Host);
                continue;
            }
            let Some(rec) = &self.cards[card].preflight else {
                continue;
            };
            let device = self.cards[card].device;
            tracing::info!(
                device,
                "card {device}'s health record says {rec}: preflight first"
            );
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
                self.act(Action::Forget { card, reason });
            }
            PreflightStep::Failed(what) => {
                self.cards[card].preflight = None;
                let reason = policy::quarantine::preflight_failed(device, &what, &remembered);
                self.take_out(card, RunnerEventKind::QuarantinedAtStart, &reason, Blamed::Card);
            }
            PreflightStep::Killed(strike) => match self.strike(card, strike) {
                StrikeStep::Quarantine(..) => self.cards[card].preflight = None,
                StrikeStep::Stay | StrikeStep::FreshNext(_) => self.spawn(card, Start::Preflight),
            },
        }
    }

    /// The lease of `card` no longer excludes others (`lost`): the card leaves the run (the
    /// host's fault), and the loss is kept for the run's closing error (exit 2, naming the lock
    /// dir).
    pub(super) fn lease_lost(&mut self, card: usize, lost: LeaseError) {
        if self.cards[card].quarantined {
            return;
        }
        let reason = format!("its lease no longer excludes others: {lost}");
        self.quarantine_host(card, &reason);
        self.leases_lost.push(lost);
    }

    /// Takes `card` out of the run (once) for a fault of its own, recording `quarantined` with
    /// the reason and remembering it in the card's health record.
    pub(super) fn quarantine(&mut self, card: usize, reason: &str) {
        self.take_out(card, RunnerEventKind::Quarantined, reason, Blamed::Card);
    }

    /// Card `card` reported hardware fault `code` in case `case`: it is taken out at once,
    /// "needs service", remembered so; its lane gets no more work and is closed.
    pub(super) fn needs_service(&mut self, card: usize, code: Code, case: &str) {
        if self.cards[card].quarantined {
            return;
        }
        let (device, physical) = (self.cards[card].device, self.cards[card].physical);
        let reason = policy::quarantine::hardware_fault(device, physical, code, case);
        self.take_out(card, RunnerEventKind::Quarantined, &reason, Blamed::Service);
        if let Some(lane) = self.cards[card].lane {
            self.close_lane(lane);
        }
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
        let status = match blamed {
            Blamed::Card => HealthStatus::Quarantined,
            Blamed::Service => HealthStatus::NeedsService,
            Blamed::Host => return,
        };
        {
            let events: Vec<HealthRecord> = self.cards[card].recent.iter().cloned().collect();
            let capability = failed_capability(&events);
            self.act(Action::Remember {
                card,
                status,
                reason: reason.to_owned(),
                events,
                capability,
            });
        }
    }
}

/// The capability a card's quarantine is for: the last of its health events that names one (an
/// SDMA warm-up that failed the init, a failed SDMA probe), else compute (every other failure is
/// met on the compute path).
pub(super) fn failed_capability(events: &[HealthRecord]) -> Capability {
    events
        .iter()
        .rev()
        .find_map(HealthRecord::capability)
        .unwrap_or(Capability::Compute)
}
