//! The planner's facts and its answer: the workload (cards, classes with their runtimes and
//! estimates, init costs, N-card cases), the plan (per card its units, the blocks of N-card cases,
//! the predicted makespan and inits) and the lower bound of any plan's wall time.
//!
//! This file owns those types only; how a plan is made is the parent's.

/// One class to plan: its runtime (an index into the init costs) and its cases' estimates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanClass {
    /// The runtime (index into [`Workload::init_ms`]).
    pub runtime: usize,
    /// Its single-card cases: (case index in the run, estimated ms), in suite order.
    pub cases: Vec<(usize, u64)>,
}

/// One N-card case to plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanMulti {
    /// The case index in the run.
    pub case: usize,
    /// The runtime (index into [`Workload::init_ms`]).
    pub runtime: usize,
    /// Cards it needs.
    pub cards: usize,
    /// Its estimate (ms).
    pub ms: u64,
}

/// What the planner plans.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Workload {
    /// Cards of the run.
    pub cards: usize,
    /// The init cost of each runtime (ms).
    pub init_ms: Vec<u64>,
    /// The classes.
    pub classes: Vec<PlanClass>,
    /// The N-card cases.
    pub multi: Vec<PlanMulti>,
}

/// One planned unit: cases of one class (or a piece of it), run in this order on one card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedUnit {
    /// The class (index into [`Workload::classes`]).
    pub class: usize,
    /// The runtime.
    pub runtime: usize,
    /// Case indices, longest first.
    pub cases: Vec<usize>,
    /// Their estimated total (ms).
    pub ms: u64,
}

/// A block of N-card cases (one runtime, one width) and its place in the plan: one multi-card
/// lane runs them in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMulti {
    /// The cases, longest first.
    pub cases: Vec<usize>,
    /// Their estimated total (ms).
    pub ms: u64,
    /// The cards it runs on (indices).
    pub cards: Vec<usize>,
    /// When it is predicted to start (ms).
    pub start_ms: u64,
}

/// The plan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunPlan {
    /// Per card, its units in order (a runtime's units together, the longest runtime first).
    pub cards: Vec<Vec<PlannedUnit>>,
    /// The blocks of N-card cases, in the order they start.
    pub multi: Vec<PlannedMulti>,
    /// Predicted wall time (ms).
    pub makespan_ms: u64,
    /// Predicted inits.
    pub inits: usize,
}

/// The lower bound of any plan's wall time: the work plus one init of every runtime used, over
/// the cards, and the longest case with its runtime's init.
pub fn lower_bound(w: &Workload) -> u64 {
    if w.cards == 0 {
        return 0;
    }
    let mut used = vec![false; w.init_ms.len()];
    let mut work = 0u64;
    let mut longest = 0u64;
    for c in &w.classes {
        for &(_, ms) in &c.cases {
            used[c.runtime] = true;
            work += ms;
            longest = longest.max(ms + w.init_ms[c.runtime]);
        }
    }
    for m in w.multi.iter().filter(|m| m.cards <= w.cards) {
        used[m.runtime] = true;
        work += m.ms * m.cards as u64;
        longest = longest.max(m.ms + w.init_ms[m.runtime]);
    }
    let inits: u64 = used
        .iter()
        .zip(&w.init_ms)
        .filter(|(u, _)| **u)
        .map(|(_, i)| *i)
        .sum();
    ((work + inits).div_ceil(w.cards as u64)).max(longest)
}
