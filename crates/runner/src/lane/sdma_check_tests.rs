//! Capability-aware health in a lane, in process on a simulated card of each arch (issue 22
//! item 3): a card whose SDMA engine another process wedged passes a compute-only worker's
//! post-case check (the pypto-lib #1240 false pass) and fails an SDMA worker's, which the case
//! that just ran pays and whose worker the lane retires; an SDMA worker is retired after a pass.

use std::sync::Arc;

use platform_common::driver::{Driver, SdmaOrigin, StreamFailureMode};
use platform_common::error::codes;
use platform_common::kernel::load_builtin;
use platform_common::lease::LeaseConfig;
use platform_common::sdma::SDMA_PROBE_BYTES;
use platform_common::sim::{start_run, FaultPlan, SimConfig, SimDriver};
use platform_common::{Arch, DeviceLease, FailureClass};

use super::heal::{self, HealthCheck, PoolStep};
use super::post_check;
use crate::case::Runtime;
use crate::exec::{self, CaseInput, CaseRun};
use crate::report::model::AttemptOutcome;
use crate::worker::{ChipWorker, WorkerEnv};

/// One simulated card of `arch` whose first case SDMA copy faults (`sdma_fault@1`).
struct Card {
    _dir: tempfile::TempDir,
    cfg: SimConfig,
    env: WorkerEnv,
    lease: DeviceLease,
}

fn card(arch: Arch) -> Card {
    let dir = tempfile::tempdir().unwrap();
    let cfg = crate::platform::arch_entry(arch)
        .sim_config(dir.path().join("sim"))
        .with_cards(1);
    let plan = FaultPlan::parse_for_cards("dev=0:sdma_fault@1", 1).unwrap();
    start_run(&cfg, &[0], &plan).unwrap();
    let locks = LeaseConfig {
        dir: dir.path().join("locks"),
    };
    let lease = DeviceLease::try_acquire(&locks, 0, "sdma-check-test").unwrap();
    let mut env = WorkerEnv::new(arch, Arc::new(SimDriver::new(cfg.clone())), 0, cfg.timeouts);
    env.probe_kernel = Some(load_builtin(arch, "noop").unwrap());
    Card {
        _dir: dir,
        cfg,
        env,
        lease,
    }
}

/// Another process's SDMA copy, which the plan faults: the card's SDMA engine is wedged.
fn wedge(cfg: &SimConfig) {
    let d = SimDriver::new(cfg.clone());
    d.set_device(0).unwrap();
    let s = d.create_stream().unwrap();
    d.set_stream_failure_mode(s, StreamFailureMode::StopOnFailure)
        .unwrap();
    let (a, b) = (
        d.malloc(SDMA_PROBE_BYTES).unwrap(),
        d.malloc(SDMA_PROBE_BYTES).unwrap(),
    );
    d.sdma_copy(s, b, a, SDMA_PROBE_BYTES, SdmaOrigin::Case).unwrap();
    let e = d
        .synchronize_stream_with_timeout(s, cfg.timeouts.stream_sync_ms())
        .unwrap_err();
    assert_eq!(
        e.code,
        codes::RT_AICORE_EXCEPTION,
        "the planned fault wedged the engine"
    );
}

/// A passing compute case (the built-in `VectorAdd`'s first) on `worker`, then the post-case
/// check (`each`).
fn compute_case_then_check(worker: &mut ChipWorker, env: &mut WorkerEnv) -> CaseRun {
    let suite = crate::suite::builtin(env.arch);
    let class = suite.find_class("VectorAdd").unwrap();
    let case = &class.cases[0];
    let id = class.case_id(case);
    let input = CaseInput {
        id: &id,
        class: &class.name,
        case,
        host_fixture: None,
        device_setup: None,
    };
    let raw = exec::execute(worker, env, &input).raw;
    assert_eq!(raw, CaseRun::passed(), "compute is untouched by the wedge");
    post_check::apply(HealthCheck::Each, worker, raw)
}

#[test]
fn a_wedged_sdma_engine_fails_the_check_of_an_sdma_worker_and_not_of_a_compute_only_one() {
    for arch in Arch::ALL {
        // A compute-only run: its check never touches SDMA, so it passes the wedged card.
        let mut c = card(arch);
        let mut worker = ChipWorker::init(&c.env, &Runtime::new("compute")).unwrap();
        wedge(&c.cfg);
        let checked = compute_case_then_check(&mut worker, &mut c.env);
        assert_eq!(
            checked,
            CaseRun::passed(),
            "{arch}: the compute-only check's false pass"
        );
        assert!(!worker.is_unusable(), "{arch}");
        let always = heal::retire_always(worker.runtime().sdma, false);
        assert_eq!(heal::after_case(None, false, always), PoolStep::Keep, "{arch}");
        worker.close(&c.lease).unwrap();

        // An SDMA worker (built before the wedge): its check runs the SDMA probe.
        let mut c = card(arch);
        let mut worker = ChipWorker::init(&c.env, &Runtime::sdma("sdma")).unwrap();
        wedge(&c.cfg);
        let checked = compute_case_then_check(&mut worker, &mut c.env);
        assert_eq!(checked.outcome, AttemptOutcome::Failed, "{arch}: {checked:?}");
        let e = checked.error.as_ref().unwrap();
        assert!(e.post_case_check, "{arch}: the check's finding: {e:?}");
        assert_eq!(e.class, FailureClass::DeviceRuntime, "{arch}: {e:?}");
        assert_eq!(e.code, Some(codes::RT_AICORE_EXCEPTION), "{arch}: {e:?}");
        assert!(worker.is_unusable(), "{arch}: the failed check marks the runner");
        let always = heal::retire_always(worker.runtime().sdma, false);
        assert_eq!(
            heal::after_case(checked.error.as_ref(), true, always),
            PoolStep::Retire,
            "{arch}"
        );
        let _ = worker.close(&c.lease);
    }
}

#[test]
fn an_sdma_worker_is_retired_after_a_pass_unless_the_run_keeps_it() {
    for arch in Arch::ALL {
        let mut c = card(arch);
        let mut worker = ChipWorker::init(&c.env, &Runtime::sdma("sdma")).unwrap();
        let checked = compute_case_then_check(&mut worker, &mut c.env);
        assert_eq!(
            checked,
            CaseRun::passed(),
            "{arch}: a clean engine passes the SDMA probe"
        );
        let step = |keep| heal::after_case(None, false, heal::retire_always(worker.runtime().sdma, keep));
        assert_eq!(step(false), PoolStep::Retire, "{arch}: retired after a pass");
        assert_eq!(step(true), PoolStep::Keep, "{arch}: --keep-sdma-workers keeps it");
        worker.close(&c.lease).unwrap();
    }
}
