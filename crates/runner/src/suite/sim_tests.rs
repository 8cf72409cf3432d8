//! The built-in suite on a simulated card, in process: every admitted case of each arch runs on a
//! chip worker through the case executor (`exec`), as a lane runs it, but without lanes or a
//! dispatcher. A cheap check that the suite's content passes on the device model (its block-dim
//! limits, memory, launch path) independent of the runner's process machinery.

use std::sync::Arc;
use std::time::Instant;

use platform_common::kernel::load_builtin;
use platform_common::lease::LeaseConfig;
use platform_common::sim::{start_run, FaultPlan, SimConfig, SimDriver};
use platform_common::{Arch, DeviceLease};

use super::builtin;
use crate::case::{CaseSpec, ClassSpec, Kind};
use crate::exec::{self, liveness, CaseInput, CaseRun};
use crate::worker::{ChipWorker, WorkerEnv};

/// One attempt of `case` on `worker`, judged as a lane judges it: the raw attempt, and whether
/// an expected failure (a device fault) happened.
fn attempt(
    worker: &mut ChipWorker,
    env: &mut WorkerEnv,
    class: &ClassSpec,
    case: &CaseSpec,
) -> (CaseRun, bool) {
    let id = class.case_id(case);
    let input = CaseInput {
        id: &id,
        class: &class.name,
        case,
        host_fixture: None,
        device_setup: None,
    };
    let raw = exec::execute(worker, env, &input).raw;
    let fault = raw.class() == Some(platform_common::FailureClass::DeviceRuntime);
    let judged = exec::judge(raw, class.settings_of(case).expect.as_ref(), env.arch);
    (judged.reported, judged.met && fault)
}

/// Runs every admitted case of `arch`'s suite on card 0 of a fresh simulated machine; returns the
/// ids of the cases that did not pass, with why.
fn run_suite(arch: Arch) -> (usize, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new(crate::platform::arch_entry(arch).facts, dir.path().join("sim")).with_cards(1);
    start_run(&cfg, &[0], &FaultPlan::default()).unwrap();
    let lease = DeviceLease::try_acquire(
        &LeaseConfig {
            dir: dir.path().join("locks"),
        },
        0,
        "suite-sim-test",
    )
    .unwrap();
    let mut env = WorkerEnv::new(arch, Arc::new(SimDriver::new(cfg.clone())), 0, cfg.timeouts);
    env.probe_kernel = Some(load_builtin(arch, "noop").unwrap());

    let suite = builtin(arch);
    let mut ran = 0;
    let mut failures = Vec::new();
    let mut note = |id: String, run: CaseRun| {
        if run.outcome != crate::report::model::AttemptOutcome::Passed {
            failures.push(format!("{id}: {:?}", run.error));
        }
    };
    for class in &suite.classes {
        let cases: Vec<_> = class.cases.iter().filter(|c| c.arch.admits(arch)).collect();
        if cases.is_empty() {
            continue;
        }
        match class.kind {
            Kind::Pooled => {
                let mut worker = ChipWorker::init(&env, &class.runtime).unwrap();
                for case in cases {
                    let (run, _) = attempt(&mut worker, &mut env, class, case);
                    assert!(
                        !worker.is_unusable(),
                        "{arch}: {} poisoned the pooled worker",
                        class.case_id(case)
                    );
                    note(class.case_id(case), run);
                    ran += 1;
                }
                worker.close(&lease).unwrap();
            }
            Kind::Standalone => {
                for case in cases {
                    let mut worker = ChipWorker::init(&env, &class.runtime).unwrap();
                    let (run, expected_fault) = attempt(&mut worker, &mut env, class, case);
                    let closing = Instant::now();
                    let closed = worker.close(&lease);
                    let run = liveness::judge_close(run, expected_fault, closing.elapsed(), &env.timeouts);
                    closed.unwrap();
                    note(class.case_id(case), run);
                    ran += 1;
                }
            }
        }
    }
    (ran, failures)
}

fn check_arch(arch: Arch) {
    let start = Instant::now();
    let (ran, failures) = run_suite(arch);
    assert!(
        failures.is_empty(),
        "{arch}: cases failed on the sim:\n{}",
        failures.join("\n")
    );
    assert!(ran >= 40, "{arch}: only {ran} cases ran");
    eprintln!(
        "{arch}: {ran} cases passed on a simulated card in {:?}",
        start.elapsed()
    );
}

#[test]
fn every_a5_case_passes_on_a_simulated_card() {
    check_arch(Arch::A5);
}

#[test]
fn every_a2a3_case_passes_on_a_simulated_card() {
    check_arch(Arch::A2a3);
}
