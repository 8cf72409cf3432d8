//! The end of an attempt, however it ended (the lane's `finished` message, or a death the exit
//! handling blamed on it): the journal's `case_finished`, and the retry rule applied (the verdict
//! final, or the retry first in the queue and noted on the card for its fresh lane's pass).
//!
//! This file owns recording an attempt and applying [`crate::dispatch::policy::after_attempt`].
//! It never decides a retry itself and never judges a death (`exits` blames one).

use super::machine::DispatchState;
use crate::dispatch::policy::{self, AttemptDecision, AttemptFacts};
use crate::report::model::{AttemptOutcome, AttemptOutput, ErrorReport, Event as Journal};

/// How an attempt ended.
#[derive(Debug)]
pub struct AttemptEnd {
    /// Its outcome.
    pub outcome: AttemptOutcome,
    /// Its wall time.
    pub duration_ms: u64,
    /// Why it failed.
    pub error: Option<ErrorReport>,
    /// What the lane wrote during it (empty for a passing attempt).
    pub output: AttemptOutput,
    /// Whether its lane was killed by a signal the dispatcher did not send (retried although its
    /// class is `infrastructure`).
    pub infrastructure_kill: bool,
}

impl DispatchState {
    /// Records an attempt of case `i` on card `card` (lane pid `pid`) and applies the retry rule:
    /// verdict final, or retry first in the queue.
    pub(super) fn attempt_ended(&mut self, i: usize, card: usize, pid: u32, end: AttemptEnd) {
        let AttemptEnd {
            outcome,
            duration_ms,
            error,
            output,
            infrastructure_kill,
        } = end;
        let device = self.cards[card].device;
        let hardware = error.as_ref().and_then(|e| e.code).filter(|c| c.is_hardware());
        let flag = self.settings.retries;
        let c = self.work.case_mut(i);
        c.attempts += 1;
        let attempt = c.attempts;
        let id = c.id.clone();
        let decision = policy::after_attempt(&AttemptFacts {
            outcome,
            error: error.as_ref(),
            attempt,
            retries: policy::retries_for(c.retries, flag),
            infrastructure_kill,
        });
        let at_ms = self.now_ms();
        let case_name = id.to_string();
        self.record(Journal::CaseFinished {
            at_ms,
            id: id.clone(),
            device,
            pid,
            attempt,
            outcome,
            duration_ms,
            error,
            output,
        });
        if let Some(code) = hardware {
            self.needs_service(card, code, &case_name);
        }
        match decision {
            AttemptDecision::Retry { reason } => {
                self.record(Journal::RetryScheduled { at_ms, id, reason });
                self.work.push_retry(i);
                if self.work.case(i).devices <= 1 {
                    // It waits for a card holding its runtime, or its own once reset.
                    self.note_retry(i, card);
                    if hardware.is_none() {
                        self.cards[card].retries.push(i);
                    }
                }
            }
            AttemptDecision::Final => {
                self.work.finish(i);
                self.last_verdict = Some(self.now);
            }
        }
    }
}
