//! A pooled class's multi-card cases keep their workers (issue 23): a multi-card lane that runs
//! several two-card cases of one runtime builds one worker per card for all of them, as a pooled
//! worker serves a card's single-card cases, instead of an init on both cards per case; and once
//! its block is done it gives up its further card and goes on as its own card's regular lane,
//! with the worker it holds there.

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

/// The two two-card cases of [`SELECTION`].
const MULTI: [&str; 2] = ["Makespan00::case09", "Makespan03::case09"];

/// [`SELECTION`] run with `--order suite` (which fills the history), then with `--order smart`
/// (which plans the two-card cases into one block): the second run, checked to pass.
fn smart_run(sb: &Sandbox) -> Run {
    sb.run("a5", &[&SELECTION[..], &["--order", "suite"]].concat())
        .expect_code(0);
    let run = sb.run("a5", &[&SELECTION[..], &["--order", "smart"]].concat());
    run.expect_code(0);
    run
}

#[test]
fn a_multi_card_lane_builds_its_workers_once_for_a_block_of_one_runtime() {
    let sb = Sandbox::with_cards(2);
    let run = smart_run(&sb);
    let report = run.report();
    assert!(
        report.cases.iter().all(|c| c.outcome == Outcome::Passed),
        "{}",
        run.dump()
    );
    let journal = run.journal();
    let multi = MULTI;
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

#[test]
fn a_multi_card_lane_goes_on_as_its_card_s_regular_lane_with_the_worker_it_holds() {
    let sb = Sandbox::with_cards(2);
    let run = smart_run(&sb);
    let journal = run.journal();
    // The block's lane and its own card (a case's attempt is on its lane's own card).
    let (pid, own) = journal
        .iter()
        .find_map(|e| match e {
            Event::CaseFinished { id, pid, device, .. } if MULTI.contains(&id.as_str()) => {
                Some((*pid, *device))
            }
            _ => None,
        })
        .expect("the block ran");
    let after_block: Vec<&str> = journal
        .iter()
        .filter_map(|e| match e {
            Event::CaseFinished {
                id, pid: p, device, ..
            } if *p == pid && *device == own && !MULTI.contains(&id.as_str()) => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !after_block.is_empty(),
        "the block's lane ran single-card cases on its card after the block: {}",
        run.dump()
    );
    // Every case is of one runtime: the own card builds one worker in the whole run; the other
    // card one in the block's lane and one in the regular lane it gets after the release.
    let mut built: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for e in &journal {
        if let Event::Worker {
            pid,
            device,
            action: WorkerAction::Built,
            ..
        } = e
        {
            built.entry(*device).or_default().push(*pid);
        }
    }
    assert_eq!(built.get(&own), Some(&vec![pid]), "card {own}: {built:?}");
    let other = 1 - own;
    let on_other = built.get(&other).cloned().unwrap_or_default();
    assert_eq!(on_other.len(), 2, "card {other}: {built:?}");
    assert_eq!(
        on_other[0], pid,
        "card {other}'s first worker is the block's: {built:?}"
    );
    assert!(
        run.report().cases.iter().all(|c| c.outcome == Outcome::Passed),
        "{}",
        run.dump()
    );
}
