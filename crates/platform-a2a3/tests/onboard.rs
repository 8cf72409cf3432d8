//! Hardware variants of the chain tests: a real card through the CANN driver.
//!
//! Behind the `onboard` feature and a card number in `ONBOARD_TEST_DEVICE`; every test is ignored
//! by default so it never passes silently (`cargo test -p platform-a2a3 --features onboard --
//! --ignored`). Each test takes the card's lease (blocking, in the host-wide lock directory), which
//! serialises them across threads, processes, nextest and other users. The hang and noop kernels
//! are loaded from the arch's blob directory (`ONBOARD_KERNEL_DIR`): real AICore blobs need the
//! CANN compiler, so on a card without them these tests fail at loading, saying so.

#![cfg(feature = "onboard")]

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::{Runner, ARCH, CASCADE_SURFACE, ITERATIONS, OP_TIMEOUT, OVER_LIMIT_BLOCK_DIM};
use platform_common::driver::{AicpuTask, DeviceId, Driver, DriverCall, KernelArg, LaunchOrigin};
use platform_common::error::codes;
use platform_common::kernel::{load_builtin, KernelBlob};
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::reference::vector_add_case;
use platform_common::runner_base::{FinalizeError, RunError, RunRequest, RunnerConfig, UsageError};
use platform_common::timeouts::{TimeoutProfile, Timeouts};
use platform_common::{Arch, DriverError};

/// The card under test, its lease, the driver and the real-card timeouts.
struct Card {
    id: DeviceId,
    lease: DeviceLease,
    driver: Arc<dyn Driver>,
    timeouts: Timeouts,
}

fn card() -> Card {
    let var = "ONBOARD_TEST_DEVICE";
    let text = std::env::var(var).unwrap_or_else(|_| panic!("set {var} to the card number to test on"));
    let id: DeviceId = text
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{var}={text:?} is not a card number"));
    let lease = DeviceLease::acquire(&LeaseConfig::real_default(), id, "platform-a2a3 onboard tests")
        .unwrap_or_else(|e| panic!("cannot take card {id}'s lease: {e}"));
    let driver = platform_a2a3::drivers::onboard_driver().unwrap_or_else(|e| panic!("{e}"));
    let timeouts = Timeouts::from_env(TimeoutProfile::Real).unwrap_or_else(|e| panic!("{e}"));
    Card {
        id,
        lease,
        driver,
        timeouts,
    }
}

fn kernel(name: &str) -> KernelBlob {
    load_builtin(ARCH, name).unwrap_or_else(|e| panic!("{e} (real AICore blobs need the CANN compiler)"))
}

fn runner(c: &Card) -> Runner {
    let mut cfg = RunnerConfig::new(c.id, c.timeouts);
    cfg.probe_kernel = Some(kernel("noop"));
    let mut r = Runner::init(c.driver.clone(), cfg).unwrap_or_else(|e| panic!("{e}"));
    r.register_kernel(&kernel("noop")).unwrap();
    r.register_kernel(&kernel("hang")).unwrap();
    r
}

fn noop() -> RunRequest {
    RunRequest::new("noop", 1, Vec::new())
}

fn hang() -> RunRequest {
    RunRequest::new("hang", 1, Vec::new())
}

#[test]
#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
fn onboard_healthy_runner_runs_and_finalizes_without_reset() {
    let c = card();
    let cfg = RunnerConfig::new(c.id, c.timeouts);
    let runner = Runner::init(c.driver.clone(), cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(!runner.base().is_unusable());
    let report = runner.finalize(&c.lease).unwrap();
    assert!(report.reset.is_none());
}

#[test]
#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
fn onboard_block_dim_over_the_limit_is_a_usage_error() {
    let c = card();
    let mut r = runner(&c);
    let err = r
        .run(&RunRequest::new("noop", OVER_LIMIT_BLOCK_DIM, Vec::new()))
        .unwrap_err();
    assert!(
        matches!(err, RunError::Usage(UsageError::BlockDimOverArchLimit { .. })),
        "{err:?}"
    );
    assert!(!r.base().is_unusable());
    r.finalize(&c.lease).unwrap();
}

#[test]
#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
fn onboard_wrong_card_lease_is_refused() {
    let c = card();
    let r = runner(&c);
    // Another card's lease, in a private lock directory: refused before the device is touched.
    let dir = tempfile::tempdir().unwrap();
    let other = DeviceLease::try_acquire(
        &LeaseConfig {
            dir: dir.path().into(),
        },
        c.id + 1,
        "t",
    )
    .unwrap();
    assert!(matches!(r.finalize(&other), Err(FinalizeError::WrongLease(_))));
}

#[test]
#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
fn onboard_hang_then_noop_is_refused_at_the_guard_10x() {
    let c = card();
    for _ in 0..ITERATIONS {
        let mut r = runner(&c);
        assert!(matches!(r.run(&hang()), Err(RunError::Device(_))));
        assert!(matches!(r.run(&noop()), Err(RunError::Unusable(_))));
        r.finalize(&c.lease).unwrap();
    }
}

#[test]
#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
fn onboard_soft_reset_then_reinit_fails_10x() {
    let c = card();
    for _ in 0..ITERATIONS {
        let mut r = runner(&c);
        assert!(r.run(&hang()).is_err());
        drop(r);
        let _ = c.driver.reset_device(c.id);
        let err = Runner::init(c.driver.clone(), RunnerConfig::new(c.id, c.timeouts)).unwrap_err();
        assert_eq!(err.error.call, DriverCall::CreateStream);
        assert_eq!(err.error.code, codes::RT_DRV_INTERNAL_ERROR);
        // Leave the card clean for the next iteration and test.
        c.driver.reset_device_force(&c.lease).unwrap();
    }
}

#[test]
#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
fn onboard_force_reset_recovery_10x() {
    let c = card();
    for _ in 0..ITERATIONS {
        let mut r = runner(&c);
        assert!(r.run(&hang()).is_err());
        let start = Instant::now();
        let report = r.finalize(&c.lease).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            start.elapsed() < c.timeouts.stream_sync,
            "finalize waited on a stream"
        );
        let reset = report.reset.unwrap();
        assert!(reset.attempts.last().unwrap().confirmed());
        let mut fresh = runner(&c);
        fresh.run(&noop()).unwrap();
        fresh.finalize(&c.lease).unwrap();
    }
}

/// One run of the seed's naive worker on the raw driver (no guard): a5 maps its registers first,
/// then the kernel is registered, launched AICore then AICPU, and both streams synced.
fn raw_run(
    c: &Card,
    streams: (platform_common::driver::Stream, platform_common::driver::Stream),
    name: &str,
) -> Result<(), DriverError> {
    let d = c.driver.as_ref();
    let (aicpu, aicore) = streams;
    if ARCH == Arch::A5 {
        d.hal_res_map(c.id, 0)?;
    }
    let blob = kernel(name);
    let handle = d.register_kernel(&blob)?;
    let args = vec![KernelArg::Scalar(0); blob.meta().num_args as usize];
    d.launch_aicore(aicore, handle, 1, &args, LaunchOrigin::Case)?;
    d.launch_aicpu(aicpu, AicpuTask { aicore })?;
    d.synchronize_stream_with_timeout(aicpu, c.timeouts.stream_sync_ms())?;
    d.synchronize_stream_with_timeout(aicore, c.timeouts.stream_sync_ms())
}

#[test]
#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
fn onboard_raw_driver_hang_then_noop_cascades_10x() {
    let c = card();
    for _ in 0..ITERATIONS {
        let d = c.driver.as_ref();
        let _ = d.init();
        d.set_device(c.id).unwrap();
        let _ = d.set_op_execute_timeout(c.timeouts.op_execute.as_micros() as u64);
        if ARCH == Arch::A2a3 {
            d.hal_mem_ctl(c.id).unwrap();
        }
        let streams = (d.create_stream().unwrap(), d.create_stream().unwrap());
        assert_eq!(raw_run(&c, streams, "hang"), Err(OP_TIMEOUT));
        assert_eq!(raw_run(&c, streams, "noop"), Err(CASCADE_SURFACE));
        // Clean the card for the next iteration.
        d.reset_device_force(&c.lease).unwrap();
        let _ = d.reset_device(c.id);
    }
}

#[test]
#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
fn onboard_compute_alone_10x() {
    let c = card();
    for seed in 0..ITERATIONS as u64 {
        let mut r = runner(&c);
        r.register_kernel(&kernel("vector_add")).unwrap();
        let case = vector_add_case(4096, 4, seed);
        let out = r.run(&RunRequest::from(&case)).unwrap_or_else(|e| panic!("{e}"));
        case.check(&out.outputs).unwrap();
        assert!(r.finalize(&c.lease).unwrap().reset.is_none());
    }
}
