//! `--order smart`: the run's queue turned into a plan per card before the first hand-out, from
//! the duration history's estimates ([`Estimates`]) and [`crate::dispatch::policy::planner`].
//!
//! The N-card cases are planned too, in blocks (one runtime, one width) that each reserve the
//! cards the plan has them on (`reserve`); the queue of N-card cases follows the plan's blocks.
//!
//! This file only gathers the planner's facts from the queue and gives its answer to
//! [`Work::follow_plan`]; the hand-out then follows it (`handout`), stealing when a card runs
//! ahead. It never reads the history file (the app does) and never hands work out.

use rustc_hash::FxHashMap;

use super::work::Work;
use crate::case::Suite;
use crate::dispatch::policy::planner::{plan_run, PlanClass, PlanMulti, RunPlan, Workload};

/// What a planned run knows of its cases: each case's estimated duration (ms, in the run's
/// order, as [`Work`] lists them) and each runtime's init (ms, by name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Estimates {
    /// Per case, in the run's order.
    pub case_ms: Vec<u64>,
    /// Per runtime name; a runtime without one is estimated at the median of the others.
    pub init_ms: FxHashMap<String, u64>,
}

/// The planner's facts for `work`'s queue on `cards` cards: one class per queued unit.
pub fn workload<'s>(work: &Work, suite: &'s Suite, est: &Estimates, cards: usize) -> Workload {
    let mut names: Vec<&str> = Vec::new();
    let runtime_of = |i: usize, names: &mut Vec<&'s str>| -> usize {
        runtime_index(names, suite.classes[work.case(i).class].runtime.name.as_str())
    };
    let mut classes = Vec::new();
    for unit in work.queued_units() {
        let Some(&first) = unit.cases.first() else {
            continue;
        };
        let runtime = runtime_of(first, &mut names);
        classes.push(PlanClass {
            runtime,
            // A case estimated at 0 (no history anywhere) still counts as work.
            cases: unit
                .cases
                .iter()
                .map(|&i| (i, est.case_ms.get(i).copied().unwrap_or(0).max(1)))
                .collect(),
        });
    }
    let multi = work
        .multi_queued()
        .into_iter()
        .map(|i| PlanMulti {
            case: i,
            runtime: runtime_of(i, &mut names),
            cards: work.case(i).devices as usize,
            ms: est.case_ms.get(i).copied().unwrap_or(0).max(1),
        })
        .collect();
    let mut known: Vec<u64> = est.init_ms.values().copied().collect();
    known.sort_unstable();
    let fallback = known.get(known.len().saturating_sub(1) / 2).copied().unwrap_or(0);
    let init_ms = names
        .iter()
        .map(|n| est.init_ms.get(*n).copied().unwrap_or(fallback))
        .collect();
    Workload {
        cards,
        init_ms,
        classes,
        multi,
    }
}

/// The index of runtime `name` among `names` (added when new).
fn runtime_index<'s>(names: &mut Vec<&'s str>, name: &'s str) -> usize {
    match names.iter().position(|n| *n == name) {
        Some(r) => r,
        None => {
            names.push(name);
            names.len() - 1
        }
    }
}

impl Work {
    /// Plans the queue for `cards` cards and follows the plan; returns it (for the log).
    pub fn plan_hand_out(&mut self, suite: &Suite, est: &Estimates, cards: usize) -> RunPlan {
        let w = workload(self, suite, est, cards);
        let plan = plan_run(&w);
        let per_card = plan
            .cards
            .iter()
            .map(|units| units.iter().map(|u| (u.cases.clone(), u.ms)).collect())
            .collect();
        self.follow_plan(per_card);
        self.set_estimates(est.case_ms.clone());
        self.set_init_history(&est.init_ms);
        // The N-card cases the run's cards cannot hold are not in the plan (they are skipped
        // before the run): they keep their place after the blocks.
        let mut blocks: Vec<(Vec<usize>, Option<Vec<usize>>)> = plan
            .multi
            .iter()
            .map(|m| (m.cases.clone(), Some(m.cards.clone())))
            .collect();
        let planned: Vec<usize> = blocks.iter().flat_map(|b| b.0.iter().copied()).collect();
        let rest: Vec<usize> = self
            .multi_queued()
            .into_iter()
            .filter(|i| !planned.contains(i))
            .collect();
        blocks.push((rest, None));
        self.follow_multi_plan(blocks);
        plan
    }
}
