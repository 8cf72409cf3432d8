//! `--order smart`'s per-card queues: each card's planned units with their estimates, and the
//! stealing of the longest unit left when a card runs ahead of its plan.
//!
//! This file owns those queues only; [`super::work::Work`] decides when they are used (what came
//! back to the shared queue goes out first) and keeps every case's bookkeeping.

use std::collections::VecDeque;

use super::unit::Unit;

/// Per card, its planned units and their estimated totals (ms), in order. Empty: no plan.
#[derive(Debug, Default)]
pub struct PlanQueues(Vec<VecDeque<(Unit, u64)>>);

impl PlanQueues {
    /// `per_card[c]` is card `c`'s units (cases and their estimated total, ms) in order; empty
    /// units are dropped.
    pub fn new(per_card: Vec<Vec<(Vec<usize>, u64)>>) -> Self {
        Self(
            per_card
                .into_iter()
                .map(|units| {
                    units
                        .into_iter()
                        .filter(|(cases, _)| !cases.is_empty())
                        .map(|(cases, ms)| (Unit { cases }, ms))
                        .collect()
                })
                .collect(),
        )
    }

    /// Whether there is a plan at all.
    pub fn is_planned(&self) -> bool {
        !self.0.is_empty()
    }

    /// Whether any card has planned work left.
    pub fn has_queued(&self) -> bool {
        self.0.iter().any(|q| !q.is_empty())
    }

    /// How many cases the plans still hold.
    pub fn queued_cases(&self) -> usize {
        self.0.iter().flatten().map(|(u, _)| u.cases.len()).sum()
    }

    /// Takes case `i` out of every card's plan.
    pub fn drop_case(&mut self, i: usize) {
        for q in &mut self.0 {
            for (u, _) in q.iter_mut() {
                u.cases.retain(|c| *c != i);
            }
            q.retain(|(u, _)| !u.cases.is_empty());
        }
    }

    /// Drops every planned unit.
    pub fn clear(&mut self) {
        for q in &mut self.0 {
            q.clear();
        }
    }

    /// Card `card` has run out of its planned work: moves the longest unit left in another
    /// card's plan to the front of its own (stealing). `false` when nothing is left anywhere.
    fn steal_for(&mut self, card: usize) -> bool {
        let mut best: Option<(u64, usize, usize)> = None;
        for (c, q) in self.0.iter().enumerate() {
            if c == card {
                continue;
            }
            for (j, (_, ms)) in q.iter().enumerate() {
                if best.map_or(true, |b| *ms > b.0) {
                    best = Some((*ms, c, j));
                }
            }
        }
        let Some((_, c, j)) = best else { return false };
        let Some(unit) = self.0[c].remove(j) else {
            return false;
        };
        if let Some(q) = self.0.get_mut(card) {
            q.push_front(unit);
            true
        } else {
            false
        }
    }

    /// A unit of at most `max_ms` for card `card`, which waits for a reservation (backfilling):
    /// the first such unit in its own plan, else the longest such unit in another card's plan.
    pub fn pop_fitting(&mut self, card: usize, max_ms: u64) -> Option<Unit> {
        if let Some(q) = self.0.get_mut(card) {
            if let Some(j) = q.iter().position(|(_, ms)| *ms <= max_ms) {
                return q.remove(j).map(|(u, _)| u);
            }
        }
        let mut best: Option<(u64, usize, usize)> = None;
        for (c, q) in self.0.iter().enumerate().filter(|(c, _)| *c != card) {
            for (j, (_, ms)) in q.iter().enumerate() {
                if *ms <= max_ms && best.map_or(true, |b| *ms > b.0) {
                    best = Some((*ms, c, j));
                }
            }
        }
        let (_, c, j) = best?;
        self.0[c].remove(j).map(|(u, _)| u)
    }

    /// The next planned unit for the lane on card `card`: its own plan's next, else
    /// (`may_steal`: its lane holds nothing) the longest unit left in another card's plan.
    /// `at_most` cuts the unit to its first cases (`--isolation case`; the rest stays first).
    pub fn pop_for(&mut self, card: usize, may_steal: bool, at_most: Option<usize>) -> Option<Unit> {
        let own_empty = self.0.get(card).map_or(true, VecDeque::is_empty);
        if own_empty && !(may_steal && self.steal_for(card)) {
            return None;
        }
        let q = self.0.get_mut(card)?;
        let (front, ms) = q.front_mut()?;
        match at_most {
            Some(n) if front.cases.len() > n.max(1) => {
                let cases: Vec<usize> = front.cases.drain(..n.max(1)).collect();
                // What is left is estimated at its share of the whole.
                let left = front.cases.len() as u64;
                *ms = *ms * left / (left + cases.len() as u64);
                Some(Unit { cases })
            }
            _ => q.pop_front().map(|(u, _)| u),
        }
    }
}
