//! What a simulated machine is configured with and reports about itself: per-call counters, the
//! a2a3 partial-good core mask `halMemCtl` returns, and timeouts that must keep their ordering.

#![cfg(feature = "sim")]

mod sim_support;

use std::time::Duration;

use platform_common::driver::{DriverCall, LaunchOrigin};
use platform_common::sim::{card_state, SimConfig, SimDriver, SimError};
use platform_common::timeouts::Timeouts;
use platform_common::{Arch, Driver};
use sim_support::Session;
use sim_support::{facts, Machine};

#[test]
fn every_driver_call_is_counted_by_its_kind_whatever_its_outcome() {
    let m = Machine::with_plan(Arch::A2a3, "dev=0:launch_fail@2");
    let drv = m.driver();
    assert_eq!(drv.stats().per_call.nonzero().count(), 0);
    let s = Session::init(&drv, 0).unwrap();
    let noop = Session::register(&drv, "noop").unwrap();
    for _ in 0..3 {
        drv.hal_mem_ctl(0).unwrap();
    }
    s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
    // The second launch fails (and poisons); a failing call is counted all the same.
    s.launch(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
    drv.malloc(64).unwrap_err();
    let st = drv.stats();
    let expected = [
        (DriverCall::SetDevice, 1),
        (DriverCall::SetOpExecuteTimeout, 1),
        (DriverCall::CreateStream, 2),
        (DriverCall::RegisterKernel, 1),
        (DriverCall::HalMemCtl, 3),
        (DriverCall::LaunchAicore, 2),
        (DriverCall::LaunchAicpu, 1),
        (DriverCall::SynchronizeStreamWithTimeout, 2),
        (DriverCall::Malloc, 1),
    ];
    for (call, n) in expected {
        assert_eq!(st.calls_of(call), n, "{call}");
    }
    let nonzero: Vec<_> = st.per_call.nonzero().collect();
    assert_eq!(nonzero.len(), expected.len(), "{nonzero:?}");
    assert_eq!(st.calls_of(DriverCall::Free), 0);
    assert_eq!(st.calls, nonzero.iter().map(|(_, n)| n).sum::<u64>());
}

#[test]
fn hal_mem_ctl_reports_the_partial_good_mask() {
    let m = Machine::new(Arch::A2a3);
    // By default every one of the arch's 24 cores is good.
    let drv = m.driver();
    assert_eq!(drv.hal_mem_ctl(0).unwrap().core_mask, (1 << 24) - 1);
    // A card with cores 3 and 17 fused off.
    let mask = ((1u64 << 24) - 1) & !(1 << 3) & !(1 << 17);
    let drv = SimDriver::new(m.cfg.clone().with_core_mask(mask));
    let window = drv.hal_mem_ctl(0).unwrap();
    assert_eq!(window.core_mask, mask);
    assert_eq!(window.core_mask.count_ones(), 22);
    // Bits past the arch's cores are not reported.
    let drv = SimDriver::new(m.cfg.clone().with_core_mask(u64::MAX << 20));
    assert_eq!(drv.hal_mem_ctl(0).unwrap().core_mask, 0xf0_0000);
}

#[test]
fn timeouts_out_of_order_are_refused_by_the_config() {
    let cfg = SimConfig::new(facts(Arch::A5), "/nonexistent-sim-root");
    let t = |s, o, y| Timeouts {
        scheduler: Duration::from_millis(s),
        op_execute: Duration::from_millis(o),
        stream_sync: Duration::from_millis(y),
    };
    for (bad, rule) in [
        (t(60, 60, 250), "scheduler < op-execute"),
        (t(20, 300, 250), "op-execute < stream-sync"),
    ] {
        let e = cfg.clone().with_timeouts(bad).unwrap_err();
        assert!(matches!(e, SimError::Timeouts(_)), "{e:?}");
        assert!(e.to_string().contains(rule), "{e}");
    }
    let good = t(20, 60, 250);
    assert_eq!(cfg.with_timeouts(good).unwrap().timeouts, good);
}

#[test]
fn symlinks_in_place_of_the_sim_root_or_a_card_file_are_refused() {
    let m = Machine::new(Arch::A5);
    let victim = m.dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    card_state(&m.cfg, 0).unwrap();
    std::os::unix::fs::symlink(&victim, m.cfg.card_path(1)).unwrap();
    match card_state(&m.cfg, 1) {
        Err(SimError::Unsafe { path, reason }) => {
            assert_eq!(path, m.cfg.card_path(1));
            assert!(reason.contains("symbolic link"), "{reason}");
        }
        other => panic!("expected Unsafe, got {other:?}"),
    }
    // A driver call on that card fails as an internal driver error, and writes nothing through.
    let drv = m.driver();
    assert_eq!(
        drv.set_device(1).unwrap_err().code,
        platform_common::error::codes::RT_DRV_INTERNAL_ERROR
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");

    let mut linked = m.cfg.clone();
    linked.root = m.dir.path().join("linked-sim");
    std::os::unix::fs::symlink(&m.cfg.root, &linked.root).unwrap();
    let e = card_state(&linked, 0).unwrap_err();
    assert!(
        matches!(&e, SimError::Unsafe { path, .. } if *path == linked.root),
        "{e:?}"
    );
}
