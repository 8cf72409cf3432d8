//! What one simulated process sees of the sticky error, and of nobody else's: two machines (two sim
//! roots) in one process never share a context, and a failed op makes the context sticky when the
//! host learns of it (the sync that reports it, the drain, the stream's teardown), never earlier
//! at the whim of the stream's worker thread.
//!
//! The second rule is the cause of the old flake of
//! `sim_bounds::an_address_inside_an_allocation_gets_the_bytes_left_to_its_end` (one run in
//! fifteen under load, also with that test alone in its process): its kernel refuses its sizes at
//! once, and when the stream's worker thread got there before the host queued the AICPU task, the
//! task's launch was refused with the sticky code 507899 instead of the sync reporting 507015.
//! These tests wait for the failure on the sim's own counter ([`SimStats::failed_ops`]), so they
//! fail on that old behaviour every time, not one time in fifteen.

#![cfg(feature = "sim")]

mod sim_support;

use std::time::{Duration, Instant};

use platform_common::driver::{DriverCall, KernelArg, LaunchOrigin};
use platform_common::error::codes;
use platform_common::sim::{SimDriver, SimStats};
use platform_common::{Arch, Driver};
use sim_support::{bytes_f32, err, f32_bytes, Machine, Session};

/// vector_add with too few arguments: the kernel refuses them at once (the op fails 507015).
const BAD_ARGS: [KernelArg; 1] = [KernelArg::Scalar(0)];

/// Waits until the driver's streams have seen `n` ops fail. The op fails on the stream's worker
/// thread at its own pace; the deadline only turns a lost failure into a message.
fn wait_failed_ops(drv: &SimDriver, n: u64) -> SimStats {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let stats = drv.stats();
        if stats.failed_ops >= n {
            return stats;
        }
        assert!(Instant::now() < deadline, "the op never failed: {stats:?}");
        std::thread::yield_now();
    }
}

/// Queues the refusing kernel on card `card`'s AICore stream and waits until it has failed.
fn failed_unseen(drv: &SimDriver, card: u32) -> Session {
    let s = Session::init(drv, card).unwrap();
    let k = Session::register(drv, "vector_add").unwrap();
    drv.launch_aicore(s.aicore, k, 1, &BAD_ARGS, LaunchOrigin::Case)
        .unwrap();
    wait_failed_ops(drv, 1);
    s
}

/// vector_add of 4 elements on the current card; the sum it computed.
fn add4(drv: &SimDriver, s: &Session) -> Vec<f32> {
    let k = Session::register(drv, "vector_add").unwrap();
    let a = drv.malloc(16).unwrap();
    let c = drv.malloc(16).unwrap();
    drv.memcpy_to_device(a, &f32_bytes(&[1.0, 2.0, 3.0, 4.0]))
        .unwrap();
    let args = [
        KernelArg::Input(a),
        KernelArg::Input(a),
        KernelArg::Output(c),
        KernelArg::Scalar(4),
    ];
    s.run(drv, k, 2, &args, LaunchOrigin::Case).unwrap();
    let mut back = [0u8; 16];
    drv.memcpy_to_host(&mut back, c).unwrap();
    bytes_f32(&back)
}

#[test]
fn two_machines_in_one_process_never_share_a_context() {
    for arch in Arch::ALL {
        let (poisoned, clean) = (Machine::new(arch), Machine::new(arch));
        let (bad, good) = (poisoned.driver(), clean.driver());
        // The clean machine's card 0 is open before the other one is poisoned, and opened again after.
        let early = Session::init(&good, 0).unwrap();
        let s = failed_unseen(&bad, 0);
        assert_eq!(
            bad.synchronize_stream_with_timeout(s.aicore, s.sync_ms)
                .unwrap_err()
                .code,
            codes::RT_AICORE_EXCEPTION
        );
        assert_eq!(bad.sticky_error(0), Some(codes::RT_AICORE_EXCEPTION));
        assert_eq!(good.sticky_error(0), None, "{arch}");
        assert_eq!(add4(&good, &early), [2.0, 4.0, 6.0, 8.0], "{arch}");
        let late = clean.driver();
        let s2 = Session::init(&late, 0).unwrap();
        assert_eq!(add4(&late, &s2), [2.0, 4.0, 6.0, 8.0], "{arch}");
        // And a second process on the poisoned machine starts clean too.
        let fresh = poisoned.driver();
        let s3 = Session::init(&fresh, 0).unwrap();
        assert_eq!(add4(&fresh, &s3), [2.0, 4.0, 6.0, 8.0], "{arch}");
        assert_eq!(bad.sticky_error(0), Some(codes::RT_AICORE_EXCEPTION));
    }
}

#[test]
fn a_failure_nobody_has_synced_refuses_no_call_and_the_sync_reports_its_own_code() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = failed_unseen(&drv, 0);
        assert_eq!(drv.sticky_error(0), None, "{arch}: nothing told the host yet");
        // The rest of the run is queued as a runner queues it: not refused by the unseen failure.
        drv.malloc(64).unwrap();
        drv.launch_aicpu(s.aicpu, platform_common::driver::AicpuTask { aicore: s.aicore })
            .unwrap();
        // The sync reports the kernel's own code, and from then on the context is sticky.
        assert_eq!(
            drv.synchronize_stream_with_timeout(s.aicpu, s.sync_ms),
            Err(err(
                DriverCall::SynchronizeStreamWithTimeout,
                codes::RT_AICORE_EXCEPTION
            )),
            "{arch}"
        );
        assert_eq!(drv.sticky_error(0), Some(codes::RT_AICORE_EXCEPTION));
        assert_eq!(
            drv.malloc(64),
            Err(err(DriverCall::Malloc, codes::RT_DRV_INTERNAL_ERROR))
        );
        // The AICPU task failed with its AICore op: two failed ops.
        assert_eq!(wait_failed_ops(&drv, 2).failed_ops, 2);
    }
}

#[test]
fn the_drain_and_a_destroy_make_an_unseen_failure_sticky() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        failed_unseen(&drv, 0);
        assert_eq!(
            drv.synchronize_device_with_timeout(1500),
            Err(err(
                DriverCall::SynchronizeDeviceWithTimeout,
                sim_support::facts(arch).drain_error
            )),
            "{arch}"
        );
        assert_eq!(drv.sticky_error(0), Some(codes::RT_AICORE_EXCEPTION));

        let m = Machine::new(arch);
        let drv = m.driver();
        let s = failed_unseen(&drv, 1);
        // Nothing is pending (the op is done), so the stream goes; its failure stays on the context.
        drv.destroy_stream(s.aicore).unwrap();
        assert_eq!(drv.sticky_error(1), Some(codes::RT_AICORE_EXCEPTION), "{arch}");
        assert_eq!(
            drv.create_stream(),
            Err(err(DriverCall::CreateStream, codes::RT_DRV_INTERNAL_ERROR))
        );
    }
}
