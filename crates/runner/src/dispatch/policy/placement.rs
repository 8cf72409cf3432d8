//! Where a retried case runs (issue 23 item 2): on a card whose lane will hold its runtime when
//! the retry would start (no init), else on a card that holds no worker by then (its own card
//! once its reset retired the worker, or a lane that has built none), instead of on whichever
//! lane asks first, where a switch of runtime costs an init and usually a second one to switch
//! back. It never waits for such a card longer than an init would cost: past that, the first
//! lane with room takes it, as before.
//!
//! A card's cost for the retry is counted in inits: 0 when its lane ends what it holds in a
//! pooled worker of the retry's runtime (and the retry is pooled), 1 when it holds no worker then
//! (the retry builds one; a standalone retry always builds its own, so this is its best), 2 when
//! it holds another runtime's (the retry's init, then the init back for that card's own work).
//!
//! This file owns that rule as a pure function of the lanes' facts. It never pops the queue
//! (`state::work`), never reads a clock (the wait comes with the facts) and never estimates an
//! init (the state gives the history's, else this run's, else [`DEFAULT_INIT_MS`]).

/// The init estimate (ms) of a runtime that neither the duration history nor this run has timed:
/// the bound on a retry's wait for a better card. Real cards' inits take seconds; a run on
/// simulated cards has timed one long before any case fails.
pub const DEFAULT_INIT_MS: u64 = 1000;

/// One lane that could run the retry: a live regular lane on a healthy card (`pool`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// Its card (an index of the run's cards).
    pub card: usize,
    /// The runtime of the pooled worker its card will hold once it has run what it holds (`None`:
    /// none, e.g. after a reset, a standalone case, or before its first case).
    pub holds: Option<u32>,
    /// Whether it takes another unit now.
    pub room: bool,
    /// In how long (ms) it is estimated to have room (`None`: not known: no estimates).
    pub free_in_ms: Option<u64>,
}

/// What the rule needs to know about one queued retry.
#[derive(Debug, Clone, Copy)]
pub struct RetryFacts<'a> {
    /// The retried case's runtime.
    pub runtime: u32,
    /// Whether it runs in the pooled worker (a standalone case builds its own in any case).
    pub pooled: bool,
    /// The card its failed attempt ran on.
    pub own_card: usize,
    /// How long (ms) it has waited in the queue.
    pub waited_ms: u64,
    /// What an init of its runtime is estimated to cost (ms): the bound on its wait.
    pub init_ms: u64,
    /// The lanes that could run it.
    pub lanes: &'a [Candidate],
}

/// Who takes the retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// The first lane with room, as any other unit.
    Any,
    /// Only a lane on one of these cards; the others take the work queued after it. Past
    /// `wait_ms` from now it is [`Placement::Any`] again.
    Only {
        /// The cards (indices) that may take it.
        cards: Vec<usize>,
        /// How much longer (ms) it waits for them at most (0: they have room now).
        wait_ms: u64,
    },
}

/// The inits the retry costs on lane `c` (see the module docs).
pub fn inits_on(c: &Candidate, f: &RetryFacts<'_>) -> u32 {
    match c.holds {
        Some(r) if f.pooled && r == f.runtime => 0,
        None => 1,
        Some(_) => 2,
    }
}

/// The placement of a retry (see the module docs): the cheapest cards with room now (its own card
/// first among equals); else, while its wait is shorter than an init, the cheaper-than-a-switch
/// cards estimated to have room before the wait is over; else the first lane with room.
pub fn place_retry(f: &RetryFacts<'_>) -> Placement {
    let good: Vec<(&Candidate, u32)> = f
        .lanes
        .iter()
        .map(|c| (c, inits_on(c, f)))
        .filter(|(_, inits)| *inits < 2)
        .collect();
    let cheapest_now = good.iter().filter(|(c, _)| c.room).map(|(_, n)| *n).min();
    if let Some(n) = cheapest_now {
        let now: Vec<usize> = good
            .iter()
            .filter(|(c, inits)| c.room && *inits == n)
            .map(|(c, _)| c.card)
            .collect();
        let cards = if now.contains(&f.own_card) {
            vec![f.own_card]
        } else {
            now
        };
        return Placement::Only { cards, wait_ms: 0 };
    }
    let left = f.init_ms.saturating_sub(f.waited_ms);
    let soon: Vec<usize> = good
        .iter()
        .filter(|(c, _)| c.free_in_ms.map_or(true, |t| t < left))
        .map(|(c, _)| c.card)
        .collect();
    if left == 0 || soon.is_empty() {
        Placement::Any
    } else {
        Placement::Only {
            cards: soon,
            wait_ms: left,
        }
    }
}

/// Whether a lane on `card` takes the retry now under `p`.
pub fn takes(p: &Placement, card: usize) -> bool {
    match p {
        Placement::Any => true,
        Placement::Only { cards, .. } => cards.contains(&card),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lane on `card` holding `holds` after what it holds, with room now or in `free_in` ms.
    fn lane(card: usize, holds: Option<u32>, free_in: Option<u64>) -> Candidate {
        Candidate {
            card,
            holds,
            room: free_in == Some(0),
            free_in_ms: free_in,
        }
    }

    const R: Option<u32> = Some(7);
    const OTHER: Option<u32> = Some(3);
    const NONE: Option<u32> = None;

    #[test]
    fn placement_table() {
        type Row = (&'static str, bool, u64, Vec<Candidate>, Placement);
        let only = |cards: &[usize], wait_ms| Placement::Only {
            cards: cards.to_vec(),
            wait_ms,
        };
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            // what,                                           pooled, waited, lanes (own card: 0), placement
            ("a lane holding its runtime with room takes it",  true,  0,   vec![lane(0, OTHER, Some(0)), lane(1, R, Some(0))],       only(&[1], 0)),
            ("several do: any of them",                        true,  0,   vec![lane(0, OTHER, Some(0)), lane(1, R, Some(0)), lane(2, R, Some(0))], only(&[1, 2], 0)),
            ("its own card once reset, holding nothing",       true,  0,   vec![lane(0, NONE, Some(0)), lane(1, OTHER, Some(0))],     only(&[0], 0)),
            ("its runtime beats its own card's reset",         true,  0,   vec![lane(0, NONE, Some(0)), lane(1, R, Some(0))],         only(&[1], 0)),
            ("an empty lane elsewhere beats a switch",         true,  0,   vec![lane(0, OTHER, Some(0)), lane(1, NONE, Some(0))],     only(&[1], 0)),
            ("its own card first among equals",                true,  0,   vec![lane(0, R, Some(0)), lane(1, R, Some(0))],            only(&[0], 0)),
            ("none cheaper than a switch: the first free card", true, 0,   vec![lane(0, OTHER, Some(0)), lane(1, OTHER, Some(0))],    Placement::Any),
            ("no lane at all",                                 true,  0,   vec![],                                                    Placement::Any),
            ("a busy lane of its runtime: wait for it",        true,  100, vec![lane(0, OTHER, Some(0)), lane(1, R, None)],           only(&[1], 200)),
            ("estimated free in time: wait",                   true,  100, vec![lane(0, OTHER, Some(0)), lane(1, R, Some(150))],      only(&[1], 200)),
            ("estimated free too late: the first free card",   true,  100, vec![lane(0, OTHER, Some(0)), lane(1, R, Some(250))],      Placement::Any),
            ("waited an init already: the first free card",    true,  300, vec![lane(0, OTHER, Some(0)), lane(1, R, None)],           Placement::Any),
            ("a standalone retry: a lane holding nothing",     false, 0,   vec![lane(0, OTHER, Some(0)), lane(1, NONE, Some(0))],     only(&[1], 0)),
            ("a standalone retry: its runtime is no better",   false, 0,   vec![lane(0, R, Some(0)), lane(1, OTHER, Some(0))],        Placement::Any),
        ];
        for (what, pooled, waited_ms, lanes, want) in rows {
            let f = RetryFacts {
                runtime: 7,
                pooled,
                own_card: 0,
                waited_ms,
                init_ms: 300,
                lanes: &lanes,
            };
            assert_eq!(place_retry(&f), want, "{what}");
        }
    }

    #[test]
    fn who_takes_it() {
        assert!(takes(&Placement::Any, 3));
        let p = Placement::Only {
            cards: vec![1],
            wait_ms: 5,
        };
        assert!(takes(&p, 1));
        assert!(!takes(&p, 0));
    }
}
