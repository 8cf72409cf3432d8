//! Running one case body on a chip worker and judging it.
//!
//! This module owns what one attempt does on the device and how its failure is classified: from
//! the typed errors ([`RunError::class`], [`FailureClass`]) and the golden comparison, never from
//! message text. It never retires, retries or escalates anything itself (the lane's heal policy and
//! the dispatcher decide, from the attempt's typed class).

use std::time::{Duration, Instant};

use platform_common::runner_base::{FinalizeError, FinalizeReport, RunError, RunRequest};
use platform_common::timeouts::Timeouts;
use platform_common::{Arch, DeviceLease, FailureClass};

use crate::case::{CaseSpec, ExpectOpTimeout, Generator, Tolerance};
use crate::report::model::{AttemptOutcome, ErrorReport};
use crate::worker::{ChipWorker, KernelSetupError, WorkerEnv};

/// Slack on top of the configured timeouts in the op-timeout case's liveness bounds.
pub const LIVENESS_SLACK: Duration = Duration::from_secs(5);

/// The result of one attempt in the lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseRun {
    /// Passed or failed.
    pub outcome: AttemptOutcome,
    /// Why it failed (its class tells the lane whether the worker is retired:
    /// [`crate::lane::heal::after_case`]).
    pub error: Option<ErrorReport>,
}

impl CaseRun {
    /// A pass.
    pub fn passed() -> Self {
        Self {
            outcome: AttemptOutcome::Passed,
            error: None,
        }
    }

    /// A failure of `error`'s class.
    pub fn failed(error: ErrorReport) -> Self {
        Self {
            outcome: AttemptOutcome::Failed,
            error: Some(error),
        }
    }
}

/// The report of a runner error, classified by its type.
pub fn run_error_report(e: &RunError, context: &str) -> ErrorReport {
    let message = format!("{context}: {e}");
    let mut report = match e.driver_error() {
        Some(d) => ErrorReport::from_driver(&d, message),
        None => ErrorReport::new(e.class(), message),
    };
    report.class = e.class();
    report
}

fn setup_error_report(e: &KernelSetupError) -> ErrorReport {
    match e {
        KernelSetupError::Load { .. } => ErrorReport::new(FailureClass::Infrastructure, e.to_string()),
        KernelSetupError::Register { source, .. } => run_error_report(source, &e.to_string()),
    }
}

/// Runs a compute case: registers its kernels, runs every launch of its workload and compares the
/// outputs with the goldens.
pub fn run_compute(
    worker: &mut ChipWorker,
    env: &mut WorkerEnv,
    case: &CaseSpec,
    generator: &Generator,
    tolerance: Option<Tolerance>,
) -> CaseRun {
    if let Err(e) = worker.ensure_kernels(env, &case.kernels) {
        return CaseRun::failed(setup_error_report(&e));
    }
    let workload = generator(env.arch, case.seed);
    if workload.launches.is_empty() {
        return CaseRun::failed(ErrorReport::new(
            FailureClass::Usage,
            format!("case {:?} generated no launch", case.name),
        ));
    }
    for (i, launch) in workload.launches.iter().enumerate() {
        let mut launch = launch.clone();
        if let Some(t) = tolerance {
            launch.rtol = t.rtol;
            launch.atol = t.atol;
        }
        match worker.run(&RunRequest::from(&launch)) {
            Ok(out) => {
                if let Err(m) = launch.check(&out.outputs) {
                    return CaseRun::failed(ErrorReport::new(
                        FailureClass::Result,
                        format!("launch {} ({}): golden mismatch: {m}", i + 1, launch.label),
                    ));
                }
            }
            Err(e) => {
                let context = format!("launch {} ({})", i + 1, launch.label);
                return CaseRun::failed(run_error_report(&e, &context));
            }
        }
    }
    CaseRun::passed()
}

/// The liveness bound on closing a worker after an op-timeout: three force-reset attempts' worth of
/// configured timeouts (each a bounded drain, a probe stream sync and a probe kernel), plus slack.
pub fn close_bound(t: &Timeouts) -> Duration {
    (t.stream_sync * 2 + t.op_execute) * 3 + LIVENESS_SLACK
}

/// The liveness bound on the op-timeout run itself: the stream-sync timeout plus slack.
pub fn run_bound(t: &Timeouts) -> Duration {
    t.stream_sync + LIVENESS_SLACK
}

/// Runs the op-timeout case on its own worker and closes it (the close is part of the case).
/// Returns the attempt and the close's result, which tells the lane whether the card recovered.
pub fn run_expect_op_timeout(
    mut worker: ChipWorker,
    env: &mut WorkerEnv,
    lease: &DeviceLease,
    case: &CaseSpec,
    spec: &ExpectOpTimeout,
) -> (CaseRun, Result<FinalizeReport, FinalizeError>) {
    let timeouts = env.timeouts;
    let arch = env.arch;
    if let Err(e) = worker.ensure_kernels(env, &case.kernels) {
        let run = CaseRun::failed(setup_error_report(&e));
        return (run, worker.close(lease));
    }
    let req = RunRequest::new(spec.kernel.clone(), spec.block_dim, Vec::new());
    let start = Instant::now();
    let result = worker.run(&req);
    let ran_for = start.elapsed();
    let run = judge_op_timeout(arch, &timeouts, result.map(|_| ()), ran_for);
    let start = Instant::now();
    let closed = worker.close(lease);
    let closed_in = start.elapsed();
    let bound = close_bound(&timeouts);
    if run.outcome == AttemptOutcome::Passed && closed_in >= bound {
        let e = ErrorReport::new(
            FailureClass::Result,
            format!(
                "close took {} ms, over the liveness bound of {} ms (3 reset attempts' worth of \
                 configured timeouts + 5 s)",
                closed_in.as_millis(),
                bound.as_millis()
            ),
        );
        return (CaseRun::failed(e), closed);
    }
    (run, closed)
}

/// Judges the op-timeout run: it must fail with the arch's op-timeout code within the bound.
pub fn judge_op_timeout(
    arch: Arch,
    timeouts: &Timeouts,
    result: Result<(), RunError>,
    ran_for: Duration,
) -> CaseRun {
    let want = crate::platform::arch_entry(arch).facts.op_timeout_code();
    let bound = run_bound(timeouts);
    match result {
        Ok(()) => CaseRun::failed(ErrorReport::new(
            FailureClass::Result,
            format!("expected the op-timeout ({want}) but the run succeeded"),
        )),
        Err(RunError::Device(e)) if e.code == want => {
            if ran_for < bound {
                // The fault was the point of the case: the worker is closed by the case itself.
                CaseRun::passed()
            } else {
                CaseRun::failed(ErrorReport::from_driver(
                    &e,
                    format!(
                        "the op-timeout surfaced after {} ms, over the liveness bound of {} ms \
                         (stream-sync timeout + 5 s)",
                        ran_for.as_millis(),
                        bound.as_millis()
                    ),
                ))
                .with_class(FailureClass::Result)
            }
        }
        Err(e) => CaseRun::failed(run_error_report(&e, &format!("expected the op-timeout ({want})"))),
    }
}

impl CaseRun {
    fn with_class(mut self, class: FailureClass) -> Self {
        if let Some(e) = &mut self.error {
            e.class = class;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use platform_common::driver::DriverCall;
    use platform_common::error::codes;
    use platform_common::timeouts::TimeoutProfile;
    use platform_common::DriverError;

    use super::*;
    use crate::lane::heal::{self, PoolStep};

    fn t() -> Timeouts {
        Timeouts::defaults(TimeoutProfile::Sim)
    }

    #[test]
    fn op_timeout_is_judged_by_code_and_time() {
        let e = DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR);
        let ok = judge_op_timeout(
            Arch::A5,
            &t(),
            Err(RunError::Device(e)),
            Duration::from_millis(600),
        );
        assert_eq!(ok.outcome, AttemptOutcome::Passed);
        let wrong_arch = judge_op_timeout(Arch::A2a3, &t(), Err(RunError::Device(e)), Duration::ZERO);
        assert_eq!(wrong_arch.outcome, AttemptOutcome::Failed);
        assert_eq!(wrong_arch.error.unwrap().class, FailureClass::DeviceRuntime);
        let slow = judge_op_timeout(Arch::A5, &t(), Err(RunError::Device(e)), Duration::from_secs(7));
        let err = slow.error.unwrap();
        assert_eq!(err.class, FailureClass::Result);
        assert!(err.message.contains("liveness bound"), "{}", err.message);
        let passed = judge_op_timeout(Arch::A5, &t(), Ok(()), Duration::ZERO);
        assert_eq!(passed.error.unwrap().class, FailureClass::Result);
    }

    #[test]
    fn run_errors_keep_their_typed_class() {
        let d = DriverError::new(DriverCall::Malloc, codes::INVALID_PARAM);
        // A driver error during a run marks the runner unusable whatever its code: device-runtime.
        let r = run_error_report(&RunError::Device(d), "launch 1");
        assert_eq!(r.class, FailureClass::DeviceRuntime);
        assert_eq!(r.code, Some(platform_common::error::codes::INVALID_PARAM));
        let u = run_error_report(
            &RunError::Usage(platform_common::runner_base::UsageError::BlockDimZero),
            "launch 1",
        );
        assert_eq!(u.class, FailureClass::Usage);
        assert_eq!(
            heal::after_case(CaseRun::failed(u).error.as_ref()),
            PoolStep::Keep
        );
    }

    #[test]
    fn bounds_follow_the_configured_timeouts() {
        let t = t();
        assert_eq!(run_bound(&t), Duration::from_millis(6500));
        assert_eq!(
            close_bound(&t),
            Duration::from_millis((1500 * 2 + 500) * 3 + 5000)
        );
    }
}
