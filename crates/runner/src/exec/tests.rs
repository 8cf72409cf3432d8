//! The case context and the executor on a simulated card, in process, on both arches: every
//! context operation, and every failure path of a host body (a device error, a swallowed device
//! error, a comparison failure, a panic, a leaked buffer, a stale buffer handle), with the heal
//! decision the lane takes from each; and class fixtures (host data once, device resources per
//! worker, rebuilt after a fault). The lane and dispatcher around them are tested through the
//! suite binary (`crates/runner/tests/authoring_*.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use platform_common::kernel::load_builtin;
use platform_common::lease::LeaseConfig;
use platform_common::runner_base::{RunError, UsageError};
use platform_common::sim::{start_run, FaultPlan, SimConfig, SimDriver};
use platform_common::{error::codes, Arch, DeviceLease, FailureClass};

use super::*;
use crate::case::{
    Arg, CaseCtx, CaseFailure, CaseSpec, ClassSpec, DeviceBuffer, DeviceError, Fixture, Runtime, SetupInfo,
};
use crate::lane::heal::{self, PoolStep};
use crate::report::model::{AttemptOutcome, FixturePart};
use crate::worker::{ChipWorker, WorkerEnv};

/// One simulated card of `arch` with `plan`, its lease, its driver (for the stats) and a worker
/// environment.
struct Card {
    _dir: tempfile::TempDir,
    sim: Arc<SimDriver>,
    env: WorkerEnv,
    lease: DeviceLease,
}

fn card(arch: Arch, plan: &str) -> Card {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new(crate::platform::arch_entry(arch).facts, dir.path().join("sim")).with_cards(1);
    start_run(&cfg, &[0], &FaultPlan::parse_for_cards(plan, 1).unwrap()).unwrap();
    let locks = LeaseConfig {
        dir: dir.path().join("locks"),
    };
    let lease = DeviceLease::try_acquire(&locks, 0, "exec-test").unwrap();
    let sim = Arc::new(SimDriver::new(cfg.clone()));
    let mut env = WorkerEnv::new(arch, Arc::clone(&sim) as _, 0, cfg.timeouts);
    env.probe_kernel = Some(load_builtin(arch, "noop").unwrap());
    Card {
        _dir: dir,
        sim,
        env,
        lease,
    }
}

fn rt() -> Runtime {
    Runtime::new("rt")
}

/// Runs `case` of `class` on `worker` as a lane does: its attempt judged, and the heal step.
fn attempt(
    worker: &mut ChipWorker,
    env: &mut WorkerEnv,
    class: &ClassSpec,
    case: &CaseSpec,
) -> (CaseRun, PoolStep) {
    let mut fixtures = HostFixtures::default();
    attempt_with(worker, env, &mut fixtures, class, case).0
}

fn attempt_with(
    worker: &mut ChipWorker,
    env: &mut WorkerEnv,
    fixtures: &mut HostFixtures,
    class: &ClassSpec,
    case: &CaseSpec,
) -> ((CaseRun, PoolStep), Vec<FixtureNote>) {
    let id = class.case_id(case);
    let host = fixtures.get(class, &id, env.arch);
    let mut notes: Vec<FixtureNote> = host.note.into_iter().collect();
    let executed = match host.data {
        Err(e) => Executed {
            raw: CaseRun::failed(e),
            notes: Vec::new(),
        },
        Ok(data) => {
            let input = CaseInput {
                id: &id,
                class: &class.name,
                case,
                host_fixture: data,
                device_setup: class.fixture.as_ref().and_then(|f| f.device.clone()),
            };
            execute(worker, env, &input)
        }
    };
    notes.extend(executed.notes);
    let step = heal::after_case(executed.raw.error.as_ref(), worker.is_unusable(), false);
    let judged = judge(executed.raw, class.settings_of(case).expect.as_ref(), env.arch);
    ((judged.reported, step), notes)
}

/// `c = a + b` on the device, then `d = c + a`: kernel A's output is kernel B's input.
fn chained(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let n = 1000;
    let a = ctx.random_f32s(n, -1.0, 1.0);
    let b = ctx.random_f32s(n, -1.0, 1.0);
    let da = ctx.upload_f32(&a)?;
    let db = ctx.alloc_f32(n)?;
    ctx.copy_in_f32(db, &b)?;
    let dc = ctx.alloc_f32(n)?;
    let dd = ctx.alloc_f32(n)?;
    ctx.launch(
        "vector_add",
        8,
        &[Arg::In(da), Arg::In(db), Arg::Out(dc), Arg::count(n)],
    )?;
    ctx.launch(
        "vector_add",
        4,
        &[Arg::In(dc), Arg::In(da), Arg::Out(dd), Arg::count(n)],
    )?;
    let c = ctx.copy_out_f32(dc)?;
    let d = ctx.copy_out_f32(dd)?;
    let want_c: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let want_d: Vec<f32> = want_c.iter().zip(&a).map(|(x, y)| x + y).collect();
    ctx.assert_close(&c, &want_c, 0.0, 0.0)
        .map_err(|f| f.context("c"))?;
    ctx.assert_close(&d, &want_d, 1e-6, 1e-6)
        .map_err(|f| f.context("d"))?;
    for buf in [da, db, dc, dd] {
        ctx.free(buf)?;
    }
    Ok(())
}

#[test]
fn every_context_operation_works_on_both_arches() {
    for arch in Arch::ALL {
        let mut c = card(arch, "");
        let class = ClassSpec::pooled("Ctx", rt());
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let probe = CaseSpec::host("probe", &["vector_add"], move |ctx| {
            use rand::Rng;
            let draw: u64 = ctx.rng().gen();
            log.lock().unwrap().push((
                ctx.arch(),
                ctx.device(),
                ctx.seed(),
                draw,
                ctx.case_id().to_owned(),
            ));
            assert_eq!(
                u128::from(ctx.timeouts().stream_sync_ms()),
                ctx.timeouts().stream_sync.as_millis()
            );
            let buf = ctx.upload(&[1, 2, 3, 4, 5])?;
            assert_eq!(buf.bytes(), 5);
            assert_eq!(ctx.copy_out(buf)?, [1, 2, 3, 4, 5]);
            ctx.copy_in(buf, &[9, 9])?;
            assert_eq!(
                ctx.copy_out(buf)?,
                [9, 9, 3, 4, 5],
                "a copy in writes from the start"
            );
            ctx.free(buf)?;
            chained(ctx)
        })
        .seed(42);
        let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
        for _ in 0..2 {
            let (run, step) = attempt(&mut worker, &mut c.env, &class, &probe);
            assert_eq!(run, CaseRun::passed(), "{arch}");
            assert_eq!(step, PoolStep::Keep);
        }
        assert_eq!(worker.live_buffers(), 0, "{arch}: everything freed");
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0], (arch, 0, 42, seen[0].3, "Ctx::probe".to_owned()));
        assert_eq!(
            seen[0], seen[1],
            "{arch}: the same seed gives the same draws in every attempt"
        );
        worker.close(&c.lease).unwrap();
    }
}

#[test]
fn a_device_error_in_a_host_body_keeps_its_type_and_retires_the_worker() {
    for arch in Arch::ALL {
        let mut c = card(arch, "dev=0:launch_fail@2");
        let class = ClassSpec::pooled("Ctx", rt());
        let case = CaseSpec::host("chain", &["vector_add"], chained);
        let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
        let (run, step) = attempt(&mut worker, &mut c.env, &class, &case);
        let e = run.error.expect("the second launch fails");
        assert_eq!(e.class, FailureClass::DeviceRuntime, "{arch}: {}", e.message);
        assert_eq!(e.code, Some(codes::RT_MEMORY_ALLOCATION), "{arch}");
        assert!(
            e.message.starts_with("launch vector_add: "),
            "{arch}: {}",
            e.message
        );
        assert_eq!(step, PoolStep::Retire, "{arch}: the lane retires the worker");
        assert!(worker.is_unusable());
        let report = worker.close(&c.lease).expect("the reset recovers the card");
        assert!(report.reset.is_some(), "{arch}: closing it force-resets the card");
        // The rebuilt worker runs the case clean (the plan's fault fired once).
        let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
        assert_eq!(
            attempt(&mut worker, &mut c.env, &class, &case).0,
            CaseRun::passed(),
            "{arch}"
        );
        worker.close(&c.lease).unwrap();
    }
}

#[test]
fn a_swallowed_device_error_is_still_the_attempts_device_fault() {
    let mut c = card(Arch::A5, "dev=0:launch_fail@1");
    let class = ClassSpec::pooled("Ctx", rt());
    let case = CaseSpec::host("swallow", &["vector_add"], |ctx| {
        let _ = chained(ctx);
        Ok(())
    });
    let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
    let (run, step) = attempt(&mut worker, &mut c.env, &class, &case);
    let e = run.error.expect("never hidden");
    assert_eq!(e.class, FailureClass::DeviceRuntime);
    assert_eq!(e.code, Some(codes::RT_MEMORY_ALLOCATION));
    assert!(
        e.message.contains("the body passed") && e.message.contains("never hidden"),
        "{}",
        e.message
    );
    assert_eq!(step, PoolStep::Retire);
    worker.close(&c.lease).unwrap();
}

#[test]
fn a_comparison_failure_is_a_result_and_keeps_the_worker() {
    let mut c = card(Arch::A2a3, "dev=0:corrupt@1");
    let class = ClassSpec::pooled("Ctx", rt());
    let case = CaseSpec::host("chain", &["vector_add"], chained);
    let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
    let (run, step) = attempt(&mut worker, &mut c.env, &class, &case);
    let e = run.error.expect("the corrupted output is caught");
    assert_eq!(e.class, FailureClass::Result);
    assert!(e.message.starts_with("c: golden mismatch: "), "{}", e.message);
    assert_eq!(step, PoolStep::Keep, "a wrong result never retires anything");
    assert_eq!(
        attempt(&mut worker, &mut c.env, &class, &case).0,
        CaseRun::passed()
    );
    assert_eq!(
        worker.live_buffers(),
        0,
        "the failed attempt's buffers were freed after it"
    );
    worker.close(&c.lease).unwrap();
}

#[test]
fn a_panic_fails_only_its_case_and_its_buffers_are_freed() {
    panic::install_hook();
    let mut c = card(Arch::A5, "");
    let class = ClassSpec::pooled("Ctx", rt());
    let boom = CaseSpec::host("boom", &["vector_add"], |ctx| {
        let _kept = ctx.alloc(4096)?;
        panic!("the body gave up at {}", 3);
    });
    let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
    let before = c.sim.stats().live_allocations;
    let (run, step) = attempt(&mut worker, &mut c.env, &class, &boom);
    let e = run.error.expect("a panic fails the attempt");
    assert_eq!(e.class, FailureClass::Result);
    assert!(
        e.message.contains("panicked at ") && e.message.ends_with("the body gave up at 3"),
        "{}",
        e.message
    );
    assert_eq!(step, PoolStep::Keep, "the pooled worker goes on");
    assert_eq!(
        c.sim.stats().live_allocations,
        before,
        "the panicking body's buffer was freed"
    );
    let next = CaseSpec::host("next", &["vector_add"], chained);
    assert_eq!(
        attempt(&mut worker, &mut c.env, &class, &next).0,
        CaseRun::passed()
    );
    worker.close(&c.lease).unwrap();
}

#[test]
fn buffers_a_body_forgets_are_freed_after_it() {
    for arch in Arch::ALL {
        let mut c = card(arch, "");
        let class = ClassSpec::pooled("Ctx", rt());
        let leak = CaseSpec::host("leak", &[], |ctx| {
            for _ in 0..5 {
                ctx.upload_f32(&[1.0; 256])?;
            }
            Ok(())
        });
        let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
        let before = c.sim.stats().live_allocations;
        assert_eq!(
            attempt(&mut worker, &mut c.env, &class, &leak).0,
            CaseRun::passed()
        );
        assert_eq!(
            c.sim.stats().live_allocations,
            before,
            "{arch}: the sim holds no leaked allocation"
        );
        assert_eq!(worker.live_buffers(), 0);
        worker.close(&c.lease).unwrap();
    }
}

#[test]
fn buffer_handles_are_checked_before_any_driver_call() {
    let mut c = card(Arch::A5, "");
    let class = ClassSpec::pooled("Ctx", rt());
    let kept = Arc::new(std::sync::Mutex::new(None));
    let keep = Arc::clone(&kept);
    let stash = CaseSpec::host("stash", &[], move |ctx| {
        let b = ctx.alloc(64)?;
        *keep.lock().unwrap() = Some(b);
        Ok(())
    });
    let mut old = ChipWorker::init(&c.env, &class.runtime).unwrap();
    assert_eq!(attempt(&mut old, &mut c.env, &class, &stash).0, CaseRun::passed());
    old.close(&c.lease).unwrap();
    let stale = kept.lock().unwrap().expect("stashed");

    let sim = Arc::clone(&c.sim);
    let misuse = CaseSpec::host("misuse", &["vector_add"], move |ctx| {
        let calls = sim.stats().calls;
        let usage = |r: Result<(), DeviceError>| match r {
            Err(e) if matches!(e.error(), RunError::Usage(_)) => Ok(e),
            other => Err(CaseFailure::result(format!("not refused as usage: {other:?}"))),
        };
        let e = usage(ctx.copy_in(stale, &[1]))?;
        assert!(
            matches!(e.error(), RunError::Usage(UsageError::ForeignBuffer { .. })),
            "{e}"
        );
        assert!(e.to_string().contains("closed or rebuilt worker"), "{e}");
        let b = ctx.alloc(8)?;
        let after_alloc = sim.stats().calls;
        usage(ctx.copy_in(b, &[0; 9]))?;
        ctx.free(b)?;
        let after_free = sim.stats().calls;
        let e = usage(ctx.free(b))?;
        assert!(
            matches!(e.error(), RunError::Usage(UsageError::FreedBuffer(_))),
            "{e}"
        );
        usage(ctx.launch("matmul", 1, &[]))?;
        usage(ctx.launch(
            "vector_add",
            1,
            &[Arg::In(stale), Arg::In(stale), Arg::Out(stale), Arg::count(1)],
        ))?;
        assert_eq!(
            sim.stats().calls,
            after_free,
            "no refused operation made a driver call"
        );
        assert!(after_alloc > calls && after_free > after_alloc);
        Ok(())
    });
    let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
    let (run, step) = attempt(&mut worker, &mut c.env, &class, &misuse);
    assert_eq!(run, CaseRun::passed(), "{:?}", run.error);
    assert_eq!(step, PoolStep::Keep);
    assert!(!worker.is_unusable(), "refusals leave the runner healthy");
    // `?` on a refusal fails the attempt with class usage.
    let refused = CaseSpec::host("refused", &[], move |ctx| Ok(ctx.copy_in(stale, &[1])?));
    let e = attempt(&mut worker, &mut c.env, &class, &refused)
        .0
        .error
        .unwrap();
    assert_eq!(e.class, FailureClass::Usage);
    worker.close(&c.lease).unwrap();
}

/// A class whose fixture counts its host and device builds: the host data is a table of
/// weights; the device part uploads it once per worker.
fn weighted(host_builds: &Arc<AtomicUsize>, device_builds: &Arc<AtomicUsize>) -> ClassSpec {
    let (h, d) = (Arc::clone(host_builds), Arc::clone(device_builds));
    let fixture = Fixture::new(move |info: &SetupInfo| {
        h.fetch_add(1, Ordering::SeqCst);
        Ok((0..256)
            .map(|i| (i as f32) * 0.5 + (info.seed % 7) as f32)
            .collect::<Vec<f32>>())
    })
    .device(move |ctx: &mut CaseCtx<'_>, w: &Vec<f32>| {
        d.fetch_add(1, Ordering::SeqCst);
        Ok(ctx.upload_f32(w)?)
    });
    let add = |name: &str| {
        CaseSpec::host(name, &["vector_add"], |ctx| {
            let w = ctx.fixture::<Vec<f32>>()?;
            let dw = *ctx.device_fixture::<DeviceBuffer>()?;
            let out = ctx.alloc_f32(w.len())?;
            ctx.launch(
                "vector_add",
                4,
                &[Arg::In(dw), Arg::In(dw), Arg::Out(out), Arg::count(w.len())],
            )?;
            let got = ctx.copy_out_f32(out)?;
            let want: Vec<f32> = w.iter().map(|x| x * 2.0).collect();
            ctx.assert_close(&got, &want, 0.0, 0.0)
        })
    };
    ClassSpec::pooled("Weighted", rt())
        .fixture(fixture)
        .cases([add("one"), add("two"), add("three")])
}

#[test]
fn a_fixture_is_built_once_per_lane_and_its_device_part_again_after_a_fault() {
    let (host, device) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let class = weighted(&host, &device);
    // The second case's launch hangs until the op-timeout reaps it: the worker is retired.
    let mut c = card(Arch::A5, "dev=0:op_timeout@2");
    let mut lane = HostFixtures::default();
    let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
    let ((first, _), notes) = attempt_with(&mut worker, &mut c.env, &mut lane, &class, &class.cases[0]);
    assert_eq!(first, CaseRun::passed(), "{:?}", first.error);
    let parts: Vec<FixturePart> = notes.iter().map(|n| n.part).collect();
    assert_eq!(parts, [FixturePart::Host, FixturePart::Device]);
    assert_eq!(
        worker.live_buffers(),
        1,
        "the fixture's buffer belongs to the worker, the case's was freed"
    );
    let ((second, step), notes) = attempt_with(&mut worker, &mut c.env, &mut lane, &class, &class.cases[1]);
    assert_eq!(second.class(), Some(FailureClass::DeviceRuntime));
    assert!(notes.is_empty(), "nothing rebuilt on the same worker");
    assert_eq!(step, PoolStep::Retire);
    assert_eq!(
        worker.live_buffers(),
        2,
        "on the faulted card nothing is freed: finalize abandons it"
    );
    worker.close(&c.lease).unwrap();
    let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
    let ((third, _), notes) = attempt_with(&mut worker, &mut c.env, &mut lane, &class, &class.cases[2]);
    assert_eq!(third, CaseRun::passed(), "{:?}", third.error);
    assert_eq!(
        notes.iter().map(|n| n.part).collect::<Vec<_>>(),
        [FixturePart::Device]
    );
    assert_eq!(host.load(Ordering::SeqCst), 1, "host data: once in the lane");
    assert_eq!(
        device.load(Ordering::SeqCst),
        2,
        "device resources: again on the rebuilt worker"
    );
    worker.close(&c.lease).unwrap();
}

#[test]
fn an_expected_device_fault_passes_and_still_retires_the_worker() {
    let mut c = card(Arch::A2a3, "");
    let class = ClassSpec::standalone("Hang", rt());
    let hang = CaseSpec::host("hang", &["hang"], |ctx| Ok(ctx.launch("hang", 1, &[])?))
        .expect_failure("the kernel hangs", crate::case::Expected::OpTimeout);
    let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
    let (run, step) = attempt(&mut worker, &mut c.env, &class, &hang);
    assert_eq!(run.outcome, AttemptOutcome::Passed, "{:?}", run.error);
    assert_eq!(
        step,
        PoolStep::Retire,
        "the expected fault heals the card as any fault does"
    );
    assert!(worker.close(&c.lease).unwrap().reset.is_some());
    // The same expectation on a case that passes fails.
    let quiet = CaseSpec::host("quiet", &["noop"], |ctx| Ok(ctx.launch("noop", 1, &[])?))
        .expect_failure("the kernel hangs", crate::case::Expected::OpTimeout);
    let mut worker = ChipWorker::init(&c.env, &class.runtime).unwrap();
    let (run, step) = attempt(&mut worker, &mut c.env, &class, &quiet);
    let e = run.error.expect("no failure happened");
    assert_eq!(e.class, FailureClass::Result);
    assert!(
        e.message.starts_with("expected failure did not happen"),
        "{}",
        e.message
    );
    assert_eq!(step, PoolStep::Keep);
    worker.close(&c.lease).unwrap();
}
