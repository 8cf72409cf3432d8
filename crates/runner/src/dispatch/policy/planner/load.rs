//! A card while planning ([`CardLoad`]: its predicted finish, its units, the runtimes it holds)
//! and the improving moves on placed cards: units moved or swapped off the card that ends last
//! ([`improve`]), and runtimes taken off cards that hold several ([`consolidate`]).
//!
//! This file owns the cards' arithmetic and those moves; the strategies that place the units are
//! the parent's.

use super::model::PlannedUnit;

/// A card while planning: its predicted finish, its units, and how many of them each runtime has
/// (a runtime with any pays one init, but the `warm` one: the card's worker of the N-card block
/// it was the first card of, which its lane keeps for that runtime's units after the block).
#[derive(Debug, Clone, Default)]
pub(super) struct CardLoad {
    pub(super) ms: u64,
    per_runtime: Vec<usize>,
    pub(super) units: Vec<PlannedUnit>,
    pub(super) warm: Option<usize>,
}

impl CardLoad {
    pub(super) fn new(runtimes: usize) -> Self {
        CardLoad {
            ms: 0,
            per_runtime: vec![0; runtimes],
            units: Vec::new(),
            warm: None,
        }
    }

    /// What the card's first unit of `runtime` pays to build its worker.
    pub(super) fn init_of(&self, runtime: usize, init_ms: &[u64]) -> u64 {
        if self.warm == Some(runtime) {
            0
        } else {
            init_ms[runtime]
        }
    }

    pub(super) fn holds(&self, runtime: usize) -> bool {
        self.per_runtime[runtime] > 0
    }

    /// Its finish with `u` added.
    pub(super) fn cost(&self, u: &PlannedUnit, init_ms: &[u64]) -> u64 {
        let init = if self.holds(u.runtime) {
            0
        } else {
            self.init_of(u.runtime, init_ms)
        };
        self.ms + init + u.ms
    }

    /// Its finish with its unit `i` taken away.
    pub(super) fn without(&self, i: usize, init_ms: &[u64]) -> u64 {
        let u = &self.units[i];
        let init = if self.per_runtime[u.runtime] == 1 {
            self.init_of(u.runtime, init_ms)
        } else {
            0
        };
        self.ms - u.ms - init
    }

    pub(super) fn add(&mut self, u: PlannedUnit, init_ms: &[u64]) {
        self.ms = self.cost(&u, init_ms);
        self.per_runtime[u.runtime] += 1;
        self.units.push(u);
    }

    pub(super) fn remove(&mut self, i: usize, init_ms: &[u64]) -> PlannedUnit {
        self.ms = self.without(i, init_ms);
        let u = self.units.swap_remove(i);
        self.per_runtime[u.runtime] -= 1;
        u
    }

    /// The init `add` pays for `new` once `gone` (one of its units) is taken away.
    pub(super) fn init_after_swap(&self, gone: &PlannedUnit, new: &PlannedUnit, init_ms: &[u64]) -> u64 {
        let left = self.per_runtime[new.runtime] - usize::from(gone.runtime == new.runtime);
        if left > 0 {
            0
        } else {
            self.init_of(new.runtime, init_ms)
        }
    }

    /// The inits its units pay (the warm runtime's is the block's).
    pub(super) fn inits(&self) -> usize {
        self.per_runtime
            .iter()
            .enumerate()
            .filter(|&(r, &n)| n > 0 && self.warm != Some(r))
            .count()
    }

    /// The runtimes its units hold.
    pub(super) fn held(&self) -> usize {
        self.per_runtime.iter().filter(|&&n| n > 0).count()
    }
}

/// Moves that shorten the run: while the last card to finish can give one of its units to
/// another card (or swap one for a shorter one) so both end before it did, do the best such
/// move. Bounded by `rounds`.
pub(super) fn improve(cards: &mut [CardLoad], init_ms: &[u64], rounds: usize) {
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

/// The latest finish of `cards` and their inits.
fn score(cards: &[CardLoad]) -> (u64, usize) {
    (
        cards.iter().map(|c| c.ms).max().unwrap_or(0),
        cards.iter().map(CardLoad::inits).sum(),
    )
}

/// Fewer runtimes per card: while taking one runtime's units off a card that holds several (onto
/// the other cards holding that runtime, longest first each to the one that ends first, then
/// [`improve`] for at most `rounds` moves) shortens the run or saves an init without lengthening
/// it, do the best such move; `trials` moves tried at most in all. Once the cards' loads are
/// even, the work is what it is and every init saved is the run's.
pub(super) fn consolidate(cards: &mut Vec<CardLoad>, init_ms: &[u64], rounds: usize, trials: usize) {
    let mut left = trials;
    loop {
        let now = score(cards);
        let mut best: Option<((u64, usize), Vec<CardLoad>)> = None;
        for c in (0..cards.len()).filter(|&c| cards[c].held() > 1) {
            for r in (0..init_ms.len()).filter(|&r| cards[c].holds(r)) {
                let holders: Vec<usize> = (0..cards.len())
                    .filter(|&h| h != c && cards[h].holds(r))
                    .collect();
                if holders.is_empty() || left == 0 {
                    continue;
                }
                left -= 1;
                let mut trial = cards.clone();
                let mut moved = Vec::new();
                while let Some(i) = trial[c].units.iter().position(|u| u.runtime == r) {
                    moved.push(trial[c].remove(i, init_ms));
                }
                moved.sort_by(|a, b| b.ms.cmp(&a.ms).then(a.class.cmp(&b.class)));
                for u in moved {
                    let h = *holders
                        .iter()
                        .min_by_key(|&&h| (trial[h].ms, h))
                        .expect("a holder");
                    trial[h].add(u, init_ms);
                }
                improve(&mut trial, init_ms, rounds);
                let got = score(&trial);
                if got < now && best.as_ref().map_or(true, |b| got < b.0) {
                    best = Some((got, trial));
                }
            }
        }
        match best {
            Some((_, better)) => *cards = better,
            None => return,
        }
    }
}
