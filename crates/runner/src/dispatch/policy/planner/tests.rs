//! The planner's table tests on crafted workloads, against the lower bound.

use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A workload of `classes` classes, runtimes round-robin, each class's cases' estimates.
fn workload(cards: usize, init_ms: Vec<u64>, classes: Vec<Vec<u64>>) -> Workload {
    let runtimes = init_ms.len();
    let mut next = 0;
    let classes = classes
        .into_iter()
        .enumerate()
        .map(|(i, ms)| PlanClass {
            runtime: i % runtimes,
            cases: ms
                .into_iter()
                .map(|m| {
                    next += 1;
                    (next - 1, m)
                })
                .collect(),
        })
        .collect();
    Workload {
        cards,
        init_ms,
        classes,
        multi: Vec::new(),
    }
}

/// The issue's synthetic workload: log-normal durations (median `median_ms`).
fn lognormal(seed: u64, cards: usize, runtimes: usize, classes: usize, cases: usize) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let per = cases / classes;
    let ms = (0..classes)
        .map(|_| {
            (0..per)
                .map(|_| {
                    // Box-Muller: a normal draw, sigma 1, around ln(40).
                    let u1: f64 = rng.gen_range(1e-9..1.0);
                    let u2: f64 = rng.gen_range(0.0..1.0);
                    let z: f64 = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                    (40.0 * z.exp()).round() as u64
                })
                .collect()
        })
        .collect();
    workload(cards, vec![300; runtimes], ms)
}

/// Every case is in the plan exactly once.
fn check_complete(w: &Workload, p: &RunPlan) {
    let mut planned: Vec<usize> = p
        .cards
        .iter()
        .flatten()
        .flat_map(|u| u.cases.iter().copied())
        .chain(p.multi.iter().flat_map(|m| m.cases.iter().copied()))
        .collect();
    planned.sort_unstable();
    let mut want: Vec<usize> = w
        .classes
        .iter()
        .flat_map(|c| c.cases.iter().map(|&(i, _)| i))
        .chain(w.multi.iter().filter(|m| m.cards <= w.cards).map(|m| m.case))
        .collect();
    want.sort_unstable();
    assert_eq!(planned, want, "every case once");
    assert_eq!(p.cards.len(), w.cards);
    if w.multi.is_empty() {
        // The predicted makespan is what the cards' units add up to (an init per runtime held).
        let loads: Vec<u64> = p
            .cards
            .iter()
            .map(|units| {
                let mut runtimes: Vec<usize> = units.iter().map(|u| u.runtime).collect();
                runtimes.sort_unstable();
                runtimes.dedup();
                let inits: u64 = runtimes.iter().map(|&r| w.init_ms[r]).sum();
                units.iter().map(|u| u.ms).sum::<u64>() + inits
            })
            .collect();
        assert_eq!(
            loads.iter().copied().max().unwrap_or(0),
            p.makespan_ms,
            "the makespan adds up"
        );
        let inits: usize = p
            .cards
            .iter()
            .map(|units| {
                let mut r: Vec<usize> = units.iter().map(|u| u.runtime).collect();
                r.sort_unstable();
                r.dedup();
                r.len()
            })
            .sum();
        assert_eq!(inits, p.inits, "the inits add up");
    }
}

#[test]
fn planner_table() {
    type Row = (&'static str, Workload, f64, Option<usize>);
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        // what, workload, at most this ratio to the lower bound, inits expected
        ("one giant case: it is the run, the rest fits beside it",
         workload(4, vec![300], vec![vec![10_000], vec![50; 20], vec![40; 20]]), 1.0, None),
        ("all-equal cases: an even split, a runtime's two classes on one card",
         workload(4, vec![300; 4], vec![vec![100; 10]; 8]), 1.0, Some(4)),
        ("one runtime per class, as many as cards: a class a card, one init each",
         workload(4, vec![300, 300, 300, 300], vec![vec![500; 4]; 4]), 1.0, Some(4)),
        ("one class alone would be the tail: it is split",
         workload(4, vec![100], vec![vec![100; 40], vec![10; 4]]), 1.08, Some(4)),
        ("many runtimes, costly inits: affinity keeps inits few",
         workload(4, vec![1000; 8], (0..16).map(|i| vec![100 + i * 10; 10]).collect()), 1.08, Some(8)),
        ("more cards than work: nothing waits",
         workload(8, vec![200], vec![vec![30; 2]]), 1.0, Some(2)),
    ];
    for (what, w, ratio, inits) in rows {
        let p = plan_run(&w);
        check_complete(&w, &p);
        let lb = lower_bound(&w);
        let got = p.makespan_ms as f64 / lb as f64;
        assert!(
            got <= ratio,
            "{what}: makespan {} / lower bound {lb} = {got:.3} > {ratio}",
            p.makespan_ms
        );
        if let Some(n) = inits {
            assert_eq!(p.inits, n, "{what}: inits");
        }
    }
}

#[test]
fn the_issue_workload_is_within_8_percent_of_its_lower_bound() {
    for seed in 0..10 {
        let w = lognormal(seed, 4, 3, 24, 240);
        let p = plan_run(&w);
        check_complete(&w, &p);
        let lb = lower_bound(&w);
        let ratio = p.makespan_ms as f64 / lb as f64;
        assert!(
            ratio <= 1.08,
            "seed {seed}: {} / {lb} = {ratio:.3}",
            p.makespan_ms
        );
        assert!(
            p.inits <= 8,
            "seed {seed}: {} inits (suite order pays 12)",
            p.inits
        );
    }
}

#[test]
fn n_card_cases_are_placed_on_the_earliest_free_cards() {
    let mut w = workload(4, vec![100], vec![vec![50; 8]]);
    w.multi = vec![
        PlanMulti {
            case: 100,
            runtime: 0,
            cards: 2,
            ms: 400,
        },
        PlanMulti {
            case: 101,
            runtime: 0,
            cards: 4,
            ms: 100,
        },
        PlanMulti {
            case: 102,
            runtime: 0,
            cards: 8,
            ms: 100,
        },
    ];
    let p = plan_run(&w);
    check_complete(&w, &p);
    assert_eq!(
        p.multi.len(),
        2,
        "the 8-card case is not planned on 4 cards (it is skipped)"
    );
    assert_eq!(
        (p.multi[0].cases.as_slice(), p.multi[0].start_ms),
        (&[101][..], 0),
        "the widest first, at once"
    );
    assert_eq!(p.multi[1].cases, vec![100]);
    assert_eq!(
        p.multi[1].start_ms, 200,
        "then the 2-card case, after the 4-card one (init 100 + 100)"
    );
    // Cards 0 and 1 end at 200 + 100 (its lane's init) + 400; the single-card work (400 and an
    // init on each card) fits on cards 2 and 3 by then.
    assert_eq!(p.makespan_ms, 700);
}

#[test]
fn a_card_runs_a_runtime_s_units_together_longest_runtime_first() {
    let units = vec![
        PlannedUnit {
            class: 0,
            runtime: 1,
            cases: vec![0],
            ms: 10,
        },
        PlannedUnit {
            class: 1,
            runtime: 0,
            cases: vec![1],
            ms: 30,
        },
        PlannedUnit {
            class: 2,
            runtime: 1,
            cases: vec![2],
            ms: 50,
        },
        PlannedUnit {
            class: 3,
            runtime: 0,
            cases: vec![3],
            ms: 5,
        },
    ];
    let order: Vec<usize> = order_on_card(units.clone(), None)
        .iter()
        .map(|u| u.class)
        .collect();
    assert_eq!(
        order,
        vec![2, 0, 1, 3],
        "runtime 1 (60 ms) before runtime 0 (35 ms)"
    );
    // A card whose block left it a worker of runtime 0 runs runtime 0 first (its worker kept).
    let order: Vec<usize> = order_on_card(units, Some(0)).iter().map(|u| u.class).collect();
    assert_eq!(order, vec![1, 3, 2, 0], "the warm runtime first");
}

#[test]
fn a_class_longer_than_its_share_is_split() {
    let w = workload(4, vec![100], vec![vec![100; 40], vec![10; 4]]);
    let p = plan_run(&w);
    let holding = p.cards.iter().filter(|c| c.iter().any(|u| u.class == 0)).count();
    assert_eq!(holding, 4, "the 4,000 ms class runs on every card");
    // Every card pays its init: 4,040 ms of work and 4 inits over 4 cards.
    assert_eq!(p.makespan_ms, 1110);
}

#[test]
fn the_plan_is_deterministic() {
    let w = lognormal(7, 4, 3, 24, 240);
    assert_eq!(plan_run(&w), plan_run(&w));
}

/// The bench's second workload: [`lognormal`] on 8 cards with every tenth case (in suite order)
/// needing two cards, as `bench_suite::makespan` builds it.
fn lognormal_two_card(seed: u64) -> Workload {
    let mut w = lognormal(seed, 8, 3, 48, 480);
    let mut n = 0;
    for c in &mut w.classes {
        let runtime = c.runtime;
        let mut single = Vec::new();
        for &(case, ms) in &c.cases {
            n += 1;
            if n % 10 == 0 {
                w.multi.push(PlanMulti {
                    case,
                    runtime,
                    cards: 2,
                    ms,
                });
            } else {
                single.push((case, ms));
            }
        }
        c.cases = single;
    }
    w
}

/// Workload 2's failure shape (issue 23): with its blocks spread and several cards walking two
/// runtimes, the plan came to 1.11 to 1.13 of the lower bound (16 or 17 inits), over the bench's
/// 1.12 on most seeds; with every card that ran a block paying an init again in its regular lane
/// after it, 1.09 to 1.12 (14 to 16 inits). The block's first card now goes on with the worker
/// it holds (its lane is released, not closed): 12 to 14 inits, 1.075 to 1.094 on these seeds.
#[test]
fn two_card_cases_in_blocks_stay_near_their_floor() {
    let mut sum = 0.0;
    for seed in 0..10 {
        let w = lognormal_two_card(seed);
        let p = plan_run(&w);
        check_complete(&w, &p);
        let lb = lower_bound(&w);
        let ratio = p.makespan_ms as f64 / lb as f64;
        sum += ratio;
        assert!(
            ratio <= 1.10,
            "seed {seed}: {} / {lb} = {ratio:.3}",
            p.makespan_ms
        );
        assert!(p.inits <= 14, "seed {seed}: {} inits", p.inits);
        let blocks: usize = p.multi.iter().map(|m| m.cases.len()).sum();
        assert_eq!(blocks, 48, "seed {seed}: every two-card case in a block");
        assert!(
            p.multi.len() <= 3,
            "seed {seed}: a block per runtime at most, each paying an init per card: {}",
            p.multi.len()
        );
    }
    assert!(sum / 10.0 <= 1.095, "mean ratio {:.3}", sum / 10.0);
}

#[test]
fn a_block_s_first_card_goes_on_with_its_runtime_and_pays_no_second_init() {
    // Two cards, runtime 0's class of 1,000 ms, runtime 1's of 800, and a two-card block of
    // runtime 0: both cards build a worker for the block (300 + 100); the block's first card
    // keeps its runtime-0 worker for runtime 0's class (1,400), the other builds one of runtime
    // 1 (1,500). Were the first card to build again, the run would end at 1,700.
    let mut w = workload(2, vec![300, 300], vec![vec![250; 4], vec![200; 4]]);
    w.multi = vec![PlanMulti {
        case: 100,
        runtime: 0,
        cards: 2,
        ms: 100,
    }];
    let p = plan_run(&w);
    check_complete(&w, &p);
    let first = p.multi[0].cards[0];
    assert!(
        p.cards[first].iter().all(|u| u.runtime == 0) && !p.cards[first].is_empty(),
        "the block's first card runs its runtime's class: {:?}",
        p.cards
    );
    assert_eq!(p.makespan_ms, 1500);
    assert_eq!(p.inits, 3, "two for the block, one for runtime 1");
}

#[test]
fn one_runtime_per_card_when_the_work_splits_evenly_among_the_cards() {
    // Three runtimes, six cards, each runtime 2,000 ms of 100 ms cases: two cards each, one
    // init each (the other strategies may give a card two runtimes for the same makespan).
    let w = workload(6, vec![300; 3], vec![vec![100; 20]; 3]);
    let p = plan_run(&w);
    check_complete(&w, &p);
    assert_eq!(p.inits, 6);
    assert_eq!(p.makespan_ms, 1300);
}
