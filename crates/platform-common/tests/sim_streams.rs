//! Stream and device-drain rules: the first sync after a failure reports the op's code; a sync of a
//! stream already in error state blocks until its timeout and fails 507018; destroying a stream
//! with pending work fails 507004, an error-state stream without pending work is destroyed; the
//! bounded drain waits on a healthy context, errors per arch on a poisoned one, or lies under
//! `drain=false_negative`.

#![cfg(feature = "sim")]

mod sim_support;

use std::time::{Duration, Instant};

use platform_common::driver::{DriverCall, KernelArg, LaunchOrigin};
use platform_common::error::codes;
use platform_common::{Arch, Driver};
use sim_support::{bytes_f32, err, f32_bytes, facts, Machine, Session};

/// A failed op without a hang: vector_add with too few arguments returns a bad-args status.
const BAD_ARGS: [KernelArg; 1] = [KernelArg::Scalar(0)];

#[test]
fn a_sync_of_an_error_state_stream_blocks_until_its_timeout_then_fails_507018() {
    let m = Machine::new(Arch::A5);
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    let k = Session::register(&drv, "vector_add").unwrap();
    drv.launch_aicore(s.aicore, k, 1, &BAD_ARGS, LaunchOrigin::Case)
        .unwrap();
    // The first sync reports the failed op's code; the stream is now in error state.
    let first = drv.synchronize_stream_with_timeout(s.aicore, 1500).unwrap_err();
    assert_eq!(
        first,
        err(
            DriverCall::SynchronizeStreamWithTimeout,
            codes::RT_AICORE_EXCEPTION
        )
    );
    assert_eq!(drv.stats().error_state_syncs, 0);
    let start = Instant::now();
    let again = drv.synchronize_stream_with_timeout(s.aicore, 200).unwrap_err();
    assert!(
        start.elapsed() >= Duration::from_millis(200),
        "returned after {:?}",
        start.elapsed()
    );
    assert_eq!(
        again,
        err(
            DriverCall::SynchronizeStreamWithTimeout,
            codes::RT_AICPU_EXCEPTION
        )
    );
    assert_eq!(drv.stats().error_state_syncs, 1);
    // Without pending work the error-state stream is destroyed at once.
    drv.destroy_stream(s.aicore).unwrap();
    assert_eq!(
        drv.synchronize_stream_with_timeout(s.aicore, 10),
        Err(err(
            DriverCall::SynchronizeStreamWithTimeout,
            codes::INVALID_PARAM
        ))
    );
}

#[test]
fn the_aicpu_task_fails_with_its_aicore_work_and_its_stream_enters_error_state() {
    let m = Machine::new(Arch::A2a3);
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    let k = Session::register(&drv, "vector_add").unwrap();
    s.launch(&drv, k, 1, &BAD_ARGS, LaunchOrigin::Case).unwrap();
    let e = drv.synchronize_stream_with_timeout(s.aicpu, 1500).unwrap_err();
    assert_eq!(e.code, codes::RT_AICORE_EXCEPTION);
    let e = drv.synchronize_stream_with_timeout(s.aicpu, 50).unwrap_err();
    assert_eq!(
        e.code,
        codes::RT_AICPU_EXCEPTION,
        "AICPU stream must be in error state"
    );
    assert_eq!(drv.stats().error_state_syncs, 1);
}

#[test]
fn destroying_a_stream_with_pending_work_fails_507004() {
    let m = Machine::new(Arch::A5);
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    // A long op-execute timeout keeps the hang pending for as long as the test needs.
    drv.set_op_execute_timeout(60_000_000).unwrap();
    let hang = Session::register(&drv, "hang").unwrap();
    drv.launch_aicore(s.aicore, hang, 2, &[], LaunchOrigin::Case)
        .unwrap();
    assert_eq!(
        drv.destroy_stream(s.aicore),
        Err(err(DriverCall::DestroyStream, codes::RT_STREAM_NOT_COMPLETE))
    );
    // A healthy sync that runs out of time is a sync timeout, and leaves no error state behind.
    assert_eq!(
        drv.synchronize_stream_with_timeout(s.aicore, 50),
        Err(err(
            DriverCall::SynchronizeStreamWithTimeout,
            codes::RT_STREAM_SYNC_TIMEOUT
        ))
    );
    assert_eq!(drv.stats().error_state_syncs, 0);
    // A soft reset tears the stream and its pending work down.
    drv.reset_device(0).unwrap();
    assert_eq!(
        drv.destroy_stream(s.aicore),
        Err(err(DriverCall::DestroyStream, codes::INVALID_PARAM))
    );
    assert!(drv.sticky_error(0).is_none(), "torn-down work poisons nothing");
}

#[test]
fn the_drain_waits_for_pending_work_on_a_healthy_context() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        let k = Session::register(&drv, "vector_add").unwrap();
        let n = 200_000usize;
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let (pa, pc) = (drv.malloc(n * 4).unwrap(), drv.malloc(n * 4).unwrap());
        drv.memcpy_to_device(pa, &f32_bytes(&a)).unwrap();
        let args = [
            KernelArg::Input(pa),
            KernelArg::Input(pa),
            KernelArg::Output(pc),
            KernelArg::Scalar(n as u64),
        ];
        for _ in 0..3 {
            s.launch(&drv, k, 4, &args, LaunchOrigin::Case).unwrap();
        }
        drv.synchronize_device_with_timeout(1500).unwrap();
        // Everything was done when the drain returned: the streams can go at once.
        drv.destroy_stream(s.aicore).unwrap();
        drv.destroy_stream(s.aicpu).unwrap();
        let mut out = vec![0u8; n * 4];
        drv.memcpy_to_host(&mut out, pc).unwrap();
        assert_eq!(bytes_f32(&out)[n - 1], 2.0 * a[n - 1], "{arch}");
    }
}

#[test]
fn the_drain_of_a_poisoned_context_errors_with_the_arch_code() {
    for (arch, code) in [(Arch::A5, 507046), (Arch::A2a3, 507015)] {
        let m = Machine::with_plan(arch, "dev=3:launch_fail@1");
        let drv = m.driver();
        let s = Session::init(&drv, 3).unwrap();
        let noop = Session::register(&drv, "noop").unwrap();
        s.launch(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
        let e = drv.synchronize_device_with_timeout(1000).unwrap_err();
        assert_eq!(e.call, DriverCall::SynchronizeDeviceWithTimeout);
        assert_eq!(e.code.raw, code, "{arch}");
        assert_eq!(facts(arch).drain_error_code().raw, code);
        assert!(drv.sticky_error(3).is_some(), "{arch}: the drain clears nothing");
    }
}

#[test]
fn drain_false_negative_reports_success_on_a_poisoned_context() {
    for arch in Arch::ALL {
        let m = Machine::with_plan(arch, "dev=*:launch_fail@1;dev=3:drain=false_negative");
        let drv = m.driver();
        let s = Session::init(&drv, 3).unwrap();
        let noop = Session::register(&drv, "noop").unwrap();
        s.launch(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
        drv.synchronize_device_with_timeout(1000).unwrap();
        assert!(drv.sticky_error(3).is_some(), "{arch}");
        assert_eq!(
            drv.malloc(64).unwrap_err().code,
            codes::RT_DRV_INTERNAL_ERROR,
            "{arch}: still poisoned"
        );
        // The setting is per card: card 4's drain on its poisoned context tells the truth.
        let s4 = Session::init(&drv, 4).unwrap();
        let noop4 = Session::register(&drv, "noop").unwrap();
        s4.launch(&drv, noop4, 1, &[], LaunchOrigin::Case).unwrap_err();
        let e = drv.synchronize_device_with_timeout(1000).unwrap_err();
        assert_eq!(e.code, facts(arch).drain_error_code(), "{arch}");
    }
}
