//! The seed's tables, reproduced on the simulated card, each row iterated as the seed did (10x).

use platform_common::driver::DriverCall;
use platform_common::error::{codes, DriverError};
use platform_common::health::HealthEventKind;
use platform_common::runner_base::{ProbeResult, RunError};

use super::{ArchUnderTest, CARD, ITERATIONS};
use crate::bins::sim_helper;
use crate::helper::{run_helper, HelperMode, HELPER_EXPECTED};
use crate::measure::{
    guarded_hang_then_noop, raw_hang_then_noop, soft_reset_then_reinit, trigger_then_recover,
    RecoveryOptions, Trigger,
};

/// Within-process probe, raw driver: hang then noop on one context cascades 10/10, and the noop
/// fails at the arch's surfacing call.
pub fn raw_driver_hang_then_noop_cascades_10_of_10(t: &ArchUnderTest) {
    let b = t.bench("");
    let mut cascades = 0;
    for _ in 0..ITERATIONS {
        let p = raw_hang_then_noop(&b, CARD).unwrap();
        assert_eq!(p.hang, Err(t.op_timeout));
        assert_eq!(p.noop, Err(t.cascade_surface));
        cascades += usize::from(p.cascaded());
    }
    assert_eq!(cascades, ITERATIONS);
}

/// Same with the runner: the noop is refused at the guard with a typed `Unusable` and no driver
/// call, 10/10.
pub fn runner_refuses_noop_at_the_guard_10_of_10(t: &ArchUnderTest) {
    let b = t.bench("");
    let mut refused = 0;
    for _ in 0..ITERATIONS {
        let p = guarded_hang_then_noop(&b, CARD).unwrap();
        assert_eq!(p.hang, Err(RunError::Device(t.op_timeout)));
        assert!(p.unusable);
        let Err(RunError::Unusable(u)) = &p.noop else {
            panic!("noop not refused at the guard: {:?}", p.noop);
        };
        assert_eq!((u.device, u.arch, u.first_cause), (CARD, t.arch(), t.op_timeout));
        assert_eq!(p.noop_driver_calls, 0, "the guard made a driver call");
        refused += 1;
    }
    assert_eq!(refused, ITERATIONS);
}

/// The refusal names the card, the first cause (call, code, code name) and what happens next.
pub fn unusable_message_names_card_cause_and_next_step(t: &ArchUnderTest) {
    let b = t.bench("");
    let p = guarded_hang_then_noop(&b, CARD).unwrap();
    let msg = p.noop.unwrap_err().to_string();
    for part in [
        "card 2",
        "aclrtSynchronizeStreamWithTimeout",
        &t.op_timeout.code.raw.to_string(),
        t.op_timeout.code.name(),
        "finalize",
        "force-resets",
    ] {
        assert!(msg.contains(part), "{part:?} missing from {msg:?}");
    }
}

/// Cascade variant: hang in one process, then the compute case in another, 10x: 0/10 cascades.
/// Half the hang processes finalize (force reset), half just exit.
pub fn hang_in_one_process_then_compute_in_another_0_of_10(t: &ArchUnderTest) {
    let b = t.bench("");
    let helper = sim_helper().unwrap();
    let helper = helper.as_path();
    let mut cascades = 0;
    for i in 0..ITERATIONS {
        let mode = if i % 2 == 0 {
            HelperMode::HangThenExit
        } else {
            HelperMode::HangThenFinalize
        };
        let (code, out) = run_helper(helper, mode, &b, CARD).unwrap();
        assert_eq!(code, Some(i32::from(HELPER_EXPECTED)), "hang process: {out}");
        assert!(out.contains(&t.op_timeout.to_string()), "{out}");
        let (code, out) = run_helper(helper, HelperMode::Compute, &b, CARD).unwrap();
        assert!(out.starts_with("compute:"), "{out}");
        if code != Some(i32::from(HELPER_EXPECTED)) {
            cascades += 1;
        }
    }
    assert_eq!(cascades, 0);
}

/// Control: the compute case alone, each in its own process, 10x: 0/10 failures.
pub fn compute_alone_0_of_10(t: &ArchUnderTest) {
    let b = t.bench("");
    let helper = sim_helper().unwrap();
    let mut failures = 0;
    for _ in 0..ITERATIONS {
        let (code, out) = run_helper(&helper, HelperMode::Compute, &b, CARD).unwrap();
        assert!(out.starts_with("compute:"), "{out}");
        if code != Some(i32::from(HELPER_EXPECTED)) {
            failures += 1;
        }
    }
    assert_eq!(failures, 0);
}

/// Soft reset + re-init in the same process fails 10/10 with the seed's codes: 507000 at the
/// op-execute timeout (logged, not fatal), then 507899 at stream creation.
pub fn soft_reset_then_reinit_fails_10_of_10(t: &ArchUnderTest) {
    let b = t.bench("");
    let mut failed = 0;
    for _ in 0..ITERATIONS {
        let p = soft_reset_then_reinit(&b, CARD).unwrap();
        assert_eq!(p.hang, Err(RunError::Device(t.op_timeout)));
        assert_eq!(p.soft_reset, Ok(()));
        let e = p.reinit.unwrap_err();
        assert_eq!(
            e.driver_error(),
            Some(DriverError::new(
                DriverCall::CreateStream,
                codes::RT_DRV_INTERNAL_ERROR
            ))
        );
        assert_eq!(
            e.logged(),
            [DriverError::new(
                DriverCall::SetOpExecuteTimeout,
                codes::RT_INTERNAL_ERROR
            )]
        );
        failed += 1;
    }
    assert_eq!(failed, ITERATIONS);
}

/// Force-reset recovery: hang, finalize (force reset, probe), a new runner on the same card in
/// the same process runs the noop and the compute case, 10/10.
pub fn force_reset_recovery_10_of_10(t: &ArchUnderTest) {
    let b = t.bench("");
    let mut recovered = 0;
    for _ in 0..ITERATIONS {
        let p = trigger_then_recover(&b, CARD, Trigger::Hang, RecoveryOptions::default()).unwrap();
        assert_eq!(p.trigger, Err(RunError::Device(t.op_timeout)));
        assert!(p.unusable_after_trigger);
        assert!(matches!(p.refused_noop, Err(RunError::Unusable(_))));
        let report = p.finalize.as_ref().unwrap();
        let reset = report.reset.as_ref().expect("an unusable runner is force-reset");
        assert_eq!(reset.attempts.len(), 1);
        assert_eq!(reset.attempts[0].rc, Some(0));
        assert_eq!(reset.attempts[0].probe, ProbeResult::Confirmed);
        assert_eq!(reset.first_cause, Some(t.op_timeout));
        assert_eq!(p.sticky_after_finalize, None);
        let kinds: Vec<&str> = p.events.iter().map(|e| e.kind_name()).collect();
        assert_eq!(
            kinds,
            ["poisoned", "marked_unusable", "force_reset", "probe", "recovered"]
        );
        assert!(matches!(
            p.events[4].kind,
            HealthEventKind::Recovered { attempts: 1 }
        ));
        assert!(p.recovered(), "{p:?}");
        recovered += 1;
    }
    assert_eq!(recovered, ITERATIONS);
}
