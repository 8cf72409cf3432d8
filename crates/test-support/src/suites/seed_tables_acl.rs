//! The seed's tables a second time, through the `acl` driver against `libsim_acl.so`: every
//! measurement of `seed_tables` and `chain` runs on the in-process simulator and, on a machine of
//! its own, with each simulated process a fresh copy of the library loaded through the C ABI. The
//! outcomes and codes must be the same, field by field (timings aside).
//!
//! The copies of `libsim_acl.so` come from [`crate::locate`], the timing-free views from
//! [`crate::containment`].

use std::sync::Arc;
use std::time::Duration;

use tempfile::TempDir;

use platform_common::runner_base::{InitError, RunnerConfig};
use platform_common::timeouts::{TimeoutError, TimeoutProfile, Timeouts};

use super::{ArchUnderTest, Bench, CARD, ITERATIONS};
use crate::bench::SimBench;
use crate::containment::{through_acl, RecoveryView};
use crate::measure::{
    compute_in_fresh_process, guarded_hang_then_noop, raw_hang_then_noop, soft_reset_then_reinit,
    trigger_then_recover, RecoveryOptions, RecoveryProbe, Trigger,
};

/// Two machines with the same plan on [`CARD`]: one in-process, one through the C ABI.
struct Pair {
    sim: Bench,
    _acl_machine: Bench,
    acl: SimBench,
    _libs: TempDir,
}

fn pair(t: &ArchUnderTest, plan: &str) -> Pair {
    let sim = t.bench(plan);
    let acl_machine = t.bench(plan);
    let libs = tempfile::tempdir().unwrap();
    let acl = through_acl(&acl_machine, libs.path().to_owned());
    Pair {
        sim,
        _acl_machine: acl_machine,
        acl,
        _libs: libs,
    }
}

/// The plan's rules, each on [`CARD`].
fn on_card(rules: &[&str]) -> String {
    rules
        .iter()
        .map(|r| format!("dev={CARD}:{r}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The raw driver's hang then noop.
pub fn raw_driver_hang_then_noop_is_the_same_through_the_c_abi(t: &ArchUnderTest) {
    let p = pair(t, "");
    for i in 0..ITERATIONS {
        let sim = raw_hang_then_noop(&p.sim, CARD).unwrap();
        let acl = raw_hang_then_noop(&p.acl, CARD).unwrap();
        assert_eq!(acl, sim, "iteration {i}");
        assert!(acl.cascaded(), "{acl:?}");
    }
}

/// The runner's hang then noop, refused at the guard.
pub fn guarded_hang_then_noop_is_the_same_through_the_c_abi(t: &ArchUnderTest) {
    let p = pair(t, "");
    for i in 0..ITERATIONS {
        let sim = guarded_hang_then_noop(&p.sim, CARD).unwrap();
        let acl = guarded_hang_then_noop(&p.acl, CARD).unwrap();
        assert_eq!(acl, sim, "iteration {i}");
        assert_eq!(acl.noop_driver_calls, 0, "the guard made a driver call");
    }
}

/// Soft reset, then a new runner in the same process.
pub fn soft_reset_then_reinit_is_the_same_through_the_c_abi(t: &ArchUnderTest) {
    let p = pair(t, "");
    for i in 0..ITERATIONS {
        let sim = soft_reset_then_reinit(&p.sim, CARD).unwrap();
        let acl = soft_reset_then_reinit(&p.acl, CARD).unwrap();
        assert_eq!(acl, sim, "iteration {i}");
        assert!(acl.reinit.is_err(), "{acl:?}");
    }
}

/// The cascade variant and the control: a hang in one process (which ends without finalize),
/// then the compute case in another; and the compute case alone.
pub fn hang_in_one_process_then_compute_in_another_is_the_same_through_the_c_abi(t: &ArchUnderTest) {
    let p = pair(t, "");
    for i in 0..ITERATIONS as u64 {
        let hang_sim = guarded_hang_then_noop(&p.sim, CARD).unwrap();
        let hang_acl = guarded_hang_then_noop(&p.acl, CARD).unwrap();
        assert_eq!(hang_acl, hang_sim);
        let sim = compute_in_fresh_process(&p.sim, CARD, i).unwrap();
        let acl = compute_in_fresh_process(&p.acl, CARD, i).unwrap();
        assert_eq!(acl, sim, "iteration {i}");
        assert!(acl.passed(), "{acl:?}");
    }
}

/// One recovery measurement with `rules` on the card, on both machines: the two probes, the
/// in-process one first.
fn recovery(
    t: &ArchUnderTest,
    rules: &[&str],
    trigger: Trigger,
    sdma: bool,
) -> (RecoveryProbe, RecoveryProbe) {
    let p = pair(t, &on_card(rules));
    let opts = RecoveryOptions {
        sdma,
        ..RecoveryOptions::default()
    };
    let sim = trigger_then_recover(&p.sim, CARD, trigger, opts).unwrap();
    let acl = trigger_then_recover(&p.acl, CARD, trigger, opts).unwrap();
    (sim, acl)
}

/// Force-reset recovery after a hang.
pub fn force_reset_recovery_is_the_same_through_the_c_abi(t: &ArchUnderTest) {
    for i in 0..ITERATIONS {
        let (sim, acl) = recovery(t, &[], Trigger::Hang, false);
        assert_eq!(
            RecoveryView::from(&acl),
            RecoveryView::from(&sim),
            "iteration {i}"
        );
        let kinds: Vec<&str> = acl.events.iter().map(|e| e.kind_name()).collect();
        assert_eq!(
            kinds,
            ["poisoned", "marked_unusable", "force_reset", "probe", "recovered"]
        );
    }
}

/// Every fault plan of the chain tests.
pub fn every_fault_of_the_recovery_chain_is_the_same_through_the_c_abi(t: &ArchUnderTest) {
    let rows: [(&[&str], Trigger, bool); 10] = [
        (&["drain=false_negative"], Trigger::Hang, false),
        (&["force_reset_fail=2"], Trigger::Hang, false),
        (&["force_reset_fail=3"], Trigger::Hang, false),
        (&["force_reset_fail=1"], Trigger::Hang, true),
        (&[], Trigger::Hang, true),
        (&["probe_fail=1"], Trigger::Hang, false),
        (&["launch_fail@1=207001"], Trigger::Compute, false),
        (&["launch_fail@1"], Trigger::Compute, false),
        (&["corrupt@1"], Trigger::Compute, false),
        (
            &["launch_fail@1", "force_reset_fail=1", "probe_fail=1"],
            Trigger::Compute,
            false,
        ),
    ];
    for (rules, trigger, sdma) in rows {
        let (sim, acl) = recovery(t, rules, trigger, sdma);
        assert_eq!(
            RecoveryView::from(&acl),
            RecoveryView::from(&sim),
            "plan {rules:?}, {trigger:?}, sdma {sdma}"
        );
    }
}

/// A dead card's init error.
pub fn a_dead_card_fails_init_the_same_through_the_c_abi(t: &ArchUnderTest) {
    let p = pair(t, &on_card(&["dead"]));
    let sim = trigger_then_recover(&p.sim, CARD, Trigger::Hang, RecoveryOptions::default()).unwrap_err();
    let acl = trigger_then_recover(&p.acl, CARD, Trigger::Hang, RecoveryOptions::default()).unwrap_err();
    assert_eq!(acl.to_string(), sim.to_string());
}

/// A runner on the `acl` driver is held to the real-card timeout rules, even with the simulator
/// behind it: timeouts that are fine on the in-process simulator but break the real cards'
/// stream-sync margin are a typed init error, before any call into the library.
pub fn the_acl_driver_is_held_to_the_real_card_timeout_rules(t: &ArchUnderTest) {
    let p = pair(t, "");
    let sim_only = Timeouts {
        scheduler: Duration::from_millis(20),
        op_execute: Duration::from_millis(60),
        stream_sync: Duration::from_millis(250),
    };
    let sim = p.sim.try_process().unwrap();
    let on_sim = (t.entry.init_runner)(Arc::clone(&sim).driver(), RunnerConfig::new(CARD, sim_only));
    assert!(on_sim.is_ok(), "{on_sim:?}");
    let acl = p.acl.try_process().unwrap();
    let err =
        (t.entry.init_runner)(Arc::clone(&acl).driver(), RunnerConfig::new(CARD, sim_only)).unwrap_err();
    let InitError::Timeouts { profile, error, .. } = &err else {
        panic!("expected a timeouts error, got {err:?}");
    };
    assert_eq!(*profile, TimeoutProfile::Real);
    assert!(
        matches!(
            error,
            TimeoutError::Ordering {
                rule: "stream-sync > scheduler + 1500 ms",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(acl.stats().calls, 0, "refused before any call into the library");
}
