//! Capability-aware health end to end (issue 22 item 3): a pooled worker created with SDMA is
//! retired after every case, pass or not, unless `--keep-sdma-workers`; a card quarantined for
//! an SDMA failure says so in its health record (`capability: sdma`, a dead card's says
//! `compute`); and the preflight of such a card runs the SDMA warm-up and probe only when the
//! run's selected cases use SDMA.

mod common;

use common::*;
use platform_common::health::Capability;
use platform_common::lease::{CardHealth, HealthStatus, LeaseConfig};
use platform_common::DeviceLease;
use runner::report::model::{Event, WorkerAction};

/// The card's health record, read as a lease holder reads it.
fn record(sb: &Sandbox, card: u32) -> Option<CardHealth> {
    let cfg = LeaseConfig { dir: sb.lock_dir() };
    DeviceLease::try_acquire(&cfg, card, "test-reader")
        .unwrap()
        .health_record()
}

/// The worker steps of runtime `runtime` in the run's journal.
fn worker_steps(run: &Run, runtime: &str) -> Vec<WorkerAction> {
    run.journal()
        .into_iter()
        .filter_map(|e| match e {
            Event::Worker {
                runtime: r, action, ..
            } if r == runtime => Some(action),
            _ => None,
        })
        .collect()
}

#[test]
fn a_pooled_sdma_worker_is_retired_after_every_passing_case_unless_kept() {
    // `BlockDimSweep` is pooled on `aicpu_build_graph`, whose workers take SDMA on a2a3 only.
    let sb = Sandbox::new();
    let (ids, run) = sb.list_and_run("a2a3", "0", &["BlockDimSweep"], &[]);
    let r = run.consistent_report(0);
    assert_eq!(r.summary.passed as usize, ids.len(), "{}", run.dump());
    let steps = worker_steps(&run, "aicpu_build_graph");
    let built = steps.iter().filter(|a| **a == WorkerAction::Built).count();
    let retired = steps.iter().filter(|a| **a == WorkerAction::Retired).count();
    assert_eq!(built, ids.len(), "one worker per case: {steps:?}");
    assert_eq!(retired, ids.len(), "each retired after its pass: {steps:?}");

    let kept = ["--keep-sdma-workers"];
    let (_, run) = sb.list_and_run("a2a3", "0", &["BlockDimSweep"], &kept);
    run.consistent_report(0);
    assert_eq!(
        worker_steps(&run, "aicpu_build_graph"),
        [WorkerAction::Built, WorkerAction::Closed],
        "--keep-sdma-workers pools it"
    );

    let (_, run) = sb.list_and_run("a5", "0", &["BlockDimSweep"], &[]);
    run.consistent_report(0);
    assert_eq!(
        worker_steps(&run, "aicpu_build_graph"),
        [WorkerAction::Built, WorkerAction::Closed],
        "a5's worker has no SDMA: pooled"
    );
}

#[test]
fn the_health_record_names_the_capability_that_failed_and_the_preflight_checks_sdma_when_used() {
    for arch in ["a5", "a2a3"] {
        let sb = Sandbox::new();
        // The warm-up fault wedges the engine: the SDMA init fails, and a fresh lane's again, so
        // the run's one card is quarantined and no case can pass.
        let warmup = ["--faults", "dev=0:sdma_warmup_fault"];
        let run = sb.run_cases(arch, "0", &["SdmaCopy", "VectorAdd"], &warmup);
        let r = run.consistent_report(1);
        assert!(
            health(&r, 0).contains(&"quarantined"),
            "{arch}: {:?}\n{}",
            health(&r, 0),
            run.dump()
        );
        let rec = record(&sb, 0).expect("the quarantine is remembered");
        assert_eq!(rec.status, HealthStatus::Quarantined, "{arch}");
        assert_eq!(rec.capability, Some(Capability::Sdma), "{arch}: {rec}");
        assert!(rec.to_string().contains("sdma failed"), "{arch}: {rec}");

        // A run without SDMA: the preflight is compute-only (no warm-up for the plan to fault).
        let compute = sb.run_cases(arch, "0", &["VectorAdd"], &warmup);
        let r = compute.consistent_report(0);
        assert!(
            health(&r, 0).contains(&"preflight_ok"),
            "{arch}: {:?}\n{}",
            health(&r, 0),
            compute.dump()
        );
        assert!(
            record(&sb, 0).map_or(true, |c| c.status == HealthStatus::Cleared),
            "{arch}: the record is cleared"
        );

        // Quarantined again, then a run with SDMA cases: its preflight provisions SDMA (the
        // warm-up, which the plan faults) and fails.
        let run = sb.run_cases(arch, "0", &["SdmaCopy"], &warmup);
        run.consistent_report(1);
        assert_eq!(record(&sb, 0).and_then(|c| c.capability), Some(Capability::Sdma));
        let sdma = sb.run_cases(arch, "0,1", &["SdmaCopy"], &warmup);
        let r = sdma.consistent_report(0);
        assert_eq!(
            health(&r, 0).last(),
            Some(&"quarantined_at_start"),
            "{arch}: {:?}\n{}",
            health(&r, 0),
            sdma.dump()
        );
        let rec = record(&sb, 0).unwrap();
        assert_eq!(rec.status, HealthStatus::Quarantined, "{arch}");
        assert_eq!(rec.capability, Some(Capability::Sdma), "{arch}: {rec}");
        let failed = r.devices_health["0"]
            .iter()
            .find(|h| h.name() == "init_failed")
            .expect("the preflight's failure");
        assert_eq!(failed.capability(), Some(Capability::Sdma), "{arch}");

        // A dead card's record says compute.
        let dead = ["--faults", "dev=1:dead"];
        let run = sb.run_cases(arch, "0,1", &["VectorAdd"], &dead);
        run.consistent_report(0);
        let rec = record(&sb, 1).expect("the dead card is remembered");
        assert_eq!(rec.capability, Some(Capability::Compute), "{arch}: {rec}");
    }
}
