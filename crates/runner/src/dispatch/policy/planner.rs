//! The run's planned hand-out (`--order smart`, issue 23 item 2): which card runs which classes,
//! in which order, from each case's estimated duration and each runtime's init cost.
//!
//! The model: a card pays one init per runtime it holds (the lane keeps one worker per runtime
//! while it runs that runtime's classes back to back), and every case runs on one card; the run
//! ends when the last card does. The plan is built by list scheduling, longest work first (LPT),
//! with three refinements:
//! - runtime affinity: a unit goes to a card that already holds its runtime when that card's
//!   finish stays within the run's target (it saves an init without lengthening the run);
//! - splitting: a class longer than the target is cut into pieces (longest cases first, each
//!   piece under the target), so one class is never the run's tail;
//! - several targets and strategies are tried (with and without affinity, a few split sizes) and
//!   the plan with the smallest predicted makespan is kept.
//!
//! N-card cases are placed first, in blocks: the cases of one runtime and one width run in one
//! multi-card lane, which builds its workers once (one init per card and block), a block longer
//! than the strategy's split size cut into pieces as a class is. Each block goes on the N cards
//! that are free earliest (all of them wait for the last of the N), so the single-card work fills
//! around them; the dispatcher reserves those cards as the plan has them (EASY backfilling,
//! `dispatch/state/reserve`).
//!
//! This file owns the plan as a pure function of its facts; it never reads a clock, a history or
//! a queue. The state machine follows what it returns and adapts when reality differs (stealing).

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

/// A card while planning: its predicted finish, its units, and how many of them each runtime has
/// (a runtime with any pays one init).
#[derive(Debug, Clone, Default)]
struct CardLoad {
    ms: u64,
    per_runtime: Vec<usize>,
    units: Vec<PlannedUnit>,
}

impl CardLoad {
    fn new(runtimes: usize) -> Self {
        CardLoad {
            ms: 0,
            per_runtime: vec![0; runtimes],
            units: Vec::new(),
        }
    }

    fn holds(&self, runtime: usize) -> bool {
        self.per_runtime[runtime] > 0
    }

    /// Its finish with `u` added.
    fn cost(&self, u: &PlannedUnit, init_ms: &[u64]) -> u64 {
        let init = if self.holds(u.runtime) {
            0
        } else {
            init_ms[u.runtime]
        };
        self.ms + init + u.ms
    }

    /// Its finish with its unit `i` taken away.
    fn without(&self, i: usize, init_ms: &[u64]) -> u64 {
        let u = &self.units[i];
        let init = if self.per_runtime[u.runtime] == 1 {
            init_ms[u.runtime]
        } else {
            0
        };
        self.ms - u.ms - init
    }

    fn add(&mut self, u: PlannedUnit, init_ms: &[u64]) {
        self.ms = self.cost(&u, init_ms);
        self.per_runtime[u.runtime] += 1;
        self.units.push(u);
    }

    fn remove(&mut self, i: usize, init_ms: &[u64]) -> PlannedUnit {
        self.ms = self.without(i, init_ms);
        let u = self.units.swap_remove(i);
        self.per_runtime[u.runtime] -= 1;
        u
    }

    /// The init `add` pays for `new` once `gone` (one of its units) is taken away.
    fn init_after_swap(&self, gone: &PlannedUnit, new: &PlannedUnit, init_ms: &[u64]) -> u64 {
        let left = self.per_runtime[new.runtime] - usize::from(gone.runtime == new.runtime);
        if left > 0 {
            0
        } else {
            init_ms[new.runtime]
        }
    }

    fn inits(&self) -> usize {
        self.per_runtime.iter().filter(|&&n| n > 0).count()
    }
}

/// Moves that shorten the run: while the last card to finish can give one of its units to
/// another card (or swap one for a shorter one) so both end before it did, do the best such
/// move. Bounded by `rounds`.
fn improve(cards: &mut [CardLoad], init_ms: &[u64], rounds: usize) {
    for _ in 0..rounds {
        let Some(top) = (0..cards.len()).max_by_key(|&c| (cards[c].ms, std::cmp::Reverse(c))) else {
            return;
        };
        let end = cards[top].ms;
        // (new end of the pair, unit on top, other card, unit on the other card for a swap)
        let mut best: Option<(u64, usize, usize, Option<usize>)> = None;
        for i in 0..cards[top].units.len() {
            let u = &cards[top].units[i];
            let top_without = cards[top].without(i, init_ms);
            for c in (0..cards.len()).filter(|&c| c != top) {
                let moved = cards[c].cost(u, init_ms).max(top_without);
                if moved < end && best.map_or(true, |b| moved < b.0) {
                    best = Some((moved, i, c, None));
                }
                for j in 0..cards[c].units.len() {
                    let v = &cards[c].units[j];
                    if v.ms >= u.ms {
                        continue;
                    }
                    let c_end = cards[c].without(j, init_ms) + cards[c].init_after_swap(v, u, init_ms) + u.ms;
                    let t_end = top_without + cards[top].init_after_swap(u, v, init_ms) + v.ms;
                    let pair = c_end.max(t_end);
                    if pair < end && best.map_or(true, |b| pair < b.0) {
                        best = Some((pair, i, c, Some(j)));
                    }
                }
            }
        }
        let Some((_, i, c, swap)) = best else { return };
        let u = cards[top].remove(i, init_ms);
        if let Some(j) = swap {
            let v = cards[c].remove(j, init_ms);
            cards[top].add(v, init_ms);
        }
        cards[c].add(u, init_ms);
    }
}

/// Cuts a class into pieces of at most `cap` ms each (longest cases first into the lightest
/// piece); a class within `cap` stays whole. Each piece's cases keep longest first.
fn pieces(class: usize, c: &PlanClass, cap: u64) -> Vec<PlannedUnit> {
    let total: u64 = c.cases.iter().map(|&(_, ms)| ms).sum();
    let mut cases = c.cases.clone();
    cases.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let k = if cap == 0 {
        1
    } else {
        (total.div_ceil(cap) as usize).clamp(1, cases.len().max(1))
    };
    let mut out: Vec<PlannedUnit> = (0..k)
        .map(|_| PlannedUnit {
            class,
            runtime: c.runtime,
            cases: Vec::new(),
            ms: 0,
        })
        .collect();
    for (i, ms) in cases {
        let p = out.iter_mut().min_by_key(|p| p.ms).expect("k is at least one");
        p.cases.push(i);
        p.ms += ms;
    }
    out.retain(|p| !p.cases.is_empty());
    out
}

/// A block of N-card cases while planning.
struct Block {
    runtime: usize,
    cards: usize,
    cases: Vec<usize>,
    ms: u64,
}

/// The N-card cases the run's cards can hold, in blocks of one runtime and one width (the widest,
/// then the longest first), each block cut into pieces of at most `cap` ms (longest cases first
/// into the lightest piece).
fn multi_blocks(w: &Workload, cap: u64) -> Vec<Block> {
    // (runtime, width) -> its (case, estimated ms); the blocks are sorted below, so the map's
    // order does not reach the plan.
    let mut groups: std::collections::BTreeMap<(usize, usize), Vec<(usize, u64)>> =
        std::collections::BTreeMap::new();
    for m in w.multi.iter().filter(|m| m.cards <= w.cards) {
        groups
            .entry((m.runtime, m.cards))
            .or_default()
            .push((m.case, m.ms));
    }
    let mut blocks = Vec::new();
    for ((runtime, n), mut cases) in groups {
        cases.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let total: u64 = cases.iter().map(|c| c.1).sum();
        let k = (total.div_ceil(cap.max(1)) as usize).clamp(1, cases.len());
        let mut out: Vec<Block> = (0..k)
            .map(|_| Block {
                runtime,
                cards: n,
                cases: Vec::new(),
                ms: 0,
            })
            .collect();
        for (i, ms) in cases {
            let b = out.iter_mut().min_by_key(|b| b.ms).expect("k is at least one");
            b.cases.push(i);
            b.ms += ms;
        }
        blocks.extend(out.into_iter().filter(|b| !b.cases.is_empty()));
    }
    blocks.sort_by(|a, b| {
        b.cards
            .cmp(&a.cards)
            .then(b.ms.cmp(&a.ms))
            .then(a.cases.cmp(&b.cases))
    });
    blocks
}

/// One strategy's placement.
struct Placed {
    cards: Vec<CardLoad>,
    multi: Vec<PlannedMulti>,
    multi_inits: usize,
}

impl Placed {
    fn makespan(&self) -> u64 {
        self.cards.iter().map(|c| c.ms).max().unwrap_or(0)
    }

    fn inits(&self) -> usize {
        self.cards.iter().map(CardLoad::inits).sum::<usize>() + self.multi_inits
    }

    fn into_plan(self) -> RunPlan {
        let makespan_ms = self.makespan();
        let inits = self.inits();
        let cards = self
            .cards
            .into_iter()
            .map(|c| order_on_card(merge_classes(c.units)))
            .collect();
        RunPlan {
            cards,
            multi: self.multi,
            makespan_ms,
            inits,
        }
    }
}

/// One strategy: the blocks of N-card cases first (the widest, then the longest, each on the
/// cards free earliest), then units of at most `cap` ms longest first, each on the card it finishes
/// earliest on, or with `affinity` on the earliest card already holding its runtime when that
/// card still ends within the run so far (or `target`).
fn place(w: &Workload, cap: u64, affinity: bool, target: u64) -> Placed {
    let runtimes = w.init_ms.len();
    let mut cards = vec![CardLoad::new(runtimes); w.cards];
    let mut multi = Vec::new();
    let mut multi_inits = 0;
    for b in multi_blocks(w, cap) {
        let mut order: Vec<usize> = (0..w.cards).collect();
        order.sort_by_key(|&c| (cards[c].ms, c));
        let chosen: Vec<usize> = order[..b.cards].to_vec();
        let start = chosen.iter().map(|&c| cards[c].ms).max().unwrap_or(0);
        // A block is a lane of its own: it builds its workers once, one init on each card.
        for &c in &chosen {
            cards[c].ms = start + w.init_ms[b.runtime] + b.ms;
        }
        multi_inits += chosen.len();
        multi.push(PlannedMulti {
            cases: b.cases,
            ms: b.ms,
            cards: chosen,
            start_ms: start,
        });
    }
    let mut units: Vec<PlannedUnit> = w
        .classes
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.cases.is_empty())
        .flat_map(|(i, c)| pieces(i, c, cap))
        .collect();
    units.sort_by(|a, b| {
        b.ms.cmp(&a.ms)
            .then(a.class.cmp(&b.class))
            .then(a.cases.cmp(&b.cases))
    });
    for u in units {
        let best = (0..w.cards)
            .min_by_key(|&c| (cards[c].cost(&u, &w.init_ms), c))
            .expect("at least one card");
        let mut pick = best;
        if affinity {
            let run_end = cards.iter().map(|c| c.ms).max().unwrap_or(0).max(target);
            if let Some(holder) = (0..w.cards)
                .filter(|&c| cards[c].holds(u.runtime))
                .min_by_key(|&c| (cards[c].cost(&u, &w.init_ms), c))
            {
                if cards[holder].cost(&u, &w.init_ms) <= run_end {
                    pick = holder;
                }
            }
        }
        cards[pick].add(u, &w.init_ms);
    }
    Placed {
        cards,
        multi,
        multi_inits,
    }
}

/// A card's units of one class joined into one (its cases longest first, as the estimates had
/// them), so the lane gets a class in one assignment.
fn merge_classes(units: Vec<PlannedUnit>) -> Vec<PlannedUnit> {
    let mut out: Vec<PlannedUnit> = Vec::new();
    for u in units {
        match out.iter_mut().find(|o| o.class == u.class) {
            Some(o) => {
                o.cases.extend(u.cases);
                o.ms += u.ms;
            }
            None => out.push(u),
        }
    }
    out
}

/// A card's units in the order it runs them: a runtime's units together, the runtime with the
/// most work first, each runtime's units longest first.
fn order_on_card(mut units: Vec<PlannedUnit>) -> Vec<PlannedUnit> {
    let mut total: Vec<(usize, u64)> = Vec::new();
    for u in &units {
        match total.iter_mut().find(|(r, _)| *r == u.runtime) {
            Some(t) => t.1 += u.ms,
            None => total.push((u.runtime, u.ms)),
        }
    }
    let rank = |r: usize| {
        let t = total.iter().find(|(x, _)| *x == r).map_or(0, |t| t.1);
        (std::cmp::Reverse(t), r)
    };
    units.sort_by(|a, b| {
        rank(a.runtime)
            .cmp(&rank(b.runtime))
            .then(b.ms.cmp(&a.ms))
            .then(a.class.cmp(&b.class))
    });
    units
}

/// Above this many cases the planner places whole classes and their pieces only (no case-level
/// strategy, no improving moves): a plan of 100,000 cases stays a few milliseconds.
pub const FINE_CASES: usize = 20_000;

/// The plan for a workload (see the module docs): the best of a few strategies by predicted
/// makespan (then fewer inits), improved by moves between cards.
pub fn plan_run(w: &Workload) -> RunPlan {
    if w.cards == 0 {
        return RunPlan::default();
    }
    let lb = lower_bound(w);
    let cases: usize = w.classes.iter().map(|c| c.cases.len()).sum();
    let fine = cases <= FINE_CASES;
    // Split sizes: whole classes, pieces of the lower bound and finer, and (small runs) cases.
    let mut caps = vec![u64::MAX, lb, lb / 2, lb / 4];
    if fine {
        caps.push(1);
    }
    let mut best: Option<Placed> = None;
    for cap in caps {
        for affinity in [true, false] {
            for slack in [100u64, 103, 106] {
                let target = lb.saturating_mul(slack) / 100;
                let mut p = place(w, cap.max(1), affinity, target);
                if fine {
                    improve(&mut p.cards, &w.init_ms, 4 * cases.max(1));
                }
                let better = best
                    .as_ref()
                    .map_or(true, |b| (p.makespan(), p.inits()) < (b.makespan(), b.inits()));
                if better {
                    best = Some(p);
                }
            }
        }
    }
    best.map_or_else(RunPlan::default, Placed::into_plan)
}

#[cfg(test)]
mod tests;
