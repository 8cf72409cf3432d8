//! Where a queued retry goes (issue 23 item 2): the facts of every lane that could run it, given
//! to [`crate::dispatch::policy::placement`], and the retries held back from a lane that asks
//! (they wait, at most an init, for a card that holds their runtime or no worker at all: their
//! own card once reset). A wait that runs out is a deadline of its own: the hand-out runs again
//! then, and the first lane with room takes the retry.
//!
//! Only in `pool`: a `class` or `case` lane is a fresh process with no worker, wherever it runs.
//! A retry queued for a fresh lane's pass leaves the queue, and with it this file's care. This
//! file owns the waits and the lanes' facts; the rule is the policy's, the queue is `work`'s.

use std::time::Duration;

use super::lane::Lane;
use super::machine::DispatchState;
use super::retry_wait::RetryWait;
use crate::dispatch::policy::placement::{self, Candidate, Placement, RetryFacts, DEFAULT_INIT_MS};
use crate::dispatch::policy::{Isolation, LaneKind};

impl DispatchState {
    /// Case `i` failed on card `card` and waits in the queue for its retry.
    pub(super) fn note_retry(&mut self, i: usize, card: usize) {
        self.retry_waits.retain(|w| w.case != i);
        self.retry_waits.push(RetryWait {
            case: i,
            own_card: card,
            since: self.now,
            over: false,
        });
    }

    /// A worker of runtime `runtime` was built in `init_ms` this run.
    pub(super) fn note_init(&mut self, runtime: u32, init_ms: u64) {
        self.inits_seen.insert(runtime, init_ms);
    }

    /// What an init of `runtime` is estimated to cost (ms): the duration history's, else this
    /// run's last of it, else the median of this run's last of every runtime, else
    /// [`DEFAULT_INIT_MS`].
    pub(super) fn init_estimate(&self, runtime: u32) -> u64 {
        if let Some(ms) = self.work.init_history(runtime) {
            return ms;
        }
        if let Some(&ms) = self.inits_seen.get(&runtime) {
            return ms;
        }
        let mut seen: Vec<u64> = self.inits_seen.values().copied().collect();
        seen.sort_unstable();
        seen.get(seen.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(DEFAULT_INIT_MS)
    }

    /// The runtime of the pooled worker lane `l`'s card holds once the lane has run what it
    /// holds: its last case's (pooled), none after a standalone one; holding nothing, the worker
    /// it has now.
    fn holds_after(&self, l: &Lane) -> Option<u32> {
        match l.outstanding.back() {
            Some(&i) => {
                let c = self.work.case(i);
                c.pooled.then_some(c.runtime)
            }
            None => l.worker,
        }
    }

    /// The lanes that could run a retry: live regular lanes, not closing or being ended, on
    /// healthy cards not reserved for N-card cases.
    fn candidates(&self) -> Vec<Candidate> {
        let isolation = self.settings.isolation;
        let now = self.now;
        self.lanes
            .iter()
            .filter(|l| l.alive() && l.kind == LaneKind::Regular)
            .filter(|l| l.closed_at.is_none() && l.kill.is_none() && l.diag.is_none())
            .filter(|l| !self.cards[l.card].quarantined && !self.reserved(l.card))
            .map(|l| {
                let room = crate::dispatch::policy::wants_work(&l.state(false, isolation));
                // Room comes once the front unit is done: its cases' estimates, the running
                // one's counted from its start.
                let free_in_ms = if room {
                    Some(0)
                } else if self.work.has_estimates() {
                    let front = l.batches.front().copied().unwrap_or(0);
                    let mut ms = self.work.est_ms(l.outstanding.iter().take(front).copied());
                    if let Some((_, since)) = l.running {
                        let ran = now.saturating_sub(since).as_millis();
                        ms = ms.saturating_sub(u64::try_from(ran).unwrap_or(u64::MAX));
                    }
                    Some(ms)
                } else {
                    None
                };
                Candidate {
                    card: l.card,
                    holds: self.holds_after(l),
                    room,
                    free_in_ms,
                }
            })
            .collect()
    }

    /// Drops the waits of retries no longer queued on their own (handed out, taken into a
    /// fresh lane's pass, finished).
    fn prune_waits(&mut self) {
        let work = &self.work;
        self.retry_waits
            .retain(|w| !work.case(w.case).done && work.is_queued_alone(w.case));
    }

    /// The placement of the queued retry `w` now.
    fn placement(&self, w: &RetryWait, lanes: &[Candidate]) -> Placement {
        let c = self.work.case(w.case);
        let waited = self.now.saturating_sub(w.since).as_millis();
        placement::place_retry(&RetryFacts {
            runtime: c.runtime,
            pooled: c.pooled,
            own_card: w.own_card,
            waited_ms: if w.over {
                u64::MAX
            } else {
                u64::try_from(waited).unwrap_or(u64::MAX)
            },
            init_ms: self.init_estimate(c.runtime),
            lanes,
        })
    }

    /// The queued retries the lane on `card` does not take now (they wait for a better card).
    pub(super) fn retries_held_from(&mut self, card: usize) -> Vec<usize> {
        if self.retry_waits.is_empty() || self.settings.isolation != Isolation::Pool {
            return Vec::new();
        }
        self.prune_waits();
        let lanes = self.candidates();
        self.retry_waits
            .iter()
            .filter(|w| !placement::takes(&self.placement(w, &lanes), card))
            .map(|w| w.case)
            .collect()
    }

    /// When the earliest wait of a queued retry runs out, if one waits.
    pub(super) fn retry_deadline(&self) -> Option<Duration> {
        if self.settings.isolation != Isolation::Pool {
            return None;
        }
        self.retry_waits
            .iter()
            .filter(|w| !w.over)
            .map(|w| {
                let rt = self.work.case(w.case).runtime;
                w.since + Duration::from_millis(self.init_estimate(rt))
            })
            .min()
    }

    /// Ends the waits that ran out by now; the hand-out runs again for them.
    pub(super) fn end_retry_waits(&mut self) {
        let now = self.now;
        if !self.retry_deadline().is_some_and(|d| d <= now) {
            return;
        }
        for j in 0..self.retry_waits.len() {
            let w = self.retry_waits[j];
            let init = self.init_estimate(self.work.case(w.case).runtime);
            if w.since + Duration::from_millis(init) <= now {
                self.retry_waits[j].over = true;
            }
        }
        self.refill();
    }
}
