//! Cases no card is left for: when every card of the run is quarantined, every open case ends
//! `failed` (class infrastructure) with the reason; so do multi-card cases the multi-card phase
//! cannot run. Nothing is lost: each gets its verdict.
//!
//! This file owns ending cases without running them. It never decides that no card is left
//! (the end-of-event checks and the multi-card phase do, through the policy's reasons).

use super::machine::DispatchState;
use crate::dispatch::policy;
use crate::report::model::Event as Journal;

impl DispatchState {
    /// Every card is quarantined: every open case ends with its verdict.
    pub(super) fn abandon_all(&mut self) {
        let devices: Vec<_> = self.cards.iter().map(|c| c.device).collect();
        let reason = policy::quarantine::no_healthy_card(&devices);
        self.work.clear_queue();
        let open = self.work.open_cases();
        self.abandon(open, &reason);
    }

    /// Ends `cases` without running them: each gets its verdict (failed, class infrastructure)
    /// with `reason`, so nothing is lost.
    pub(super) fn abandon(&mut self, cases: impl IntoIterator<Item = usize>, reason: &str) {
        for i in cases {
            let id = self.work.case(i).id.clone();
            let at_ms = self.now_ms();
            self.record(Journal::CaseAbandoned {
                at_ms,
                id,
                reason: reason.to_owned(),
            });
            self.work.finish(i);
        }
        self.last_verdict = Some(self.now);
    }
}
