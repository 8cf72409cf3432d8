//! The state machine's view of the run's cases: what each has been through, and the queue of work
//! not yet handed to a lane.
//!
//! This file owns the bookkeeping only: units of work (a class's selected cases, or one case to
//! retry) in hand-out order, attempt counts, and which cases have their final verdict. It never
//! talks to a lane and never records a report event.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::case::CaseState;
use super::plan_queues::PlanQueues;
use super::unit::Unit;
use crate::case::Suite;
use crate::config::Overrides;
use crate::select::Selection;

/// Every selected case and the queue of work.
#[derive(Debug, Default)]
pub struct Work {
    cases: Vec<CaseState>,
    index: FxHashMap<String, usize>,
    queue: VecDeque<Unit>,
    /// `--order smart`: per card, its planned units and their estimates (ms), in order; the
    /// queue above then holds only what came back (retries, requeued cases), handed out first.
    planned: PlanQueues,
    multi: VecDeque<usize>,
    open: usize,
}

impl Work {
    /// The run's cases, one unit per selected class, in hand-out order; a case's timeout and
    /// retries are the config's overrides over its own settings over its class's.
    pub fn new(suite: &Suite, selection: &Selection, overrides: &Overrides) -> Self {
        let mut w = Work::default();
        let n = selection.len();
        w.cases.reserve_exact(n);
        w.index.reserve(n);
        for sc in &selection.classes {
            let class = &suite.classes[sc.class];
            let mut unit = Vec::new();
            for &ci in &sc.cases {
                let id = class.case_id(&class.cases[ci]);
                let devices = class.cases[ci].device_count;
                let settings = overrides.settings_of(class, &class.cases[ci]);
                w.index.insert(id.clone(), w.cases.len());
                if devices > 1 {
                    w.multi.push_back(w.cases.len());
                } else {
                    unit.push(w.cases.len());
                }
                w.cases.push(CaseState::new(
                    id,
                    (sc.class, ci),
                    class.name.len(),
                    devices,
                    &settings,
                ));
            }
            if !unit.is_empty() {
                w.queue.push_back(Unit { cases: unit });
            }
        }
        w.open = w.cases.len();
        w
    }

    /// Every case.
    pub fn cases(&self) -> &[CaseState] {
        &self.cases
    }

    /// One case.
    pub fn case(&self, i: usize) -> &CaseState {
        &self.cases[i]
    }

    /// One case, mutably.
    pub fn case_mut(&mut self, i: usize) -> &mut CaseState {
        &mut self.cases[i]
    }

    /// The index of case `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Takes a case out of the run before it is handed out (a skip).
    pub fn withdraw(&mut self, i: usize) {
        self.drop_queued(i);
        self.multi.retain(|c| *c != i);
        self.finish(i);
    }

    /// Takes case `i` out of every queue (shared and planned).
    fn drop_queued(&mut self, i: usize) {
        for u in &mut self.queue {
            u.cases.retain(|c| *c != i);
        }
        self.queue.retain(|u| !u.cases.is_empty());
        self.planned.drop_case(i);
    }

    /// The queue's units (one per selected class before any hand-out), in order.
    pub fn queued_units(&self) -> impl Iterator<Item = &Unit> {
        self.queue.iter()
    }

    /// Follows a plan from now on: `per_card[c]` is card `c`'s units (cases and their estimated
    /// total, ms) in order. The shared queue is replaced (the plan holds its cases).
    pub fn follow_plan(&mut self, per_card: Vec<Vec<(Vec<usize>, u64)>>) {
        self.queue.clear();
        self.planned = PlanQueues::new(per_card);
    }

    /// Whether the run follows a plan.
    pub fn is_planned(&self) -> bool {
        self.planned.is_planned()
    }

    /// The next unit for the lane on card `card`: what came back to the queue first, then the
    /// card's own plan, then (`may_steal`: its lane holds nothing) the longest unit left in
    /// another card's plan. Without a plan, the queue's next unit. `at_most` cuts the unit to
    /// its first cases (`--isolation case`; the rest stays first).
    pub fn pop_for(&mut self, card: usize, may_steal: bool, at_most: Option<usize>) -> Option<Unit> {
        if !self.queue.is_empty() || !self.is_planned() {
            return match at_most {
                Some(n) => self.pop_at_most(n),
                None => self.pop(),
            };
        }
        self.planned.pop_for(card, may_steal, at_most)
    }

    /// Marks a case's verdict final.
    pub fn finish(&mut self, i: usize) {
        if !self.cases[i].done {
            self.cases[i].done = true;
            self.open -= 1;
        }
    }

    /// Whether every case has its final verdict.
    pub fn all_done(&self) -> bool {
        self.open == 0
    }

    /// Cases without a final verdict, in order.
    pub fn open_cases(&self) -> Vec<usize> {
        (0..self.cases.len()).filter(|i| !self.cases[*i].done).collect()
    }

    /// The next unit to hand out.
    pub fn pop(&mut self) -> Option<Unit> {
        self.queue.pop_front()
    }

    /// The next unit to hand out, or only the first `n` cases of it (the rest stays first in
    /// the queue).
    pub fn pop_at_most(&mut self, n: usize) -> Option<Unit> {
        let front = self.queue.front_mut()?;
        if front.cases.len() <= n.max(1) {
            return self.queue.pop_front();
        }
        let cases: Vec<usize> = front.cases.drain(..n.max(1)).collect();
        Some(Unit { cases })
    }

    /// Whether work is waiting for a lane.
    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty() || self.planned.has_queued()
    }

    /// Queues a retry of one case ahead of everything else (a multi-card case: in the
    /// multi-card queue).
    pub fn push_retry(&mut self, i: usize) {
        if self.cases[i].devices > 1 {
            self.multi.push_front(i);
        } else {
            self.queue.push_front(Unit { cases: vec![i] });
        }
    }

    /// Takes a queued single-card case out of the queue to hand it out another way (a fresh
    /// lane's pass); `false` when it is not queued (already handed out, or finished).
    pub fn unqueue(&mut self, i: usize) -> bool {
        let before = self.queued_cases();
        self.drop_queued(i);
        self.queued_cases() < before
    }

    fn queued_cases(&self) -> usize {
        self.planned.queued_cases() + self.queue.iter().map(|u| u.cases.len()).sum::<usize>()
    }

    /// Whether multi-card cases wait for the multi-card phase.
    pub fn has_multi(&self) -> bool {
        !self.multi.is_empty()
    }

    /// The waiting multi-card cases, in order.
    pub fn multi_queued(&self) -> Vec<usize> {
        self.multi.iter().copied().collect()
    }

    /// Puts the waiting multi-card cases in this order (the same cases).
    pub fn reorder_multi(&mut self, order: Vec<usize>) {
        debug_assert_eq!(order.len(), self.multi.len());
        self.multi = order.into();
    }

    /// Takes every waiting multi-card case, in order.
    pub fn take_multi(&mut self) -> Vec<usize> {
        self.multi.drain(..).collect()
    }

    /// Takes the first waiting multi-card case and the ones of its class waiting right after it.
    pub fn take_multi_class(&mut self) -> Vec<usize> {
        let Some(&first) = self.multi.front() else {
            return Vec::new();
        };
        let class = self.cases[first].class;
        let n = self
            .multi
            .iter()
            .take_while(|&&i| self.cases[i].class == class)
            .count();
        self.multi.drain(..n).collect()
    }

    /// Takes the first waiting multi-card case.
    pub fn take_multi_one(&mut self) -> Vec<usize> {
        self.multi.pop_front().into_iter().collect()
    }

    /// Cards the waiting multi-card cases need at most.
    pub fn multi_cards(&self) -> u32 {
        self.multi
            .iter()
            .map(|&i| self.cases[i].devices)
            .max()
            .unwrap_or(0)
    }

    /// Puts unfinished cases back at the front of the queue, in order, one unit per run of cases
    /// of the same class.
    pub fn requeue(&mut self, cases: &[usize]) {
        let mut units: Vec<Unit> = Vec::new();
        let mut multi = Vec::new();
        for &i in cases {
            if self.cases[i].done {
                continue;
            }
            if self.cases[i].devices > 1 {
                multi.push(i);
                continue;
            }
            match units.last_mut() {
                Some(u) if self.cases[u.cases[0]].class == self.cases[i].class => u.cases.push(i),
                _ => units.push(Unit { cases: vec![i] }),
            }
        }
        for u in units.into_iter().rev() {
            self.queue.push_front(u);
        }
        for i in multi.into_iter().rev() {
            self.multi.push_front(i);
        }
    }

    /// Drops every queued unit (no card can run them).
    pub fn clear_queue(&mut self) {
        self.queue.clear();
        self.planned.clear();
        self.multi.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{CaseSpec, ClassSpec, Runtime};
    use crate::select::{select, Filter};
    use platform_common::Arch;

    fn work() -> Work {
        let rt = Runtime::new("r");
        let suite = Suite::new()
            .class(ClassSpec::pooled("A", rt.clone()).cases([CaseSpec::trivial("x"), CaseSpec::trivial("y")]))
            .class(ClassSpec::pooled("B", rt).case(CaseSpec::trivial("z")));
        let sel = select(&suite, Arch::A5, &Filter::default()).unwrap();
        Work::new(&suite, &sel, &Overrides::default())
    }

    #[test]
    fn units_requeue_in_order() {
        let mut w = work();
        assert_eq!(w.pop().unwrap().cases, vec![0, 1]);
        w.push_retry(2);
        w.requeue(&[0, 1]);
        assert_eq!(w.pop().unwrap().cases, vec![0, 1]);
        assert_eq!(w.pop().unwrap().cases, vec![2]);
        assert_eq!(w.pop().unwrap().cases, vec![2]);
        assert!(w.pop().is_none());
        w.requeue(&[0, 1, 2]);
        assert_eq!(w.pop_at_most(1).unwrap().cases, vec![0]);
        assert_eq!(
            w.pop_at_most(5).unwrap().cases,
            vec![1],
            "the rest of the unit stays first"
        );
        assert_eq!(w.pop_at_most(1).unwrap().cases, vec![2]);
        assert!(w.pop_at_most(1).is_none());
        assert_eq!(w.case(1).name(), "y");
        assert_eq!(w.case(2).class_name(), "B");
        assert_eq!(w.case(2).name(), "z");
        assert_eq!(
            (w.case(1).class, w.case(1).case),
            (0, 1),
            "the case by its indices"
        );
        assert_eq!((w.case(2).class, w.case(2).case), (1, 0));
        w.finish(0);
        w.finish(0);
        assert_eq!(w.open_cases(), vec![1, 2]);
        w.withdraw(1);
        w.finish(2);
        assert!(w.all_done());
    }
}
