//! The a2a3 partial-good mask on the simulated card: `halMemCtl` at init reports which AICores are
//! usable (`SimConfig::with_core_mask`), a run asking for more blocks than that is a usage error
//! found before any driver call, and a run within the usable cores passes.

#![cfg(feature = "sim")]

mod common;

use cardguard_reference::vector_add_case;
use cardguard_test_support::bench::{run_case, CaseOutcome, SimBench, WORKLOAD_KERNELS};
use cardguard_test_support::suites::CARD;
use platform_a2a3::DeviceRunner;
use platform_common::driver::DriverCall;
use platform_common::runner_base::{RunError, RunRequest, UsageError};
use platform_common::sim::SimDriver;
use platform_common::FailureClass;

/// A runner on a card whose partial-good mask is `mask`, in a fresh simulated process of `bench`'s
/// machine, with the workload kernels registered.
fn masked_runner(bench: &SimBench, mask: u64) -> (std::sync::Arc<SimDriver>, DeviceRunner) {
    let mut b = bench.clone();
    b.sim = b.sim.clone().with_core_mask(mask);
    let process = b.process();
    let mut runner = DeviceRunner::init(process.clone(), b.config(CARD, None).unwrap()).unwrap();
    for name in WORKLOAD_KERNELS {
        runner.register_kernel(&b.kernel(name).unwrap()).unwrap();
    }
    (process, runner)
}

/// Three usable cores: a four-block run is refused as a usage error, with no driver call, and the
/// runner stays healthy; a three-block run then passes.
#[test]
fn block_dim_over_the_usable_cores_is_a_usage_error_without_a_driver_call() {
    let bench = common::UNDER_TEST.bench("");
    let mask = 0b0111;
    let (process, mut runner) = masked_runner(&bench, mask);
    assert_eq!(
        runner.registers().window().core_mask,
        mask,
        "the mask halMemCtl reported"
    );
    assert_eq!(runner.registers().usable_cores(), 3);
    let before = process.stats();
    let case = vector_add_case(4096, 4, 1);
    let err = runner.run(&RunRequest::from(&case)).unwrap_err();
    assert_eq!(
        err,
        RunError::Usage(UsageError::BlockDimOverUsableCores {
            block_dim: 4,
            usable: 3,
            device: CARD,
            mask,
        })
    );
    assert_eq!(err.class(), FailureClass::Usage);
    assert_eq!(
        process.stats().calls,
        before.calls,
        "a usage error makes no driver call"
    );
    assert_eq!(
        process.stats().calls_of(DriverCall::SetDevice),
        before.calls_of(DriverCall::SetDevice)
    );
    assert!(!runner.base().is_unusable());
    assert_eq!(
        run_case(&mut runner, &vector_add_case(4096, 3, 2)),
        CaseOutcome::Passed
    );
    let lease = bench.lease(CARD).unwrap();
    assert!(runner.finalize(&lease).unwrap().reset.is_none());
}

/// Four usable cores that are not the first four: a four-block run passes, a five-block run is
/// refused; on a card with every core usable the same five-block run passes, so the refusal is
/// the mask's and not the kernel's or the arch's.
#[test]
fn a_run_within_the_usable_cores_passes() {
    let bench = common::UNDER_TEST.bench("");
    let mask = 0b1111_0000;
    let (_process, mut runner) = masked_runner(&bench, mask);
    assert_eq!(runner.registers().usable_cores(), 4);
    assert_eq!(
        run_case(&mut runner, &vector_add_case(4096, 4, 3)),
        CaseOutcome::Passed
    );
    let five = vector_add_case(4096, 5, 4);
    assert!(matches!(
        runner.run(&RunRequest::from(&five)),
        Err(RunError::Usage(UsageError::BlockDimOverUsableCores {
            usable: 4,
            ..
        }))
    ));
    let (_full_process, mut full) = masked_runner(&bench, u64::MAX);
    assert_eq!(full.registers().usable_cores(), 24, "limited to the arch's cores");
    assert_eq!(run_case(&mut full, &five), CaseOutcome::Passed);
}
