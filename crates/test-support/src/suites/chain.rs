//! The containment chain's edges on the simulated card: drain false negatives, failing force
//! resets and probes, SDMA runners, leases, golden mismatches, launch failures, teardown, bad
//! timeouts, runners moved between threads, a second runner meeting a poisoned context, and the
//! post-case health check.

use std::sync::Arc;
use std::time::Duration;

use platform_common::driver::{Driver, DriverCall};
use platform_common::error::{codes, DriverError, FailureClass};
use platform_common::health::{DrainOutcome, DrainReport, HealthEventKind, HealthState};
use platform_common::runner_base::{
    FinalizeError, InitError, ProbeResult, RunArg, RunError, RunRequest, RunnerConfig, UsageError, WrongLease,
};
use platform_common::sim::{card_state, CurrentDevice, SimDriver};
use platform_common::timeouts::{TimeoutError, TimeoutProfile, Timeouts};

use super::{ArchUnderTest, CARD, ITERATIONS};
use crate::bench::{compute_case, hang_request, noop_request, run_case, CaseOutcome};
use crate::measure::{trigger_then_recover, RecoveryOptions, RecoveryProbe, Trigger};

fn recover(t: &ArchUnderTest, plan: &str, trigger: Trigger, sdma: bool) -> RecoveryProbe {
    let b = t.bench(plan);
    let opts = RecoveryOptions {
        sdma,
        ..RecoveryOptions::default()
    };
    trigger_then_recover(&b, CARD, trigger, opts).unwrap()
}

/// Drain false negative: the drain reports success on the poisoned card, the runner is still
/// marked unusable, the reset still runs, and recovery still succeeds, 10/10.
pub fn drain_false_negative_still_marks_unusable_and_recovers_10_of_10(t: &ArchUnderTest) {
    let b = t.bench("dev=2:drain=false_negative");
    let mut recovered = 0;
    for _ in 0..ITERATIONS {
        b.start_run(&[CARD], "dev=2:drain=false_negative").unwrap();
        let p = trigger_then_recover(&b, CARD, Trigger::Hang, RecoveryOptions::default()).unwrap();
        assert!(
            p.unusable_after_trigger,
            "a drain reporting success must not keep the runner usable"
        );
        assert!(p.events.iter().any(|e| e.kind
            == HealthEventKind::MarkedUnusable {
                drain: DrainReport::ReportedSuccess
            }));
        let reset = p
            .finalize
            .as_ref()
            .unwrap()
            .reset
            .clone()
            .expect("the reset still runs");
        assert_eq!(reset.attempts.len(), 1);
        assert!(reset.attempts[0].confirmed());
        assert!(p.recovered(), "{p:?}");
        recovered += 1;
    }
    assert_eq!(recovered, ITERATIONS);
}

/// Without the false negative, the marking drain fails with the arch's drain code.
pub fn drain_on_a_poisoned_card_fails_with_the_arch_code(t: &ArchUnderTest) {
    let p = recover(t, "", Trigger::Hang, false);
    let marked = p
        .events
        .iter()
        .find(|e| e.kind_name() == "marked_unusable")
        .unwrap();
    assert_eq!(
        marked.kind,
        HealthEventKind::MarkedUnusable {
            drain: DrainReport::Failed { code: t.drain_error }
        }
    );
}

/// `force_reset_fail=2`: the first two force resets fail, the third attempt confirms.
pub fn force_reset_fail_2_third_attempt_confirms(t: &ArchUnderTest) {
    let p = recover(t, "dev=2:force_reset_fail=2", Trigger::Hang, false);
    let reset = p.finalize.as_ref().unwrap().reset.clone().unwrap();
    assert_eq!(reset.attempts.len(), 3);
    for a in &reset.attempts[..2] {
        assert_ne!(a.rc, Some(0));
        assert_eq!(a.rc, a.reset_error.map(|e| e.code.raw), "an ACL code is its rc");
        assert_eq!(a.reset_error.map(|e| e.call), Some(DriverCall::ResetDeviceForce));
        assert_eq!(a.probe, ProbeResult::NotRun);
    }
    assert_eq!(reset.attempts[2].rc, Some(0));
    assert_eq!(reset.attempts[2].probe, ProbeResult::Confirmed);
    assert_eq!(
        reset.attempts.iter().map(|a| a.attempt).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(p.recovered(), "{p:?}");
}

/// `force_reset_fail=3`: finalize returns the typed error with all three attempts, and the card
/// stays poisoned in this process (a new runner cannot init there).
pub fn force_reset_fail_3_is_a_typed_error_with_three_attempts(t: &ArchUnderTest) {
    let p = recover(t, "dev=2:force_reset_fail=3", Trigger::Hang, false);
    let Err(FinalizeError::ResetFailed(failed)) = &p.finalize else {
        panic!("expected ResetFailed, got {:?}", p.finalize);
    };
    assert_eq!((failed.device, failed.arch), (CARD, t.arch()));
    assert_eq!(failed.first_cause, Some(t.op_timeout));
    assert_eq!(failed.attempts.len(), 3);
    assert!(failed.attempts.iter().all(|a| a.rc != Some(0) && !a.confirmed()));
    assert_eq!(
        p.finalize.as_ref().unwrap_err().class(),
        FailureClass::DeviceRuntime
    );
    assert!(failed.to_string().contains("3 attempt"), "{failed}");
    let last = p.events.last().unwrap();
    assert_eq!(last.kind, HealthEventKind::ResetFailed { attempts: 3 });
    assert!(!p.events.iter().any(|e| e.kind_name() == "recovered"));
    assert!(
        p.sticky_after_finalize.is_some(),
        "the flag stays: the context is still poisoned"
    );
    let init = p.rebuilt.clone().unwrap().unwrap_err();
    assert_eq!(
        init.driver_error().map(|e| e.code),
        Some(codes::RT_DRV_INTERNAL_ERROR)
    );
}

/// An SDMA runner makes one force-reset attempt only: with one failing reset it gives up, where
/// a normal runner confirms on its second attempt.
pub fn sdma_runner_makes_one_attempt_only(t: &ArchUnderTest) {
    let sdma = recover(t, "dev=2:force_reset_fail=1", Trigger::Hang, true);
    assert_eq!(
        sdma.finalize.clone().unwrap_err().class(),
        FailureClass::DeviceRuntime
    );
    let Err(FinalizeError::ResetFailed(failed)) = &sdma.finalize else {
        panic!("expected ResetFailed, got {:?}", sdma.finalize);
    };
    assert_eq!(failed.attempts.len(), 1);
    let normal = recover(t, "dev=2:force_reset_fail=1", Trigger::Hang, false);
    assert_eq!(normal.finalize.unwrap().reset.unwrap().attempts.len(), 2);
    let clean_sdma = recover(t, "", Trigger::Hang, true);
    assert_eq!(
        clean_sdma
            .finalize
            .as_ref()
            .unwrap()
            .reset
            .as_ref()
            .unwrap()
            .attempts
            .len(),
        1
    );
    assert!(clean_sdma.recovered());
}

/// `probe_fail=1`: the first reset returns 0 but its probe fails, so that attempt does not count;
/// the second is confirmed.
pub fn probe_fail_1_first_attempt_not_confirmed_although_reset_rc_0(t: &ArchUnderTest) {
    let p = recover(t, "dev=2:probe_fail=1", Trigger::Hang, false);
    let reset = p.finalize.as_ref().unwrap().reset.clone().unwrap();
    assert_eq!(reset.attempts.len(), 2);
    let first = reset.attempts[0];
    assert_eq!(first.rc, Some(0));
    assert!(matches!(first.probe, ProbeResult::Failed(_)), "{first:?}");
    assert!(!first.confirmed());
    assert!(reset.attempts[1].confirmed());
    assert!(p.events.iter().any(|e| e.kind
        == HealthEventKind::Probe {
            attempt: 1,
            ok: false
        }));
    assert!(p.recovered(), "{p:?}");
}

/// A lease of another card is refused with a typed error before any force reset.
pub fn wrong_card_lease_is_refused(t: &ArchUnderTest) {
    let b = t.bench("");
    let other = CARD + 1;
    let process = b.process();
    let mut runner = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    assert!(runner.run(&hang_request()).is_err());
    let wrong = b.lease(other).unwrap();
    let err = runner.finalize(&wrong).unwrap_err();
    assert_eq!(
        err,
        FinalizeError::WrongLease(WrongLease {
            runner_device: CARD,
            lease_card: other
        })
    );
    assert_eq!(process.stats().force_resets_ok, 0);
    assert_eq!(card_state(&b.sim, CARD).unwrap().counters.force_resets, 0);
    assert!(process.sticky_error(CARD).is_some(), "nothing was reset");
}

/// A golden mismatch (`corrupt@1`) is the caller's finding, never a device error: the runner
/// stays healthy and the next case passes.
pub fn golden_mismatch_never_marks_the_runner_unusable(t: &ArchUnderTest) {
    let b = t.bench("dev=2:corrupt@1");
    let process = b.process();
    let lease = b.lease(CARD).unwrap();
    let mut runner = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    let first = run_case(runner.as_mut(), &compute_case(1));
    assert!(matches!(first, CaseOutcome::Mismatch(_)), "{first:?}");
    assert!(!runner.is_unusable());
    assert_eq!(runner.health(), HealthState::Healthy);
    assert_eq!(run_case(runner.as_mut(), &compute_case(2)), CaseOutcome::Passed);
    let report = runner.finalize(&lease).unwrap();
    assert!(report.reset.is_none());
    assert!(report.teardown_errors.is_empty(), "{:?}", report.teardown_errors);
}

/// The post-case health check: on a healthy card it passes and moves no case-launch counter (its
/// `noop` is internal); after `poison_after@1` (a case that passed, nothing of it failed) it fails
/// at its first call, which reports the asynchronous exception (507018), marks the runner unusable through the fail-fast chain
/// (the next run is refused at the guard), and finalize's force reset recovers the card.
pub fn health_check_catches_a_poison_left_by_a_passing_case(t: &ArchUnderTest) {
    let b = t.bench("");
    let process = b.process();
    let lease = b.lease(CARD).unwrap();
    let mut runner = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    assert_eq!(run_case(runner.as_mut(), &compute_case(1)), CaseOutcome::Passed);
    for _ in 0..3 {
        runner.health_check().unwrap();
    }
    assert!(!runner.is_unusable());
    let counters = card_state(&b.sim, CARD).unwrap().counters;
    assert_eq!(counters.case_launches, 1, "the check's launches are internal");
    assert!(counters.internal_launches >= 3, "{counters:?}");
    runner.finalize(&lease).unwrap();

    b.start_run(&[CARD], "dev=2:poison_after@1").unwrap();
    let mut runner = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    assert_eq!(run_case(runner.as_mut(), &compute_case(1)), CaseOutcome::Passed);
    assert!(!runner.is_unusable(), "nothing of the case itself failed");
    let e = runner.health_check().unwrap_err();
    assert_eq!(
        e,
        RunError::Device(DriverError::new(
            DriverCall::CreateStream,
            codes::RT_AICPU_EXCEPTION
        ))
    );
    assert!(runner.is_unusable());
    assert!(matches!(runner.health_check(), Err(RunError::Unusable(_))));
    assert!(matches!(
        run_case(runner.as_mut(), &compute_case(2)),
        CaseOutcome::Error(RunError::Unusable(_))
    ));
    let report = runner.finalize(&lease).unwrap();
    let reset = report.reset.expect("an unusable runner is force-reset");
    assert!(reset.attempts.last().unwrap().confirmed(), "{reset:?}");
}

/// `launch_fail@1=207001` behaves like the seed's trigger: the launch error marks the runner
/// unusable, the next run is refused, finalize recovers the card.
pub fn launch_fail_207001_behaves_like_the_seed_trigger(t: &ArchUnderTest) {
    let p = recover(t, "dev=2:launch_fail@1=207001", Trigger::Compute, false);
    let launch = DriverError::new(DriverCall::LaunchAicore, codes::RT_MEMORY_ALLOCATION);
    assert_eq!(p.trigger, Err(RunError::Device(launch)));
    assert_eq!(
        p.trigger.as_ref().unwrap_err().class(),
        FailureClass::DeviceRuntime
    );
    assert!(p.unusable_after_trigger);
    let Err(RunError::Unusable(u)) = &p.refused_noop else {
        panic!("{:?}", p.refused_noop);
    };
    assert_eq!(u.first_cause, launch);
    assert_eq!(p.events[0].kind, HealthEventKind::Poisoned);
    assert_eq!(p.events[0].code, Some(codes::RT_MEMORY_ALLOCATION));
    assert!(p.recovered(), "{p:?}");
}

/// The probe kernel's stream syncs: its AICPU stream, then its AICore stream (both created by
/// the probe after the force reset).
const PROBE_KERNEL_STREAM_SYNCS: u64 = 2;

/// Finalize of a faulted runner never synchronises an error-state stream (the sim counts such
/// syncs), so it never waits out the stream-sync timeout. Counted per call, finalize syncs no
/// stream of the faulted runner at all (neither the error-state AICPU stream nor the AICore
/// stream, which was never synced and so is not counted as error-state): with a streams-only
/// probe it makes zero `aclrtSynchronizeStreamWithTimeout` calls, with the `noop` probe exactly
/// the probe kernel's own two.
pub fn finalize_of_a_faulted_runner_never_syncs_an_error_state_stream(t: &ArchUnderTest) {
    let b = t.bench("");
    let stream_sync = b.sim.timeouts.stream_sync;
    for (trigger, plan) in [(Trigger::Hang, ""), (Trigger::Compute, "dev=2:launch_fail@1")] {
        b.start_run(&[CARD], plan).unwrap();
        let p = trigger_then_recover(&b, CARD, trigger, RecoveryOptions::default()).unwrap();
        assert!(p.unusable_after_trigger);
        assert_eq!(p.finalize_error_state_syncs, 0);
        assert_eq!(
            p.finalize_stream_syncs, PROBE_KERNEL_STREAM_SYNCS,
            "only the probe kernel's own streams are synced"
        );
        assert!(
            p.finalize_took < stream_sync,
            "finalize took {:?}",
            p.finalize_took
        );
        assert!(p.recovered(), "{p:?}");
        b.start_run(&[CARD], plan).unwrap();
        let streams_only = RecoveryOptions {
            streams_only_probe: true,
            ..RecoveryOptions::default()
        };
        let p = trigger_then_recover(&b, CARD, trigger, streams_only).unwrap();
        assert!(p.unusable_after_trigger);
        assert_eq!(
            p.finalize_stream_syncs, 0,
            "teardown and reset synchronise no stream"
        );
        assert_eq!(p.finalize_error_state_syncs, 0);
        assert!(p.recovered(), "{p:?}");
    }
    // The counter does see such a sync: after the op-timeout the AICPU stream is in error state,
    // and syncing it blocks for the whole timeout.
    b.start_run(&[CARD], "").unwrap();
    let process = b.process();
    let driver: Arc<dyn Driver> = process.clone();
    let mut runner = (t.entry.init_runner)(driver, b.config(CARD, None).unwrap()).unwrap();
    runner.register_kernel(&b.kernel("hang").unwrap()).unwrap();
    assert!(runner.run(&hang_request()).is_err());
    let aicpu = runner.base().streams().aicpu;
    let syncs = process.stats().calls_of(DriverCall::SynchronizeStreamWithTimeout);
    assert!(process.synchronize_stream_with_timeout(aicpu, 30).is_err());
    assert_eq!(process.stats().error_state_syncs, 1);
    assert_eq!(
        process.stats().calls_of(DriverCall::SynchronizeStreamWithTimeout),
        syncs + 1
    );
}

/// A block dim over the arch's limit is a usage error found before any driver call, and leaves
/// the runner healthy.
pub fn block_dim_over_the_arch_limit_is_a_usage_error(t: &ArchUnderTest) {
    let b = t.bench("");
    let process = b.process();
    let mut runner = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    let before = process.stats().calls;
    let req = RunRequest::new("noop", t.over_limit_block_dim, Vec::new());
    let err = runner.run(&req).unwrap_err();
    assert_eq!(
        err,
        RunError::Usage(UsageError::BlockDimOverArchLimit {
            block_dim: t.over_limit_block_dim,
            arch: t.arch(),
            limit: t.over_limit_block_dim - 1
        })
    );
    assert_eq!(err.class(), FailureClass::Usage);
    let unknown = runner.run(&RunRequest::new("nope", 1, Vec::new())).unwrap_err();
    assert_eq!(unknown, RunError::Usage(UsageError::UnknownKernel("nope".into())));
    let args = runner
        .run(&RunRequest::new("vector_add", 1, vec![RunArg::Scalar(1)]))
        .unwrap_err();
    assert!(matches!(
        args,
        RunError::Usage(UsageError::ArgCount {
            expected: 4,
            got: 1,
            ..
        })
    ));
    assert_eq!(process.stats().calls, before, "usage errors make no driver call");
    assert!(!runner.is_unusable());
    assert!(runner.run(&noop_request()).is_ok());
}

/// Once unusable, kernel registration is refused at the guard too (no driver call).
pub fn registration_is_refused_once_unusable(t: &ArchUnderTest) {
    let b = t.bench("");
    let process = b.process();
    let mut runner = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    assert!(runner.run(&hang_request()).is_err());
    let before = process.stats().calls;
    let err = runner
        .register_kernel(&b.kernel("vector_add").unwrap())
        .unwrap_err();
    assert!(matches!(err, RunError::Unusable(_)), "{err:?}");
    assert_eq!(process.stats().calls, before);
}

/// A card whose every init fails (`dead`) gives a typed init error, not a panic or a case error.
pub fn init_on_a_dead_card_is_a_typed_init_error(t: &ArchUnderTest) {
    let b = t.bench("dev=2:dead");
    let process = b.process();
    let err = (t.entry.init_runner)(process, b.config(CARD, None).unwrap()).unwrap_err();
    assert_eq!((err.device(), err.arch()), (CARD, t.arch()));
    assert_eq!(err.driver_error().map(|e| e.call), Some(DriverCall::SetDevice));
    assert_eq!(err.class(), FailureClass::DeviceRuntime);
}

/// Timeouts that break the ordering (scheduler 900 ms, op-execute 800 ms, stream-sync 10 ms) are
/// a typed init error naming the rule, refused before any driver call; the simulator's runner is
/// held to the sim rules, so sim-valid timeouts that break only the real-card margin are fine.
pub fn bad_timeouts_are_a_typed_init_error_before_any_driver_call(t: &ArchUnderTest) {
    let b = t.bench("");
    let process = b.process();
    let bad = Timeouts {
        scheduler: Duration::from_millis(900),
        op_execute: Duration::from_millis(800),
        stream_sync: Duration::from_millis(10),
    };
    let err = (t.entry.init_runner)(process.clone(), RunnerConfig::new(CARD, bad)).unwrap_err();
    let InitError::Timeouts {
        device,
        arch,
        profile,
        error,
    } = &err
    else {
        panic!("expected a timeouts error, got {err:?}");
    };
    assert_eq!((*device, *arch, *profile), (CARD, t.arch(), TimeoutProfile::Sim));
    assert!(
        matches!(
            error,
            TimeoutError::Ordering {
                rule: "scheduler < op-execute",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(err.to_string().contains("scheduler < op-execute"), "{err}");
    assert_eq!(err.class(), FailureClass::Usage);
    assert_eq!(err.driver_error(), None);
    assert_eq!(process.stats().calls, 0, "refused before any driver call");
    let out_of_order = Timeouts {
        scheduler: Duration::from_millis(20),
        op_execute: Duration::from_millis(800),
        stream_sync: Duration::from_millis(700),
    };
    let err = (t.entry.init_runner)(process.clone(), RunnerConfig::new(CARD, out_of_order)).unwrap_err();
    assert!(
        matches!(
            err,
            InitError::Timeouts {
                error: TimeoutError::Ordering {
                    rule: "op-execute < stream-sync",
                    ..
                },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(process.stats().calls, 0);
    // Sim rules only: 250 ms of stream-sync is fine on the simulator, margin or not.
    let sim_only = Timeouts {
        scheduler: Duration::from_millis(20),
        op_execute: Duration::from_millis(60),
        stream_sync: Duration::from_millis(250),
    };
    assert!(sim_only.validate(TimeoutProfile::Real).is_err());
    let runner = (t.entry.init_runner)(process.clone(), RunnerConfig::new(CARD, sim_only)).unwrap();
    assert!(!runner.is_unusable());
}

/// A runner moved to another thread keeps working: every run (and the reset path) makes its card
/// current on the calling thread first. The driver here keeps the current device per thread, as
/// CANN does, so without that every call would fail with 107002.
pub fn a_runner_moved_to_another_thread_still_runs_and_recovers(t: &ArchUnderTest) {
    let b = t.bench("");
    let process = Arc::new(SimDriver::new(b.sim.clone()).with_current_device(CurrentDevice::PerThread));
    let lease = b.lease(CARD).unwrap();
    let mut runner = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    runner = std::thread::scope(|s| {
        s.spawn(move || {
            assert_eq!(run_case(runner.as_mut(), &compute_case(5)), CaseOutcome::Passed);
            assert!(runner.run(&noop_request()).is_ok());
            runner
        })
        .join()
        .unwrap()
    });
    runner = std::thread::scope(|s| {
        s.spawn(move || {
            let hang = runner.run(&hang_request());
            assert_eq!(hang, Err(RunError::Device(t.op_timeout)), "not 107002");
            runner
        })
        .join()
        .unwrap()
    });
    let lease = &lease;
    let report = std::thread::scope(|s| s.spawn(move || runner.finalize(lease)).join().unwrap()).unwrap();
    let reset = report.reset.unwrap();
    assert_eq!(reset.attempts.len(), 1);
    let poisoned_drain = DriverError::new(DriverCall::SynchronizeDeviceWithTimeout, t.drain_error);
    assert_eq!(
        reset.attempts[0].drain,
        DrainOutcome::Failed(poisoned_drain),
        "the pre-reset drain reached the poisoned card, not a thread without a current one"
    );
    assert_eq!(reset.attempts[0].probe, ProbeResult::Confirmed);
}

/// A second runner of the same process on a card another runner poisoned has no fault of its
/// own to refuse on: its run meets the cascade where the seed's worker did (a5: `halResMap`
/// rc=62 at register mapping; a2a3: `aclrtMalloc` 507899 at its first buffer) and goes through
/// the chain.
pub fn a_second_runner_on_a_poisoned_context_fails_where_the_seed_did(t: &ArchUnderTest) {
    let b = t.bench("");
    let process = b.process();
    let mut first = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    let mut second = b.runner(&process, b.config(CARD, None).unwrap()).unwrap();
    assert_eq!(first.run(&hang_request()), Err(RunError::Device(t.op_timeout)));
    assert!(!second.is_unusable());
    let err = second.run(&RunRequest::from(&compute_case(9))).unwrap_err();
    assert_eq!(err, RunError::Device(t.cascade_surface));
    assert!(second.is_unusable());
    assert_eq!(second.first_cause(), Some(t.cascade_surface));
}
