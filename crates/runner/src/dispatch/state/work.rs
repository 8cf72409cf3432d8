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
use crate::case::{Kind, Suite};
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
    /// The N-card cases, in units (a class's, a planned block, a retry), in the order they
    /// reserve their cards.
    multi: VecDeque<Unit>,
    /// `--order smart`: the cards (indices) the plan has a block of N-card cases on, by the
    /// block's first case; a unit without any (a retry, a class's) takes the cards free first.
    multi_cards: FxHashMap<usize, Vec<usize>>,
    /// Each case's estimated duration (ms), from the duration history; empty without a plan.
    est: Vec<u64>,
    /// The runtimes' names; a case's `runtime` is an index of it.
    runtimes: Vec<String>,
    /// Each runtime's init (ms) in the duration history, where it has one.
    init_hist: Vec<Option<u64>>,
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
            let runtime = w.runtime_id(&class.runtime.name);
            let pooled = class.kind == Kind::Pooled;
            let mut unit = Vec::new();
            let mut multi = Vec::new();
            for &ci in &sc.cases {
                let id = class.case_id(&class.cases[ci]);
                let devices = class.cases[ci].device_count;
                let settings = overrides.settings_of(class, &class.cases[ci]);
                w.index.insert(id.clone(), w.cases.len());
                if devices > 1 {
                    multi.push(w.cases.len());
                } else {
                    unit.push(w.cases.len());
                }
                w.cases.push(CaseState::new(
                    id,
                    (sc.class, ci),
                    class.name.len(),
                    devices,
                    (runtime, pooled),
                    &settings,
                ));
            }
            if !unit.is_empty() {
                w.queue.push_back(Unit { cases: unit });
            }
            if !multi.is_empty() {
                w.multi.push_back(Unit { cases: multi });
            }
        }
        w.open = w.cases.len();
        w.init_hist = vec![None; w.runtimes.len()];
        w
    }

    /// The index of runtime `name` (added when new).
    fn runtime_id(&mut self, name: &str) -> u32 {
        let i = match self.runtimes.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.runtimes.push(name.to_owned());
                self.runtimes.len() - 1
            }
        };
        u32::try_from(i).unwrap_or(u32::MAX)
    }

    /// The index of runtime `name` among the run's, if a selected case uses it.
    pub fn runtime_index(&self, name: &str) -> Option<u32> {
        let i = self.runtimes.iter().position(|n| n == name)?;
        u32::try_from(i).ok()
    }

    /// The runtimes' inits (ms) in the duration history, by name.
    pub fn set_init_history(&mut self, init_ms: &FxHashMap<String, u64>) {
        self.init_hist = self.runtimes.iter().map(|n| init_ms.get(n).copied()).collect();
    }

    /// Runtime `runtime`'s init (ms) in the duration history, if it has one.
    pub fn init_history(&self, runtime: u32) -> Option<u64> {
        self.init_hist.get(runtime as usize).copied().flatten()
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
        for u in &mut self.multi {
            u.cases.retain(|c| *c != i);
        }
        self.multi.retain(|u| !u.cases.is_empty());
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

    /// Gives every case its estimated duration (ms, in the run's order): backfilling around a
    /// reservation reads them.
    pub fn set_estimates(&mut self, case_ms: Vec<u64>) {
        self.est = case_ms;
    }

    /// Whether the cases have estimates.
    pub fn has_estimates(&self) -> bool {
        !self.est.is_empty()
    }

    /// The estimated duration of `cases` together (ms; a case without an estimate counts 1).
    pub fn est_ms(&self, cases: impl IntoIterator<Item = usize>) -> u64 {
        cases
            .into_iter()
            .map(|i| self.est.get(i).copied().unwrap_or(0).max(1))
            .sum()
    }

    /// The next unit for the lane on card `card`: what came back to the queue first, then the
    /// card's own plan, then (`may_steal`: its lane holds nothing) the longest unit left in
    /// another card's plan. Without a plan, the queue's next unit. `at_most` cuts the unit to
    /// its first cases (`--isolation case`; the rest stays first). The retries of `held` are
    /// not for this card now (they wait for a better one): they stay queued, and it takes what
    /// comes after them.
    pub fn pop_for(
        &mut self,
        card: usize,
        may_steal: bool,
        at_most: Option<usize>,
        held: &[usize],
    ) -> Option<Unit> {
        match self.first_free(held) {
            Some(j) => self.pop_at(j, at_most),
            None if self.is_planned() => self.planned.pop_for(card, may_steal, at_most),
            None => None,
        }
    }

    /// For card `card`, which waits for a reservation: a unit estimated at most `max_ms`
    /// (backfilling), what came back to the queue first (its first unit not `held`), else from
    /// the plans ([`PlanQueues::pop_fitting`]). Nothing without estimates.
    pub fn pop_fitting(&mut self, card: usize, max_ms: u64, held: &[usize]) -> Option<Unit> {
        if !self.has_estimates() {
            return None;
        }
        if let Some(j) = self.first_free(held) {
            let fits = self.est_ms(self.queue[j].cases.iter().copied()) <= max_ms;
            return fits.then(|| self.queue.remove(j)).flatten();
        }
        self.planned.pop_fitting(card, max_ms)
    }

    /// The position of the queue's first unit that is not a retry of `held`.
    fn first_free(&self, held: &[usize]) -> Option<usize> {
        self.queue
            .iter()
            .position(|u| !matches!(u.cases.as_slice(), [i] if held.contains(i)))
    }

    /// Takes the queue's unit at `j`, or (`at_most`) only its first cases.
    fn pop_at(&mut self, j: usize, at_most: Option<usize>) -> Option<Unit> {
        let unit = self.queue.get_mut(j)?;
        match at_most {
            Some(n) if unit.cases.len() > n.max(1) => {
                let cases: Vec<usize> = unit.cases.drain(..n.max(1)).collect();
                Some(Unit { cases })
            }
            _ => self.queue.remove(j),
        }
    }

    /// Whether case `i` waits in the queue as a unit of its own (a retry).
    pub fn is_queued_alone(&self, i: usize) -> bool {
        self.queue.iter().any(|u| u.cases == [i])
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
            self.multi.push_front(Unit { cases: vec![i] });
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

    /// Whether N-card cases wait for their cards.
    pub fn has_multi(&self) -> bool {
        !self.multi.is_empty()
    }

    /// The waiting N-card cases, in order.
    pub fn multi_queued(&self) -> Vec<usize> {
        self.multi.iter().flat_map(|u| u.cases.iter().copied()).collect()
    }

    /// The waiting N-card cases in these blocks (the planner's, in the order they start, each
    /// with the cards it is planned on, if any): the same cases.
    pub fn follow_multi_plan(&mut self, blocks: Vec<(Vec<usize>, Option<Vec<usize>>)>) {
        debug_assert_eq!(
            blocks.iter().map(|b| b.0.len()).sum::<usize>(),
            self.multi_queued().len()
        );
        self.multi_cards.clear();
        self.multi = blocks
            .into_iter()
            .filter(|b| !b.0.is_empty())
            .map(|(cases, cards)| {
                if let Some(cards) = cards {
                    self.multi_cards.insert(cases[0], cards);
                }
                Unit { cases }
            })
            .collect();
    }

    /// The cards the next unit of N-card cases is planned on (`None`: no plan for it).
    pub fn next_multi_planned_cards(&self) -> Option<&[usize]> {
        let first = self.multi.front()?.cases.first()?;
        self.multi_cards.get(first).map(Vec::as_slice)
    }

    /// Takes the next unit of N-card cases whole (`pool`: one lane runs a block).
    pub fn take_multi(&mut self) -> Vec<usize> {
        self.multi.pop_front().map(|u| u.cases).unwrap_or_default()
    }

    /// Takes the first waiting N-card case and the ones of its class right after it in its unit.
    pub fn take_multi_class(&mut self) -> Vec<usize> {
        let Some(front) = self.multi.front_mut() else {
            return Vec::new();
        };
        let class = self.cases[front.cases[0]].class;
        let n = front
            .cases
            .iter()
            .take_while(|&&i| self.cases[i].class == class)
            .count();
        let taken: Vec<usize> = front.cases.drain(..n).collect();
        if front.cases.is_empty() {
            self.multi.pop_front();
        }
        taken
    }

    /// Takes the first waiting N-card case.
    pub fn take_multi_one(&mut self) -> Vec<usize> {
        let Some(front) = self.multi.front_mut() else {
            return Vec::new();
        };
        let first = front.cases.remove(0);
        if front.cases.is_empty() {
            self.multi.pop_front();
        }
        vec![first]
    }

    /// Cards the next unit of N-card cases needs (0: none waits).
    pub fn next_multi_cards(&self) -> u32 {
        self.multi.front().map_or(0, |u| {
            u.cases.iter().map(|&i| self.cases[i].devices).max().unwrap_or(0)
        })
    }

    /// Puts unfinished cases back at the front of the queue, in order, one unit per run of cases
    /// of the same class.
    pub fn requeue(&mut self, cases: &[usize]) {
        let mut units: Vec<Unit> = Vec::new();
        let mut multi: Vec<Unit> = Vec::new();
        for &i in cases {
            if self.cases[i].done {
                continue;
            }
            if self.cases[i].devices > 1 {
                match multi.last_mut() {
                    Some(u) if self.cases[u.cases[0]].class == self.cases[i].class => u.cases.push(i),
                    _ => multi.push(Unit { cases: vec![i] }),
                }
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
        for u in multi.into_iter().rev() {
            self.multi.push_front(u);
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
