//! Resets and process scope: a soft reset tears down but keeps the sticky error; a force reset
//! clears it, bumps the card's generation and releases other processes' contexts on that card
//! only; `force_reset_fail`, `probe_fail` and `dead` spoil it as planned; a new process (a new
//! `SimDriver`) starts clean; `init_delay_ms` slows each init (a context's first set-device, and the
//! first after a reset), never the set-device of every run. Two `SimDriver` values in one test
//! behave as two processes (the cross-process tests prove the same with real processes).

#![cfg(feature = "sim")]

mod sim_support;

use platform_common::driver::{DriverCall, LaunchOrigin};
use platform_common::error::codes;
use platform_common::sim::{card_state, SimDriver};
use platform_common::{Arch, Driver};
use sim_support::{err, Machine, Session};

fn poison(drv: &SimDriver, card: u32) -> Session {
    let s = Session::init(drv, card).unwrap();
    let noop = Session::register(drv, "noop").unwrap();
    s.launch(drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
    assert!(drv.sticky_error(card).is_some());
    s
}

/// The runner's post-reset probe: create and destroy a stream, allocate and free 64 bytes, run
/// the noop kernel as an internal launch.
fn probe(drv: &SimDriver, card: u32) -> Result<(), platform_common::DriverError> {
    drv.set_device(card)?;
    let s = drv.create_stream()?;
    let p = drv.malloc(64)?;
    drv.free(p)?;
    let noop = Session::register(drv, "noop")?;
    drv.launch_aicore(s, noop, 1, &[], LaunchOrigin::Internal)?;
    drv.synchronize_stream_with_timeout(s, 1500)?;
    drv.destroy_stream(s)
}

#[test]
fn a_soft_reset_tears_down_but_the_sticky_error_survives() {
    for arch in Arch::ALL {
        let m = Machine::with_plan(arch, "dev=0:launch_fail@1");
        let drv = m.driver();
        let s = poison(&drv, 0);
        drv.reset_device(0).unwrap();
        // Streams and memory are gone...
        assert_eq!(
            drv.destroy_stream(s.aicore),
            Err(err(DriverCall::DestroyStream, codes::INVALID_PARAM))
        );
        // ...and the re-init fails as the seed measured: op-execute timeout 507000, stream 507899.
        drv.set_device(0).unwrap();
        assert_eq!(
            drv.set_op_execute_timeout(500_000),
            Err(err(DriverCall::SetOpExecuteTimeout, codes::RT_INTERNAL_ERROR)),
            "{arch}"
        );
        assert_eq!(
            drv.create_stream(),
            Err(err(DriverCall::CreateStream, codes::RT_DRV_INTERNAL_ERROR)),
            "{arch}"
        );
        assert_eq!(
            card_state(&m.cfg, 0).unwrap().generation,
            0,
            "a soft reset bumps nothing"
        );
    }
}

#[test]
fn a_force_reset_clears_in_place_and_bumps_the_generation() {
    for arch in Arch::ALL {
        let m = Machine::with_plan(arch, "dev=2:launch_fail@1");
        let drv = m.driver();
        let old = poison(&drv, 2);
        let lease = m.lease(2);
        drv.reset_device_force(&lease).unwrap();
        assert_eq!(card_state(&m.cfg, 2).unwrap().generation, 1);
        assert!(drv.sticky_error(2).is_none());
        assert_eq!(
            drv.destroy_stream(old.aicore).unwrap_err().code,
            codes::INVALID_PARAM,
            "streams torn down"
        );
        probe(&drv, 2).unwrap();
        let s = Session::init(&drv, 2).unwrap();
        let noop = Session::register(&drv, "noop").unwrap();
        s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
        assert_eq!(drv.stats().force_resets_ok, 1);
        let counters = card_state(&m.cfg, 2).unwrap().counters;
        assert_eq!((counters.force_resets, counters.post_reset_probes), (1, 1));
    }
}

#[test]
fn a_force_reset_releases_another_process_context_on_that_card_only() {
    let m = Machine::new(Arch::A5);
    let a = m.driver();
    let b = m.driver();
    let c = m.driver();
    Session::init(&a, 1).unwrap();
    let sb = Session::init(&b, 1).unwrap();
    let sc = Session::init(&c, 2).unwrap();
    let noop_c = Session::register(&c, "noop").unwrap();
    a.reset_device_force(&m.lease(1)).unwrap();
    // B's next call, whatever it is, fails 507007; then its context is sticky.
    assert_eq!(
        b.malloc(64),
        Err(err(DriverCall::Malloc, codes::RT_CONTEXT_RELEASE_ERROR))
    );
    assert_eq!(
        b.malloc(64),
        Err(err(DriverCall::Malloc, codes::RT_DRV_INTERNAL_ERROR))
    );
    assert_eq!(b.hal_res_map(1, 0).unwrap_err().code, codes::HAL_NO_PROCESS);
    assert_eq!(b.destroy_stream(sb.aicpu), Ok(()), "teardown still works");
    // A, the resetter, is healthy; C on card 2 never noticed.
    probe(&a, 1).unwrap();
    sc.run(&c, noop_c, 1, &[], LaunchOrigin::Case).unwrap();
    assert!(c.sticky_error(2).is_none());
    // A driver opened after the reset (a new process) is clean.
    probe(&m.driver(), 1).unwrap();
}

#[test]
fn the_first_k_force_resets_fail_under_force_reset_fail() {
    let m = Machine::with_plan(Arch::A2a3, "dev=5:launch_fail@1;dev=5:force_reset_fail=2");
    let drv = m.driver();
    poison(&drv, 5);
    let lease = m.lease(5);
    for attempt in 1..=2 {
        let e = drv.reset_device_force(&lease).unwrap_err();
        assert_eq!(
            e,
            err(DriverCall::ResetDeviceForce, codes::RT_INTERNAL_ERROR),
            "attempt {attempt}"
        );
        assert!(drv.sticky_error(5).is_some(), "attempt {attempt} changed nothing");
        assert_eq!(card_state(&m.cfg, 5).unwrap().generation, 0);
    }
    drv.reset_device_force(&lease).unwrap();
    assert!(drv.sticky_error(5).is_none());
    probe(&drv, 5).unwrap();
    assert_eq!(card_state(&m.cfg, 5).unwrap().counters.force_resets, 3);
}

#[test]
fn probe_fail_leaves_the_sticky_error_after_a_reset_that_returned_0() {
    for arch in Arch::ALL {
        let m = Machine::with_plan(arch, "dev=0:launch_fail@1;dev=0:probe_fail=1");
        let drv = m.driver();
        poison(&drv, 0);
        let lease = m.lease(0);
        drv.reset_device_force(&lease).unwrap();
        assert_eq!(card_state(&m.cfg, 0).unwrap().generation, 1);
        assert_eq!(
            probe(&drv, 0),
            Err(err(DriverCall::CreateStream, codes::RT_DRV_INTERNAL_ERROR)),
            "{arch}"
        );
        drv.reset_device_force(&lease).unwrap();
        probe(&drv, 0).unwrap();
    }
}

#[test]
fn a_dead_card_never_opens_and_nothing_recovers_it() {
    let m = Machine::with_plan(Arch::A5, "dev=6:dead");
    let drv = m.driver();
    let dead = err(DriverCall::SetDevice, codes::RT_DEV_SETUP_ERROR);
    assert_eq!(drv.set_device(6), Err(dead));
    assert_eq!(drv.set_device(6), Err(dead));
    assert_eq!(
        drv.reset_device_force(&m.lease(6)).unwrap_err().code,
        codes::RT_DEV_SETUP_ERROR
    );
    assert_eq!(
        m.driver().set_device(6),
        Err(dead),
        "a new process cannot open it either"
    );
    probe(&drv, 7).unwrap();
}

#[test]
fn a_new_process_starts_clean() {
    for arch in Arch::ALL {
        let m = Machine::with_plan(arch, "dev=3:launch_fail@1");
        let first = m.driver();
        poison(&first, 3);
        let fresh = m.driver();
        let s = Session::init(&fresh, 3).unwrap();
        let noop = Session::register(&fresh, "noop").unwrap();
        s.run(&fresh, noop, 1, &[], LaunchOrigin::Case).unwrap();
        fresh.hal_res_map(3, 0).unwrap();
        fresh.hal_mem_ctl(3).unwrap();
        assert!(
            first.sticky_error(3).is_some(),
            "{arch}: the first process stays poisoned"
        );
    }
}

/// `(inits, inits that slept the delay, set-device calls)` of `drv` so far.
fn inits(drv: &SimDriver) -> (u64, u64, u64) {
    let st = drv.stats();
    (st.inits, st.init_delays, st.calls_of(DriverCall::SetDevice))
}

#[test]
fn init_delay_is_charged_once_per_init_not_per_run() {
    let m = Machine::with_plan(Arch::A5, "dev=4:init_delay_ms=300");
    let drv = m.driver();
    // A runner's life on card 4: one init, then runs that each make the card current first.
    let s = Session::init(&drv, 4).unwrap();
    let noop = Session::register(&drv, "noop").unwrap();
    for _ in 0..5 {
        drv.set_device(4).unwrap();
        s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
    }
    assert_eq!(inits(&drv), (1, 1, 6), "one init, five runs");
    // A soft reset tears the context down: the next set-device is an init again, the one after not.
    drv.reset_device(4).unwrap();
    drv.set_device(4).unwrap();
    drv.set_device(4).unwrap();
    assert_eq!(inits(&drv), (2, 2, 8));
    // So does a force reset.
    drv.reset_device_force(&m.lease(4)).unwrap();
    probe(&drv, 4).unwrap();
    drv.set_device(4).unwrap();
    assert_eq!(inits(&drv), (3, 3, 10));
    // A card without the setting inits without the delay; a new process inits once of its own.
    drv.set_device(2).unwrap();
    drv.set_device(2).unwrap();
    assert_eq!(inits(&drv), (4, 3, 12));
    let other = m.driver();
    for _ in 0..3 {
        other.set_device(4).unwrap();
    }
    assert_eq!(inits(&other), (1, 1, 3));
}
