//! A pooled class's multi-card cases keep their workers (issue 23): a multi-card lane that runs
//! several two-card cases of one runtime builds one worker per card for all of them, as a pooled
//! worker serves a card's single-card cases, instead of an init on both cards per case.

mod common;

use std::collections::BTreeMap;

use common::*;
use runner::report::model::{Event, Outcome, WorkerAction};

/// Two classes of one runtime (the makespan suite's classes 0 and 3), each with a two-card case,
/// on cards whose every init takes 50 ms (a free init would make any plan as good as another).
const SELECTION: [&str; 16] = [
    "--suite",
    "makespan",
    "--bench-workload",
    "2",
    "--bench-seed",
    "1",
    "--case",
    "Makespan00",
    "--case",
    "Makespan03",
    "--devices",
    "0,1",
    "--retries",
    "0",
    "--faults",
    "dev=*:init_delay_ms=50",
];

#[test]
fn a_multi_card_lane_builds_its_workers_once_for_a_block_of_one_runtime() {
    let sb = Sandbox::with_cards(2);
    // The first run fills the history; the second plans the two-card cases into one block.
    sb.run("a5", &[&SELECTION[..], &["--order", "suite"]].concat())
        .expect_code(0);
    let run = sb.run("a5", &[&SELECTION[..], &["--order", "smart"]].concat());
    run.expect_code(0);
    let report = run.report();
    assert!(
        report.cases.iter().all(|c| c.outcome == Outcome::Passed),
        "{}",
        run.dump()
    );
    let journal = run.journal();
    let multi = ["Makespan00::case09", "Makespan03::case09"];
    let pids: Vec<u32> = journal
        .iter()
        .filter_map(|e| match e {
            Event::CaseFinished { id, pid, .. } if multi.contains(&id.as_str()) => Some(*pid),
            _ => None,
        })
        .collect();
    assert_eq!(pids.len(), 2, "{}", run.dump());
    assert_eq!(pids[0], pids[1], "one lane runs the block: {}", run.dump());
    // That lane's worker events per card: built once, closed once (as the lane ends).
    let mut per_card: BTreeMap<u32, Vec<WorkerAction>> = BTreeMap::new();
    for e in &journal {
        if let Event::Worker {
            pid, device, action, ..
        } = e
        {
            if *pid == pids[0] {
                per_card.entry(*device).or_default().push(*action);
            }
        }
    }
    assert_eq!(per_card.len(), 2, "both cards: {per_card:?}");
    for (card, actions) in &per_card {
        assert_eq!(
            actions,
            &[WorkerAction::Built, WorkerAction::Closed],
            "card {card}: one worker for both cases"
        );
    }
}
