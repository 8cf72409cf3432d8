//! Cards remember their health (issue 9, item 4): a card quarantined in one run is recorded beside
//! its lock file, and the next run that leases it runs a preflight (init and probe in a lane of its
//! own) before giving it work: a card that is still dead is quarantined at the start (no lane
//! starts its work), and a card whose preflight passes is used again and its record cleared.

mod common;

use common::*;
use platform_common::lease::{CardHealth, HealthStatus, LeaseConfig};
use platform_common::DeviceLease;
use runner::report::model::Event;

const CASES: [&str; 2] = ["VectorAdd", "Softmax"];

/// The card's health record, read as a lease holder reads it.
fn record(sb: &Sandbox, card: u32) -> Option<CardHealth> {
    let cfg = LeaseConfig { dir: sb.lock_dir() };
    DeviceLease::try_acquire(&cfg, card, "test-reader")
        .unwrap()
        .health_record()
}

/// The journal's lane starts and case starts on `device`.
fn starts_on(run: &Run, device: u32) -> (usize, usize) {
    let j = run.journal();
    let lanes = j
        .iter()
        .filter(|e| matches!(e, Event::LaneStarted { device: d, .. } if *d == device))
        .count();
    let cases = j
        .iter()
        .filter(|e| matches!(e, Event::CaseStarted { device: d, .. } if *d == device))
        .count();
    (lanes, cases)
}

#[test]
fn a_dead_card_quarantined_in_one_run_is_quarantined_at_the_start_of_the_next() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a2a3", &selectors(&CASES));
    let dead = ["--faults", "dev=1:dead"];

    let first = sb.run_cases("a2a3", "0,1", &CASES, &dead);
    let r = first.consistent_report(0);
    assert!(health(&r, 1).contains(&"quarantined"), "{:?}", health(&r, 1));
    let rec = record(&sb, 1).expect("the quarantine is remembered beside the lock");
    assert_eq!(rec.status, HealthStatus::Quarantined);
    assert_eq!(rec.run_id, r.run_id);
    assert!(
        rec.events.iter().any(|e| e["event"] == "init_failed"),
        "the record keeps the card's events: {:?}",
        rec.events
    );
    assert_eq!(record(&sb, 0), None, "the healthy card has no record");
    let first_id = r.run_id.clone();

    let second = sb.run_cases("a2a3", "0,1", &CASES, &dead);
    let r = second.consistent_report(0);
    let h = health(&r, 1);
    assert_eq!(
        h.last(),
        Some(&"quarantined_at_start"),
        "{h:?}\n{}",
        second.dump()
    );
    assert!(!h.contains(&"quarantined"), "{h:?}");
    let (lanes, cases) = starts_on(&second, 1);
    assert_eq!((lanes, cases), (1, 0), "only the preflight lane ran on card 1");
    for id in &ids {
        let c = case(&r, id);
        assert!(
            c.attempts.iter().all(|a| a.device == Some(0)),
            "{id}: {:?}",
            c.attempts
        );
    }
    let q = &r.devices_health["1"].last().unwrap();
    assert!(
        q.detail().starts_with("preflight of card 1 failed") && q.detail().contains(&first_id),
        "names the record: {}",
        q.detail()
    );
    let rec = record(&sb, 1).expect("still remembered");
    assert!(rec.is_quarantined());
    assert_eq!(
        rec.run_id, r.run_id,
        "rewritten by the run that saw it fail again"
    );
    assert!(
        second.stdout.contains("quarantined at start"),
        "{}",
        second.dump()
    );
}

#[test]
fn a_card_whose_record_says_quarantined_but_whose_preflight_passes_is_used_again() {
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &selectors(&CASES));
    // An earlier run quarantined card 1 (since recovered, say by a driver reset).
    {
        let cfg = LeaseConfig { dir: sb.lock_dir() };
        let lease = DeviceLease::try_acquire(&cfg, 1, "earlier-run").unwrap();
        let rec = CardHealth::now(
            1,
            HealthStatus::Quarantined,
            "earlier-run",
            "4 lane processes in a row died",
        );
        lease.remember_health(&rec).unwrap();
    }
    // The run has card 1 alone, so the work can only be card 1's once its preflight passed.
    let run = sb.run_cases("a5", "1", &CASES, &[]);
    let r = run.consistent_report(0);
    let h = health(&r, 1);
    assert_eq!(h.first(), Some(&"preflight_ok"), "{h:?}\n{}", run.dump());
    assert!(!h.iter().any(|e| e.starts_with("quarantined")), "{h:?}");
    let ok = &r.devices_health["1"][0];
    assert!(ok.detail().contains("earlier-run"), "{}", ok.detail());
    let (lanes, cases) = starts_on(&run, 1);
    assert!(lanes >= 2, "the preflight lane, then a lane with work");
    assert!(cases > 0, "card 1 got work again");
    assert_others_passed_once(&r, &ids, "");
    assert_eq!(record(&sb, 1), None, "the record was cleared");
    // The preflight's own launch (the probe's noop) is internal: the fault plan's count of case
    // launches on the card starts with the first case, so a plan still names the cases it did.
    let j = run.journal();
    let first_lane_exit = j
        .iter()
        .position(|e| matches!(e, Event::LaneExited { device: 1, .. }))
        .unwrap();
    let first_case_on_1 = j
        .iter()
        .position(|e| matches!(e, Event::CaseStarted { device: 1, .. }))
        .unwrap();
    assert!(
        first_lane_exit < first_case_on_1,
        "the preflight ended before work began"
    );
}
