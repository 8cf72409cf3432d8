//! Runs and counters: `start_run` installs the plan and zeroes the counters of the cards it names
//! (never the reset generation); K counts case launches of a card across processes; internal
//! launches never count; each launch fault fires once per run.

#![cfg(feature = "sim")]

mod sim_support;

use platform_common::driver::{DriverCall, LaunchOrigin};
use platform_common::error::codes;
use platform_common::sim::{card_state, start_run, Fault, FaultPlan, SimError};
use platform_common::{Arch, Driver};
use sim_support::{err, Machine, Session};

fn plan(text: &str) -> FaultPlan {
    text.parse().unwrap()
}

#[test]
fn start_run_installs_the_plan_and_zeroes_counters_but_not_the_generation() {
    let m = Machine::with_plan(Arch::A5, "dev=1:launch_fail@2");
    let drv = m.driver();
    let s = Session::init(&drv, 1).unwrap();
    let noop = Session::register(&drv, "noop").unwrap();
    s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
    s.launch(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
    drv.reset_device_force(&m.lease(1)).unwrap();
    let before = card_state(&m.cfg, 1).unwrap();
    assert_eq!(
        (
            before.counters.case_launches,
            before.counters.force_resets,
            before.generation
        ),
        (2, 1, 1)
    );
    assert_eq!(before.fired, vec![0]);

    start_run(&m.cfg, &[1], &plan("dev=1:launch_fail@2;dev=1:probe_fail=1")).unwrap();
    let after = card_state(&m.cfg, 1).unwrap();
    assert_eq!(after.counters, Default::default());
    assert!(after.fired.is_empty());
    assert_eq!(after.generation, 1, "the generation is never zeroed");
    assert_eq!(
        after.faults,
        vec![
            Fault::LaunchFail { at: 2, code: None },
            Fault::ProbeFail { count: 1 }
        ]
    );
    // The zeroed counter fires the rule again at the new run's second launch, not later.
    let fresh = m.driver();
    let s = Session::init(&fresh, 1).unwrap();
    let noop = Session::register(&fresh, "noop").unwrap();
    s.run(&fresh, noop, 1, &[], LaunchOrigin::Case).unwrap();
    assert_eq!(
        s.launch(&fresh, noop, 1, &[], LaunchOrigin::Case).unwrap_err(),
        err(DriverCall::LaunchAicore, codes::RT_MEMORY_ALLOCATION)
    );
}

#[test]
fn start_run_touches_only_the_cards_it_names() {
    let m = Machine::with_plan(Arch::A2a3, "dev=*:op_timeout@5");
    let drv = m.driver();
    for card in [0, 1] {
        let s = Session::init(&drv, card).unwrap();
        let noop = Session::register(&drv, "noop").unwrap();
        s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
    }
    start_run(&m.cfg, &[0], &FaultPlan::default()).unwrap();
    let (c0, c1) = (card_state(&m.cfg, 0).unwrap(), card_state(&m.cfg, 1).unwrap());
    assert_eq!((c0.counters.case_launches, c0.faults.len()), (0, 0));
    assert_eq!((c1.counters.case_launches, c1.faults.len()), (1, 1));
}

#[test]
fn each_launch_fault_fires_once_per_run_and_internal_launches_never_count() {
    let m = Machine::with_plan(Arch::A5, "dev=0:launch_fail@1");
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    let noop = Session::register(&drv, "noop").unwrap();
    for _ in 0..3 {
        s.run(&drv, noop, 1, &[], LaunchOrigin::Internal).unwrap();
    }
    s.launch(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
    drv.reset_device_force(&m.lease(0)).unwrap();
    let s = Session::init(&drv, 0).unwrap();
    let noop = Session::register(&drv, "noop").unwrap();
    for _ in 0..3 {
        s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
    }
    let st = card_state(&m.cfg, 0).unwrap();
    assert_eq!((st.counters.case_launches, st.counters.internal_launches), (4, 3));
}

#[test]
fn launch_counters_hold_across_processes_on_a_card() {
    // Two driver values are two processes: launches 1 and 2 come from different ones.
    let m = Machine::with_plan(Arch::A2a3, "dev=2:launch_fail@2=507014");
    let first = m.driver();
    let s = Session::init(&first, 2).unwrap();
    let noop = Session::register(&first, "noop").unwrap();
    s.run(&first, noop, 1, &[], LaunchOrigin::Case).unwrap();
    drop(first);
    let second = m.driver();
    let s = Session::init(&second, 2).unwrap();
    let noop = Session::register(&second, "noop").unwrap();
    assert_eq!(
        s.launch(&second, noop, 1, &[], LaunchOrigin::Case)
            .unwrap_err()
            .code
            .raw,
        507014
    );
}

#[test]
fn start_run_refuses_cards_the_sim_does_not_have() {
    let m = Machine::new(Arch::A5);
    let e = start_run(&m.cfg, &[0], &plan("dev=8:dead")).unwrap_err();
    assert!(
        matches!(e, SimError::Plan(ref p) if p.rule == "dev=8:dead"),
        "{e}"
    );
    let e = start_run(&m.cfg, &[3, 8], &FaultPlan::default()).unwrap_err();
    assert!(matches!(e, SimError::CardOutOfRange { card: 8, cards: 8 }), "{e}");
    assert!(card_state(&m.cfg, 8).is_err());
    // Nothing was installed on card 3 by the refused start.
    assert_eq!(card_state(&m.cfg, 3).unwrap(), Default::default());
}
