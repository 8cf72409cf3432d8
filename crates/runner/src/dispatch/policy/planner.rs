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
//! - several targets and strategies are tried (with and without affinity, a few split sizes, and
//!   one runtime per card: [`place_grouped`]) and the plan with the smallest predicted makespan is kept;
//! - each strategy's plan is improved by moves of units between cards, and (runs of up to
//!   [`CONSOLIDATE_CASES`] cases) by taking a runtime off a card that holds several when its
//!   units fit on the cards holding it: once the loads are even, an init saved is the run's.
//!
//! N-card cases are placed first, in blocks: the cases of one runtime and one width run in one
//! multi-card lane, which builds its workers once (one init per card and block: the lane keeps a
//! pooled class's multi-card workers from case to case), a block longer than the strategy's split
//! size cut into pieces as a class is. Each block goes on the N cards that are free earliest (all
//! of them wait for the last of the N), or, as another strategy, on the cards of the block of its
//! width before it (the block's further cards pay an init again in the regular lanes after it,
//! so blocks kept on few cards save inits); the single-card work fills around them. A block's
//! first card pays no second init for the block's runtime: the block's lane goes on as that
//! card's regular lane with the worker it holds (the card's `warm` runtime, `load`), so the
//! plan gives that card the runtime's work where it can. The dispatcher reserves those cards as
//! the plan has them, the first one first (EASY backfilling, `dispatch/state/reserve`).
//!
//! This file owns the plan as a pure function of its facts; it never reads a clock, a history or
//! a queue. The state machine follows what it returns and adapts when reality differs (stealing).

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
            .map(|c| order_on_card(merge_classes(c.units), c.warm))
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
/// cards free earliest, or with `stack` on the cards of the last block of its width), then units of at most `cap` ms longest first, each on the card it finishes
/// earliest on, or with `affinity` on the earliest card already holding its runtime when that
/// card still ends within the run so far (or `target`).
fn place(w: &Workload, cap: u64, affinity: bool, target: u64, stack: bool) -> Placed {
    let mut placed = place_blocks(w, cap, stack);
    let cards = &mut placed.cards;
    for u in units_of(w, cap) {
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
    placed
}

/// The blocks of N-card cases placed (see [`place`]), the cards' loads what they leave.
fn place_blocks(w: &Workload, cap: u64, stack: bool) -> Placed {
    let runtimes = w.init_ms.len();
    let mut cards = vec![CardLoad::new(runtimes); w.cards];
    let mut multi: Vec<PlannedMulti> = Vec::new();
    let mut multi_inits = 0;
    for b in multi_blocks(w, cap) {
        let mut order: Vec<usize> = (0..w.cards).collect();
        order.sort_by_key(|&c| (cards[c].ms, c));
        let chosen: Vec<usize> = match multi.iter().rev().find(|m| m.cards.len() == b.cards) {
            // Stacked: after the last block of its width, on the same cards.
            Some(last) if stack => last.cards.clone(),
            _ => order[..b.cards].to_vec(),
        };
        let start = chosen.iter().map(|&c| cards[c].ms).max().unwrap_or(0);
        // A block is a lane of its own: it builds its workers once, one init on each card. Its
        // first card's lane goes on as that card's regular lane, its worker kept (the others'
        // regular lanes are new processes).
        for &c in &chosen {
            cards[c].ms = start + w.init_ms[b.runtime] + b.ms;
            cards[c].warm = None;
        }
        cards[chosen[0]].warm = Some(b.runtime);
        multi_inits += chosen.len();
        multi.push(PlannedMulti {
            cases: b.cases,
            ms: b.ms,
            cards: chosen,
            start_ms: start,
        });
    }
    Placed {
        cards,
        multi,
        multi_inits,
    }
}

/// The single-card units: every class in pieces of at most `cap` ms, longest first.
fn units_of(w: &Workload, cap: u64) -> Vec<PlannedUnit> {
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
    units
}

/// The grouped strategy's splits of the cards among the runtimes tried at most (runtimes to the
/// power of cards); above it the strategy is not tried.
pub const MAX_SPLITS: u64 = 20_000;

/// The grouped strategy: every card holds one runtime. Once the blocks of N-card cases are
/// placed, the cards are split into one group per runtime, the split whose groups, each sharing
/// its runtime's work evenly after its cards' blocks and one init each, end earliest (every split
/// is tried while there are at most [`MAX_SPLITS`]); then each runtime's units go, longest first,
/// to the card of its group that ends first. Every card then pays one init in its regular lane,
/// the fewest a run whose every card works can pay; the moves then even out what the split left
/// uneven. `None` when it does not apply (fewer cards than
/// runtimes with work, too many splits to try).
fn place_grouped(w: &Workload, cap: u64, stack: bool) -> Option<Placed> {
    let mut placed = place_blocks(w, cap, stack);
    let units = units_of(w, cap);
    let mut work = vec![0u64; w.init_ms.len()];
    for u in &units {
        work[u.runtime] += u.ms;
    }
    let used: Vec<usize> = (0..work.len()).filter(|&r| work[r] > 0).collect();
    let (n, k) = (w.cards, used.len());
    if k < 2 || k > n || (k as u64).checked_pow(u32::try_from(n).ok()?)? > MAX_SPLITS {
        return None;
    }
    let offsets: Vec<u64> = placed.cards.iter().map(|c| c.ms).collect();
    // Card c's group is split[c] (an index into `used`); counted like an odometer.
    let mut split = vec![0usize; n];
    let mut best: Option<(u64, Vec<usize>)> = None;
    'splits: loop {
        let mut sum = vec![0u64; k];
        let mut count = vec![0u64; k];
        for c in 0..n {
            sum[split[c]] += offsets[c] + placed.cards[c].init_of(used[split[c]], &w.init_ms);
            count[split[c]] += 1;
        }
        if count.iter().all(|&x| x > 0) {
            let end = (0..k)
                .map(|g| (work[used[g]] + sum[g]).div_ceil(count[g]))
                .max()
                .unwrap_or(0);
            if best.as_ref().map_or(true, |b| end < b.0) {
                best = Some((end, split.clone()));
            }
        }
        let mut i = 0;
        loop {
            if i == n {
                break 'splits;
            }
            split[i] += 1;
            if split[i] < k {
                break;
            }
            split[i] = 0;
            i += 1;
        }
    }
    let (_, split) = best?;
    let cards = &mut placed.cards;
    for u in units {
        let g = used.iter().position(|&r| r == u.runtime)?;
        let c = (0..n)
            .filter(|&c| split[c] == g)
            .min_by_key(|&c| (cards[c].cost(&u, &w.init_ms), c))?;
        cards[c].add(u, &w.init_ms);
    }
    Some(placed)
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

/// A card's units in the order it runs them: a runtime's units together, the `warm` runtime
/// first (the worker the card's lane holds from its block: run later, it would be built again),
/// then the runtime with the most work, each runtime's units longest first.
fn order_on_card(mut units: Vec<PlannedUnit>, warm: Option<usize>) -> Vec<PlannedUnit> {
    let mut total: Vec<(usize, u64)> = Vec::new();
    for u in &units {
        match total.iter_mut().find(|(r, _)| *r == u.runtime) {
            Some(t) => t.1 += u.ms,
            None => total.push((u.runtime, u.ms)),
        }
    }
    let rank = |r: usize| {
        let t = total.iter().find(|(x, _)| *x == r).map_or(0, |t| t.1);
        (warm != Some(r), std::cmp::Reverse(t), r)
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

/// Up to this many cases the plan is also [`consolidate`]d (at most [`CONSOLIDATE_TRIALS`] trial
/// moves of whole runtimes, each improved again by a few moves per card): every strategy's plan
/// when the workload has N-card cases (a block's further card pays two inits, so the inits
/// decide) and is small ([`CONSOLIDATE_EACH`]), else the best one; the inits it saves are worth its time on a run of a thousand
/// cases, not on one of twenty thousand.
pub const CONSOLIDATE_CASES: usize = 1_000;

/// Every strategy's plan is consolidated (with N-card cases) while cases times runtimes stay
/// within this: a trial's cost grows with both, and 60 strategies pay it.
pub const CONSOLIDATE_EACH: usize = 2_000;

/// The trial moves one consolidation tries at most.
pub const CONSOLIDATE_TRIALS: usize = 48;

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
    // N-card blocks spread over the cards free first, or stacked on the same cards (each card
    // of a block but its first pays an init in the block's lane and another in the regular lane
    // after it: fewer cards in blocks, fewer inits).
    let stacks: &[bool] = if w.multi.is_empty() {
        &[false]
    } else {
        &[false, true]
    };
    // Consolidated: every strategy's plan when N-card blocks make the inits count (a block's
    // further cards pay two each), else the best plan only.
    let consolidating = fine && cases <= CONSOLIDATE_CASES;
    let each = consolidating && !w.multi.is_empty() && cases * w.init_ms.len() <= CONSOLIDATE_EACH;
    let rounds = 4 * w.cards;
    let mut plans: Vec<Placed> = Vec::new();
    let mut consider = |mut p: Placed| {
        if fine {
            improve(&mut p.cards, &w.init_ms, 4 * cases.max(1));
        }
        if each {
            consolidate(&mut p.cards, &w.init_ms, rounds, CONSOLIDATE_TRIALS);
        }
        plans.push(p);
    };
    for &cap in &caps {
        for &stack in stacks {
            for affinity in [true, false] {
                for slack in [100u64, 103, 106] {
                    let target = lb.saturating_mul(slack) / 100;
                    consider(place(w, cap.max(1), affinity, target, stack));
                }
            }
            if let Some(p) = place_grouped(w, cap.max(1), stack) {
                consider(p);
            }
        }
    }
    let Some(mut best) = plans.into_iter().min_by_key(|p| (p.makespan(), p.inits())) else {
        return RunPlan::default();
    };
    if consolidating && !each {
        consolidate(&mut best.cards, &w.init_ms, rounds, CONSOLIDATE_TRIALS);
    }
    best.into_plan()
}

mod load;
mod model;
#[cfg(test)]
mod tests;

use load::{consolidate, improve, CardLoad};
pub use model::{lower_bound, PlanClass, PlanMulti, PlannedMulti, PlannedUnit, RunPlan, Workload};
