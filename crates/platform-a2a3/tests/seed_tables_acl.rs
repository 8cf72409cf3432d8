//! The seed's tables a second time, through the `acl` driver against `libsim_acl.so`: every
//! measurement of `seed_tables.rs` and `chain.rs` runs on the in-process simulator and, on a
//! machine of its own, with each simulated process a fresh copy of the library loaded through
//! the C ABI. The outcomes and codes must be the same, field by field (timings aside).
//!
//! This file is the same in platform-a5 and platform-a2a3; `common` holds the arch.

#![cfg(feature = "sim")]

mod common;

use common::{bench, Bench, CARD, ITERATIONS};
use platform_common::runner_base::testkit::{
    compute_in_fresh_process, guarded_hang_then_noop, raw_hang_then_noop, soft_reset_then_reinit,
    trigger_then_recover, RecoveryOptions, SimBench, Trigger,
};
use sim_acl::containment::{through_acl, RecoveryView};
use tempfile::TempDir;

/// Two machines with the same plan on [`CARD`]: one in-process, one through the C ABI.
struct Pair {
    sim: Bench,
    _acl_machine: Bench,
    acl: SimBench,
    _libs: TempDir,
}

fn pair(plan: &str) -> Pair {
    let sim = bench(plan);
    let acl_machine = bench(plan);
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

#[test]
fn raw_driver_hang_then_noop_is_the_same_through_the_c_abi() {
    let p = pair("");
    for i in 0..ITERATIONS {
        let sim = raw_hang_then_noop(&p.sim, CARD).unwrap();
        let acl = raw_hang_then_noop(&p.acl, CARD).unwrap();
        assert_eq!(acl, sim, "iteration {i}");
        assert!(acl.cascaded(), "{acl:?}");
    }
}

#[test]
fn guarded_hang_then_noop_is_the_same_through_the_c_abi() {
    let p = pair("");
    for i in 0..ITERATIONS {
        let sim = guarded_hang_then_noop(&p.sim, CARD).unwrap();
        let acl = guarded_hang_then_noop(&p.acl, CARD).unwrap();
        assert_eq!(acl, sim, "iteration {i}");
        assert_eq!(acl.noop_driver_calls, 0, "the guard made a driver call");
    }
}

#[test]
fn soft_reset_then_reinit_is_the_same_through_the_c_abi() {
    let p = pair("");
    for i in 0..ITERATIONS {
        let sim = soft_reset_then_reinit(&p.sim, CARD).unwrap();
        let acl = soft_reset_then_reinit(&p.acl, CARD).unwrap();
        assert_eq!(acl, sim, "iteration {i}");
        assert!(acl.reinit.is_err(), "{acl:?}");
    }
}

/// The cascade variant and the control: a hang in one process (which ends without finalize),
/// then the compute case in another; and the compute case alone.
#[test]
fn hang_in_one_process_then_compute_in_another_is_the_same_through_the_c_abi() {
    let p = pair("");
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

/// One recovery measurement with `rules` on the card, on both machines.
fn recovery(rules: &[&str], trigger: Trigger, sdma: bool) -> (RecoveryView, RecoveryView) {
    let p = pair(&on_card(rules));
    let opts = RecoveryOptions { sdma };
    let sim = trigger_then_recover(&p.sim, CARD, trigger, opts).unwrap();
    let acl = trigger_then_recover(&p.acl, CARD, trigger, opts).unwrap();
    (RecoveryView::from(&sim), RecoveryView::from(&acl))
}

#[test]
fn force_reset_recovery_is_the_same_through_the_c_abi() {
    for i in 0..ITERATIONS {
        let (sim, acl) = recovery(&[], Trigger::Hang, false);
        assert_eq!(acl, sim, "iteration {i}");
        let kinds: Vec<&str> = acl.events.iter().map(|e| e.0).collect();
        assert_eq!(
            kinds,
            ["poisoned", "marked_unusable", "force_reset", "probe", "recovered"]
        );
    }
}

#[test]
fn every_fault_of_the_recovery_chain_is_the_same_through_the_c_abi() {
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
        let (sim, acl) = recovery(rules, trigger, sdma);
        assert_eq!(acl, sim, "plan {rules:?}, {trigger:?}, sdma {sdma}");
    }
}

#[test]
fn a_dead_card_fails_init_the_same_through_the_c_abi() {
    let p = pair(&on_card(&["dead"]));
    let sim = trigger_then_recover(&p.sim, CARD, Trigger::Hang, RecoveryOptions::default()).unwrap_err();
    let acl = trigger_then_recover(&p.acl, CARD, Trigger::Hang, RecoveryOptions::default()).unwrap_err();
    assert_eq!(acl.to_string(), sim.to_string());
}
