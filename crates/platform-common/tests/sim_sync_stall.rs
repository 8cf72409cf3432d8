//! What a stream sync's timeout counts, and the device drain's: only time during which the
//! stream's pending work is stalled on the device (every unfinished block of the running op
//! blocked in the wait API, or an AICPU task waiting on such an op). A kernel that computes for
//! several times the timeout is synced `Done` (its blocks really run, on their own clock); so is one
//! whose blocks wait for a block that computes; a kernel that waits longer than the sync allows
//! still times the sync out; a hang is still reaped by op-execute first when op-execute is the
//! shorter; a stream already in error state still blocks for its whole timeout.

#![cfg(feature = "sim")]

mod sim_support;

use std::time::{Duration, Instant};

use platform_common::driver::{DevicePtr, DriverCall, KernelArg, KernelHandle, LaunchOrigin};
use platform_common::error::codes;
use platform_common::sim::SimDriver;
use platform_common::{Arch, Driver};
use sim_support::{err, facts, test_blob, Machine, Session};

/// The sync timeout of the compute tests: the kernel computes for [`SPIN`], eight times as long.
const SYNC_MS: u32 = 50;
const SPIN: Duration = Duration::from_millis(400);
const BLOCKS: u32 = 4;
/// Far above anything a test waits: the hang tests' op-execute timeout when it must not reap.
const NO_REAP_US: u64 = 60_000_000;
/// A generous upper bound for "about the timeout" on a loaded machine.
const GENEROUS: Duration = Duration::from_secs(20);

fn spin_kernel(drv: &SimDriver) -> KernelHandle {
    drv.register_kernel(&test_blob(drv.config().arch.arch, "spin"))
        .unwrap()
}

/// Launches `spin` on the AICore stream (and, with `aicpu`, the AICPU task behind it): `spinners`
/// of [`BLOCKS`] blocks compute for [`SPIN`], the others wait for them. Returns the output buffer.
fn launch_spin(drv: &SimDriver, s: &Session, spinners: u32, aicpu: bool) -> DevicePtr {
    let k = spin_kernel(drv);
    let out = drv.malloc(8 * BLOCKS as usize).unwrap();
    drv.memcpy_to_device(out, &[0; 8 * BLOCKS as usize]).unwrap();
    let args = [
        KernelArg::Output(out),
        KernelArg::Scalar(SPIN.as_micros() as u64),
        KernelArg::Scalar(u64::from(spinners)),
    ];
    if aicpu {
        s.launch(drv, k, BLOCKS, &args, LaunchOrigin::Case).unwrap();
    } else {
        drv.launch_aicore(s.aicore, k, BLOCKS, &args, LaunchOrigin::Case)
            .unwrap();
    }
    out
}

/// Every block stored a non-zero word: every block ran to its end.
fn assert_every_block_ran(drv: &SimDriver, out: DevicePtr, what: &str) {
    let mut bytes = [0u8; 8 * BLOCKS as usize];
    drv.memcpy_to_host(&mut bytes, out).unwrap();
    for (i, word) in bytes.chunks_exact(8).enumerate() {
        let v = u64::from_ne_bytes(word.try_into().unwrap());
        assert_ne!(v, 0, "{what}: block {i} did not finish");
    }
}

fn sync(
    drv: &SimDriver,
    stream: platform_common::driver::Stream,
    ms: u32,
) -> Result<(), platform_common::DriverError> {
    drv.synchronize_stream_with_timeout(stream, ms)
}

/// Launches `spin` as [`launch_spin`] does and syncs `streams` in order, each with the compute
/// tests' [`SYNC_MS`]: each sync is `Done`, they returned no earlier than the kernel's [`SPIN`]
/// after the launch, and every block ran.
fn spin_then_sync(
    drv: &SimDriver,
    s: &Session,
    spinners: u32,
    aicpu: bool,
    streams: &[platform_common::driver::Stream],
    what: &str,
) {
    // The clock starts before the launch: the kernel computes from then on.
    let start = Instant::now();
    let out = launch_spin(drv, s, spinners, aicpu);
    for stream in streams {
        sync(drv, *stream, SYNC_MS).unwrap();
    }
    assert!(
        start.elapsed() >= SPIN,
        "{what}: synced after {:?}",
        start.elapsed()
    );
    assert_every_block_ran(drv, out, what);
}

/// The wait that began at `start` lasted at least `at_least`, and well under [`GENEROUS`].
fn assert_waited(start: Instant, at_least: Duration, what: &str) {
    let took = start.elapsed();
    assert!(took >= at_least, "{what}: {took:?}");
    assert!(took < GENEROUS, "{what}: {took:?}");
}

#[test]
fn a_kernel_that_computes_for_several_sync_timeouts_is_synced_done() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        // As a runner syncs: the AICPU stream (whose task waits on the AICore work), then AICore.
        spin_then_sync(&drv, &s, BLOCKS, true, &[s.aicpu, s.aicore], arch.name());
        // The AICore stream alone, synced while its op computes.
        spin_then_sync(&drv, &s, BLOCKS, false, &[s.aicore], arch.name());
        assert!(drv.sticky_error(0).is_none(), "{arch}");
    }
}

#[test]
fn blocks_waiting_for_a_block_that_computes_are_no_stall() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        drv.set_op_execute_timeout(NO_REAP_US).unwrap();
        // Block 0 computes; blocks 1..3 wait in the wait API until it has stored its result.
        spin_then_sync(&drv, &s, 1, true, &[s.aicpu, s.aicore], arch.name());
    }
}

#[test]
fn a_kernel_that_waits_longer_than_the_sync_timeout_times_the_sync_out() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        // Op-execute far above the sync: the hang is not reaped while the test syncs.
        drv.set_op_execute_timeout(NO_REAP_US).unwrap();
        let hang = Session::register(&drv, "hang").unwrap();
        s.launch(&drv, hang, BLOCKS, &[], LaunchOrigin::Case).unwrap();
        let timeout = err(
            DriverCall::SynchronizeStreamWithTimeout,
            codes::RT_STREAM_SYNC_TIMEOUT,
        );
        for (stream, name) in [(s.aicpu, "aicpu"), (s.aicore, "aicore")] {
            let start = Instant::now();
            assert_eq!(sync(&drv, stream, 100), Err(timeout), "{arch} {name}");
            assert_waited(start, Duration::from_millis(100), &format!("{arch} {name}"));
        }
        // A sync timeout leaves no error state and poisons nothing.
        assert_eq!(drv.stats().error_state_syncs, 0, "{arch}");
        assert!(drv.sticky_error(0).is_none(), "{arch}");
        drv.reset_device(0).unwrap();
    }
}

#[test]
fn a_hang_is_reaped_before_the_sync_times_out_and_its_stream_then_blocks_its_whole_timeout() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        drv.set_op_execute_timeout(100_000).unwrap();
        let hang = Session::register(&drv, "hang").unwrap();
        s.launch(&drv, hang, BLOCKS, &[], LaunchOrigin::Case).unwrap();
        let op_timeout = facts(arch).op_timeout_code();
        let start = Instant::now();
        // Reaped after 100 ms of waiting: the sync reports the op's code, not its own timeout.
        assert_eq!(
            sync(&drv, s.aicpu, 5000),
            Err(err(DriverCall::SynchronizeStreamWithTimeout, op_timeout)),
            "{arch}"
        );
        assert!(
            start.elapsed() >= Duration::from_millis(100),
            "{arch}: {:?}",
            start.elapsed()
        );
        assert_eq!(
            sync(&drv, s.aicore, 5000),
            Err(err(DriverCall::SynchronizeStreamWithTimeout, op_timeout)),
            "{arch}"
        );
        assert_eq!(drv.sticky_error(0), Some(op_timeout), "{arch}");
        // The stream is in error state: nothing runs, nothing stalls, and yet the next sync
        // blocks for its whole timeout (wall time).
        let start = Instant::now();
        assert_eq!(
            sync(&drv, s.aicore, 300),
            Err(err(
                DriverCall::SynchronizeStreamWithTimeout,
                codes::RT_AICPU_EXCEPTION
            )),
            "{arch}"
        );
        assert_waited(start, Duration::from_millis(300), arch.name());
        assert_eq!(drv.stats().error_state_syncs, 1, "{arch}");
    }
}

#[test]
fn the_drain_counts_only_stalled_time_too() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        // The clock starts before the launch: the kernel computes from then on.
        let start = Instant::now();
        let out = launch_spin(&drv, &s, BLOCKS, true);
        drv.synchronize_device_with_timeout(SYNC_MS).unwrap();
        assert!(
            start.elapsed() >= SPIN,
            "{arch}: drained after {:?}",
            start.elapsed()
        );
        // Everything was done when the drain returned.
        drv.destroy_stream(s.aicpu).unwrap();
        assert_every_block_ran(&drv, out, arch.name());

        let s = Session::init(&drv, 0).unwrap();
        drv.set_op_execute_timeout(NO_REAP_US).unwrap();
        let hang = Session::register(&drv, "hang").unwrap();
        s.launch(&drv, hang, BLOCKS, &[], LaunchOrigin::Case).unwrap();
        let start = Instant::now();
        assert_eq!(
            drv.synchronize_device_with_timeout(100),
            Err(err(
                DriverCall::SynchronizeDeviceWithTimeout,
                codes::RT_STREAM_SYNC_TIMEOUT
            )),
            "{arch}"
        );
        assert_waited(start, Duration::from_millis(100), arch.name());
        drv.reset_device(0).unwrap();
    }
}
