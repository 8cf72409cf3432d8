//! Hardware variants of the chain tests: a real card through the CANN driver (feature `onboard`).
//!
//! The card number comes from `ONBOARD_TEST_DEVICE`; [`arch_runner_tests!`](crate::arch_runner_tests)
//! marks every test ignored, so it never passes silently (`cargo test -p platform-a5 --features
//! onboard -- --ignored`). Each test takes the card's lease (blocking, in the host-wide lock
//! directory), which serialises them across threads, processes, nextest and other users. The hang
//! and noop kernels are loaded from the arch's blob directory (`ONBOARD_KERNEL_DIR`): real AICore
//! blobs need the CANN compiler, so on a card without them these tests fail at loading, saying so.

use std::sync::Arc;
use std::time::Instant;

use cardguard_reference::vector_add_case;
use platform_common::acl::AclDriver;
use platform_common::driver::{DeviceId, Driver, DriverCall};
use platform_common::error::codes;
use platform_common::kernel::{load_builtin, KernelBlob};
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::runner_base::{
    DeviceRunner, FinalizeError, RunError, RunRequest, RunnerConfig, UsageError,
};
use platform_common::timeouts::{TimeoutProfile, Timeouts};

use super::{ArchUnderTest, ITERATIONS};
use crate::measure::raw_probe;

/// The card under test, its lease, the driver and the real-card timeouts.
struct Card {
    id: DeviceId,
    lease: DeviceLease,
    driver: Arc<dyn Driver>,
    timeouts: Timeouts,
}

fn card(t: &ArchUnderTest) -> Card {
    let var = "ONBOARD_TEST_DEVICE";
    let text = std::env::var(var).unwrap_or_else(|_| panic!("set {var} to the card number to test on"));
    let id: DeviceId = text
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{var}={text:?} is not a card number"));
    let holder = format!("platform-{} onboard tests", t.arch());
    let lease = DeviceLease::acquire(&LeaseConfig::real_default(), id, &holder)
        .unwrap_or_else(|e| panic!("cannot take card {id}'s lease: {e}"));
    // What the arch entry's `onboard_driver` loads.
    let driver: Arc<dyn Driver> =
        Arc::new(AclDriver::load_default(t.entry.hal).unwrap_or_else(|e| panic!("{e}")));
    let timeouts = Timeouts::from_env(TimeoutProfile::Real).unwrap_or_else(|e| panic!("{e}"));
    Card {
        id,
        lease,
        driver,
        timeouts,
    }
}

fn kernel(t: &ArchUnderTest, name: &str) -> KernelBlob {
    load_builtin(t.arch(), name).unwrap_or_else(|e| panic!("{e} (real AICore blobs need the CANN compiler)"))
}

fn runner(t: &ArchUnderTest, c: &Card) -> Box<dyn DeviceRunner> {
    let mut cfg = RunnerConfig::new(c.id, c.timeouts);
    cfg.probe_kernel = Some(kernel(t, "noop"));
    let mut r = (t.entry.init_runner)(c.driver.clone(), cfg).unwrap_or_else(|e| panic!("{e}"));
    r.register_kernel(&kernel(t, "noop")).unwrap();
    r.register_kernel(&kernel(t, "hang")).unwrap();
    r
}

fn noop() -> RunRequest {
    RunRequest::new("noop", 1, Vec::new())
}

fn hang() -> RunRequest {
    RunRequest::new("hang", 1, Vec::new())
}

/// A healthy runner finalizes without a force reset.
pub fn onboard_healthy_runner_runs_and_finalizes_without_reset(t: &ArchUnderTest) {
    let c = card(t);
    let cfg = RunnerConfig::new(c.id, c.timeouts);
    let runner = (t.entry.init_runner)(c.driver.clone(), cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(!runner.base().is_unusable());
    let report = runner.finalize(&c.lease).unwrap();
    assert!(report.reset.is_none());
}

/// A block dim over the arch's limit is a usage error and leaves the runner usable.
pub fn onboard_block_dim_over_the_limit_is_a_usage_error(t: &ArchUnderTest) {
    let c = card(t);
    let mut r = runner(t, &c);
    let err = r
        .run(&RunRequest::new("noop", t.over_limit_block_dim, Vec::new()))
        .unwrap_err();
    assert!(
        matches!(err, RunError::Usage(UsageError::BlockDimOverArchLimit { .. })),
        "{err:?}"
    );
    assert!(!r.base().is_unusable());
    r.finalize(&c.lease).unwrap();
}

/// Another card's lease is refused before the device is touched.
pub fn onboard_wrong_card_lease_is_refused(t: &ArchUnderTest) {
    let c = card(t);
    let r = runner(t, &c);
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

/// Hang then noop on one runner: the noop is refused at the guard, 10x.
pub fn onboard_hang_then_noop_is_refused_at_the_guard_10x(t: &ArchUnderTest) {
    let c = card(t);
    for _ in 0..ITERATIONS {
        let mut r = runner(t, &c);
        assert!(matches!(r.run(&hang()), Err(RunError::Device(_))));
        assert!(matches!(r.run(&noop()), Err(RunError::Unusable(_))));
        r.finalize(&c.lease).unwrap();
    }
}

/// Soft reset, then a new runner in the same process: its init fails at stream creation, 10x.
pub fn onboard_soft_reset_then_reinit_fails_10x(t: &ArchUnderTest) {
    let c = card(t);
    for _ in 0..ITERATIONS {
        let mut r = runner(t, &c);
        assert!(r.run(&hang()).is_err());
        drop(r);
        let _ = c.driver.reset_device(c.id);
        let err = (t.entry.init_runner)(c.driver.clone(), RunnerConfig::new(c.id, c.timeouts)).unwrap_err();
        let error = err.driver_error().unwrap_or_else(|| panic!("{err}"));
        assert_eq!(error.call, DriverCall::CreateStream);
        assert_eq!(error.code, codes::RT_DRV_INTERNAL_ERROR);
        // Leave the card clean for the next iteration and test.
        c.driver.reset_device_force(&c.lease).unwrap();
    }
}

/// Force-reset recovery: finalize never waits on a stream, the reset is confirmed, and a new
/// runner runs the noop, 10x.
pub fn onboard_force_reset_recovery_10x(t: &ArchUnderTest) {
    let c = card(t);
    for _ in 0..ITERATIONS {
        let mut r = runner(t, &c);
        assert!(r.run(&hang()).is_err());
        let start = Instant::now();
        let report = r.finalize(&c.lease).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            start.elapsed() < c.timeouts.stream_sync,
            "finalize waited on a stream"
        );
        let reset = report.reset.unwrap();
        assert!(reset.attempts.last().unwrap().confirmed());
        let mut fresh = runner(t, &c);
        fresh.run(&noop()).unwrap();
        fresh.finalize(&c.lease).unwrap();
    }
}

/// The seed's naive worker on the raw driver (no guard): hang, then noop on the same context
/// fails at the arch's surfacing call, 10x.
pub fn onboard_raw_driver_hang_then_noop_cascades_10x(t: &ArchUnderTest) {
    let c = card(t);
    for _ in 0..ITERATIONS {
        let (hang, noop) = (kernel(t, "hang"), kernel(t, "noop"));
        let p = raw_probe(
            c.driver.clone(),
            t.entry.open_raw_worker,
            c.id,
            &c.timeouts,
            &hang,
            &noop,
        )
        .unwrap();
        assert_eq!(p.hang, Err(t.op_timeout));
        assert_eq!(p.noop, Err(t.cascade_surface));
        // Clean the card for the next iteration.
        let d = c.driver.as_ref();
        d.reset_device_force(&c.lease).unwrap();
        let _ = d.reset_device(c.id);
    }
}

/// The compute case alone, each on a fresh runner, 10x: it passes and finalize resets nothing.
pub fn onboard_compute_alone_10x(t: &ArchUnderTest) {
    let c = card(t);
    for seed in 0..ITERATIONS as u64 {
        let mut r = runner(t, &c);
        r.register_kernel(&kernel(t, "vector_add")).unwrap();
        let case = vector_add_case(4096, 4, seed);
        let out = r.run(&RunRequest::from(&case)).unwrap_or_else(|e| panic!("{e}"));
        case.check(&out.outputs).unwrap();
        assert!(r.finalize(&c.lease).unwrap().reset.is_none());
    }
}
