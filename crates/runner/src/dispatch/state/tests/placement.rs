//! Where a retry runs (issue 23 item 2): on a card whose lane ends what it holds on the retry's
//! runtime, or on its own card once its reset left it without a worker; it waits for such a card
//! at most an init (this run's, else the default), then the first free card takes it; with no
//! such card it takes the first free card at once; a quarantine of the card it waits for re-places
//! it at once.

use platform_common::error::codes;
use platform_common::FailureClass;

use super::harness::*;
use crate::dispatch::state::Event;

const DEVICE: FailureClass = FailureClass::DeviceRuntime;

/// Rows that start two lanes and hand out `first` (the actions after lane 1 started).
fn start(first: &'static [&'static str]) -> Vec<(u64, Event, &'static [&'static str])> {
    vec![
        (0, begin(), &["spawn 0 regular on 0", "spawn 1 regular on 1"]),
        (0, spawned(0, 100), &["lane_started card0 pid 100"]),
        (0, spawned(1, 101), first),
    ]
}

/// `A` (r1: x), `B` (r1: y), `E` (r1: u), `C` (r2: w), `D` (r2: v): card 0 takes A and E (r1),
/// card 1 B and C (r2); D waits.
fn suite_busy() -> crate::case::Suite {
    suite_rt(&[
        ("A", "r1", &["x"]),
        ("B", "r1", &["y"]),
        ("E", "r1", &["u"]),
        ("C", "r2", &["w"]),
        ("D", "r2", &["v"]),
    ])
}

const BUSY: &[&str] = &[
    "lane_started card1 pid 101",
    "run 0: A::x",
    "run 1: B::y",
    "run 0: E::u",
    "run 1: C::w",
];

#[test]
fn a_retry_lands_on_a_free_lane_that_holds_its_runtime() {
    // A (r1: x) and B (r2: y) on card 0, D (r1: v) on card 1.
    let s = suite_rt(&[("A", "r1", &["x"]), ("D", "r1", &["v"]), ("B", "r2", &["y"])]);
    let mut sim = Sim::new(&s, 2);
    sim.table(start(&[
        "lane_started card1 pid 101",
        "run 0: A::x",
        "run 1: D::v",
        "run 0: B::y",
    ]));
    #[rustfmt::skip]
    sim.table(vec![
        (1, started(0, "A::x"),           &["started A::x card0 #1"]),
        // Card 0 asks first but ends on r2; card 1 ends on r1: it takes the retry, no init.
        (2, failed(0, "A::x", DEVICE),    &["finished A::x card0 #1 failed", "retry A::x", "run 1: A::x"]),
    ]);
}

#[test]
fn a_retry_waits_for_the_busy_lane_that_holds_its_runtime() {
    let mut sim = Sim::new(&suite_busy(), 2);
    sim.table(start(BUSY));
    #[rustfmt::skip]
    sim.table(vec![
        (1, started(1, "B::y"),           &["started B::y card1 #1"]),
        // Card 1 has room but ends on r2: it takes D, and the retry waits for card 0 (r1).
        (2, failed(1, "B::y", DEVICE),    &["finished B::y card1 #1 failed", "retry B::y", "run 1: D::v"]),
        (3, started(0, "A::x"),           &["started A::x card0 #1"]),
        // Card 0 has room now: it takes the retry, behind E (r1).
        (4, passed(0, "A::x"),            &["finished A::x card0 #1 passed", "run 0: B::y"]),
    ]);
}

#[test]
fn a_retry_waits_at_most_an_init_then_takes_the_first_free_card() {
    let mut sim = Sim::new(&suite_busy(), 2);
    sim.table(start(BUSY));
    #[rustfmt::skip]
    sim.table(vec![
        // Card 1's init of r1 took 300 ms: this run's estimate of an r1 init.
        (0,   init_started(1, 1),         &[]),
        (300, init_done(1, 1),            &[]),
        (300, built(1, 1, "r1"),          &["worker card1 built"]),
        (301, started(1, "B::y"),         &["started B::y card1 #1"]),
        (310, failed(1, "B::y", DEVICE),  &["finished B::y card1 #1 failed", "retry B::y", "run 1: D::v"]),
    ]);
    assert!(
        sim.state.next_deadline().is_some_and(|d| d.as_millis() == 610),
        "the wait's end is a deadline: {:?}",
        sim.state.next_deadline()
    );
    #[rustfmt::skip]
    sim.table(vec![
        (400, started(1, "C::w"),         &["started C::w card1 #1"]),
        // Card 0 is still busy an init later: from now on the first free card takes the retry.
        (610, tick(),                     &[]),
        (620, passed(1, "C::w"),          &["finished C::w card1 #1 passed", "run 1: B::y"]),
    ]);
}

#[test]
fn without_an_estimate_a_retry_waits_the_default_init() {
    let mut sim = Sim::new(&suite_busy(), 2);
    sim.table(start(BUSY));
    let wait = crate::dispatch::policy::placement::DEFAULT_INIT_MS;
    #[rustfmt::skip]
    sim.table(vec![
        (1,        started(1, "B::y"),         &["started B::y card1 #1"]),
        (2,        failed(1, "B::y", DEVICE),  &["finished B::y card1 #1 failed", "retry B::y", "run 1: D::v"]),
        (3,        started(1, "C::w"),         &["started C::w card1 #1"]),
        (wait,     passed(1, "C::w"),          &["finished C::w card1 #1 passed"]),
        (wait + 2, tick(),                     &["run 1: B::y"]),
    ]);
}

#[test]
fn a_retry_goes_to_its_own_card_once_reset_rather_than_switch_another() {
    // A (r2: x, x2) on card 0, B (r1: y) on card 1.
    let s = suite_rt(&[("A", "r2", &["x", "x2"]), ("B", "r1", &["y"])]);
    let mut sim = Sim::new(&s, 2);
    sim.table(start(&[
        "lane_started card1 pid 101",
        "run 0: A::x A::x2",
        "run 1: B::y",
    ]));
    #[rustfmt::skip]
    sim.table(vec![
        (1, started(1, "B::y"),           &["started B::y card1 #1"]),
        // Card 0 asks first but holds r2; card 1's worker is retired (its reset): it holds none,
        // and takes its retry.
        (2, failed(1, "B::y", DEVICE),    &["finished B::y card1 #1 failed", "retry B::y", "run 1: B::y"]),
    ]);
}

#[test]
fn with_no_card_holding_its_runtime_a_retry_takes_the_first_free_card() {
    // A (r1: x) and C (r2: w) on card 0, B (r2: y) on card 1: both end on r2.
    let s = suite_rt(&[("A", "r1", &["x"]), ("B", "r2", &["y"]), ("C", "r2", &["w"])]);
    let mut sim = Sim::new(&s, 2);
    sim.table(start(&[
        "lane_started card1 pid 101",
        "run 0: A::x",
        "run 1: B::y",
        "run 0: C::w",
    ]));
    #[rustfmt::skip]
    sim.table(vec![
        (1, started(0, "A::x"),           &["started A::x card0 #1"]),
        (2, failed(0, "A::x", DEVICE),    &["finished A::x card0 #1 failed", "retry A::x", "run 0: A::x"]),
    ]);
}

#[test]
fn a_quarantine_of_the_card_a_retry_waits_for_re_places_it() {
    let mut sim = Sim::new(&suite_busy(), 2);
    sim.table(start(BUSY));
    let ecc = codes::RT_HBM_MULTI_BIT_ECC_ERROR;
    #[rustfmt::skip]
    sim.table(vec![
        (1, started(1, "B::y"),           &["started B::y card1 #1"]),
        (2, failed(1, "B::y", DEVICE),    &["finished B::y card1 #1 failed", "retry B::y", "run 1: D::v"]),
        (3, started(0, "A::x"),           &["started A::x card0 #1"]),
        // Card 0, the card the retry waits for, leaves the run (its own retry goes first).
        (4, failed_with_code(0, "A::x", ecc),
                                          &["finished A::x card0 #1 failed", "health card0 quarantined", "remember card0 needs_service", "close 0", "retry A::x"]),
        (5, started(1, "C::w"),           &["started C::w card1 #1"]),
        (6, passed(1, "C::w"),            &["finished C::w card1 #1 passed", "run 1: A::x"]),
        (7, started(1, "D::v"),           &["started D::v card1 #1"]),
        // Long before an init's wait, the first free card takes it: nothing better is left.
        (8, passed(1, "D::v"),            &["finished D::v card1 #1 passed", "run 1: B::y"]),
    ]);
}
