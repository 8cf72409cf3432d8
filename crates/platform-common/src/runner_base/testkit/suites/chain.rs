//! The containment chain's edges on the simulated card: drain false negatives, failing force
//! resets and probes, SDMA runners, leases, golden mismatches, launch failures, teardown.

use std::sync::Arc;

use crate::driver::{Driver, DriverCall};
use crate::error::{codes, DriverError, FailureClass};
use crate::health::{DrainReport, HealthEventKind, HealthState};
use crate::runner_base::{FinalizeError, ProbeResult, RunArg, RunError, RunRequest, UsageError, WrongLease};
use crate::sim::card_state;

use super::super::{
    compute_case, hang_request, noop_request, run_case, trigger_then_recover, CaseOutcome, RecoveryOptions,
    RecoveryProbe, Trigger,
};
use super::{ArchUnderTest, CARD, ITERATIONS};

fn recover(t: &ArchUnderTest, plan: &str, trigger: Trigger, sdma: bool) -> RecoveryProbe {
    let b = t.bench(plan);
    trigger_then_recover(&b, CARD, trigger, RecoveryOptions { sdma }).unwrap()
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
            drain: DrainReport::Failed
        }
    );
    assert!(
        marked.detail.contains(&t.drain_error.raw.to_string()),
        "{}",
        marked.detail
    );
}

/// `force_reset_fail=2`: the first two force resets fail, the third attempt confirms.
pub fn force_reset_fail_2_third_attempt_confirms(t: &ArchUnderTest) {
    let p = recover(t, "dev=2:force_reset_fail=2", Trigger::Hang, false);
    let reset = p.finalize.as_ref().unwrap().reset.clone().unwrap();
    assert_eq!(reset.attempts.len(), 3);
    for a in &reset.attempts[..2] {
        assert_ne!(a.rc, 0);
        assert_eq!(a.reset_error.map(|e| e.call), Some(DriverCall::ResetDeviceForce));
        assert_eq!(a.probe, ProbeResult::NotRun);
    }
    assert_eq!(reset.attempts[2].rc, 0);
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
    assert_eq!((failed.device, failed.arch), (CARD, t.arch));
    assert_eq!(failed.first_cause, Some(t.op_timeout));
    assert_eq!(failed.attempts.len(), 3);
    assert!(failed.attempts.iter().all(|a| a.rc != 0 && !a.confirmed()));
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
    assert_eq!(init.error.code, codes::RT_DRV_INTERNAL_ERROR);
}

/// An SDMA runner makes one force-reset attempt only: with one failing reset it gives up, where
/// a normal runner confirms on its second attempt.
pub fn sdma_runner_makes_one_attempt_only(t: &ArchUnderTest) {
    let sdma = recover(t, "dev=2:force_reset_fail=1", Trigger::Hang, true);
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
    assert_eq!(first.rc, 0);
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

/// Finalize of a faulted runner never synchronises an error-state stream (the sim counts such
/// syncs), so it never waits out the stream-sync timeout.
pub fn finalize_of_a_faulted_runner_never_syncs_an_error_state_stream(t: &ArchUnderTest) {
    let b = t.bench("");
    let stream_sync = b.sim.timeouts.stream_sync;
    for (trigger, plan) in [(Trigger::Hang, ""), (Trigger::Compute, "dev=2:launch_fail@1")] {
        b.start_run(&[CARD], plan).unwrap();
        let p = trigger_then_recover(&b, CARD, trigger, RecoveryOptions::default()).unwrap();
        assert!(p.unusable_after_trigger);
        assert_eq!(p.finalize_error_state_syncs, 0);
        assert!(
            p.finalize_took < stream_sync,
            "finalize took {:?}",
            p.finalize_took
        );
        assert!(p.recovered(), "{p:?}");
    }
    // The counter does see such a sync: after the op-timeout the AICPU stream is in error state,
    // and syncing it blocks for the whole timeout.
    b.start_run(&[CARD], "").unwrap();
    let process = b.process();
    let driver: Arc<dyn Driver> = process.clone();
    let mut runner = (t.factory)(driver, b.config(CARD, None).unwrap()).unwrap();
    runner.register_kernel(&b.kernel("hang").unwrap()).unwrap();
    assert!(runner.run(&hang_request()).is_err());
    let aicpu = runner.base().streams().aicpu;
    assert!(process.synchronize_stream_with_timeout(aicpu, 30).is_err());
    assert_eq!(process.stats().error_state_syncs, 1);
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
            arch: t.arch,
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
    let err = (t.factory)(process, b.config(CARD, None).unwrap()).unwrap_err();
    assert_eq!((err.device, err.arch), (CARD, t.arch));
    assert_eq!(err.error.call, DriverCall::SetDevice);
    assert_eq!(err.class(), FailureClass::DeviceRuntime);
}
