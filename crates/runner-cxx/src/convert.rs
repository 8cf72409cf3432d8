//! From the platform crates' types to the bridge's: [`HostError`] (every way a C++ call fails)
//! into an `ErrorInfo` whose kind, class, call and code come from the error's variant and fields,
//! never from its message; health events, reset and finalize reports into their shared structs.
//! This file converts; it decides nothing.

use platform_common::error::CodeSpace;
use platform_common::health::HealthEvent;
use platform_common::runner_base::{
    FinalizeError, FinalizeReport, InitError, ResetAttempt, ResetReport, RunError,
};
use platform_common::{Arch, DriverError, FailureClass};

use crate::bridge::ffi;

/// Why a call of the C++ API failed. Its message is one line (the wrapped error's).
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A run or a kernel registration failed (device, unusable or usage).
    #[error(transparent)]
    Run(RunError),
    /// The runner's init failed.
    #[error(transparent)]
    Init(InitError),
    /// Finalize did not end with a usable card.
    #[error(transparent)]
    Finalize(FinalizeError),
    /// The lease could not be taken.
    #[error(transparent)]
    Lease(platform_common::lease::LeaseError),
    /// A kernel blob could not be loaded.
    #[error(transparent)]
    Kernel(platform_common::kernel::KernelError),
    /// The CANN libraries could not be loaded.
    #[error(transparent)]
    Acl(platform_common::acl::AclLoadError),
    /// The simulated machine failed.
    #[error(transparent)]
    Sim(platform_common::sim::SimError),
    /// A bad fault plan.
    #[error(transparent)]
    Plan(platform_common::sim::FaultPlanError),
    /// Bad timeouts (from the environment).
    #[error(transparent)]
    Timeouts(platform_common::timeouts::TimeoutError),
    /// A bad option or call order.
    #[error("{0}")]
    Usage(String),
}

/// `result`, with its error (if any) written into `err` first.
pub fn fill<T>(err: &mut ffi::ErrorInfo, result: Result<T, HostError>) -> Result<T, HostError> {
    if let Err(e) = &result {
        *err = error_info(e);
    }
    result
}

/// [`fill`], with the error's card set to `card` (the runner's or the lease's: a run's driver
/// error does not carry it).
pub fn fill_card<T>(
    err: &mut ffi::ErrorInfo,
    card: u32,
    result: Result<T, HostError>,
) -> Result<T, HostError> {
    let result = fill(err, result);
    if result.is_err() {
        err.device = card;
    }
    result
}

/// The `ErrorInfo` of `e`.
pub fn error_info(e: &HostError) -> ffi::ErrorInfo {
    let (kind, class, driver, device) = match e {
        HostError::Run(RunError::Unusable(u)) => (
            ffi::ErrorKind::Unusable,
            FailureClass::DeviceRuntime,
            Some(u.first_cause),
            Some(u.device),
        ),
        HostError::Run(r @ RunError::Device(d)) => (ffi::ErrorKind::Device, r.class(), Some(*d), None),
        HostError::Run(r @ RunError::Usage(_)) => (ffi::ErrorKind::Usage, r.class(), None, None),
        HostError::Init(i) => (
            ffi::ErrorKind::Init,
            i.class(),
            i.driver_error(),
            Some(i.device()),
        ),
        HostError::Finalize(f @ FinalizeError::ResetFailed(r)) => (
            ffi::ErrorKind::ResetFailed,
            f.class(),
            r.first_cause,
            Some(r.device),
        ),
        HostError::Finalize(f @ FinalizeError::WrongLease(w)) => {
            (ffi::ErrorKind::Usage, f.class(), None, Some(w.runner_device))
        }
        HostError::Lease(_) => (ffi::ErrorKind::Lease, FailureClass::Infrastructure, None, None),
        HostError::Kernel(_) => (ffi::ErrorKind::Kernel, FailureClass::Infrastructure, None, None),
        HostError::Acl(_) | HostError::Sim(_) => {
            (ffi::ErrorKind::Driver, FailureClass::Infrastructure, None, None)
        }
        HostError::Plan(_) | HostError::Timeouts(_) | HostError::Usage(_) => {
            (ffi::ErrorKind::Usage, FailureClass::Usage, None, None)
        }
    };
    let reset_attempts = match e {
        HostError::Finalize(FinalizeError::ResetFailed(r)) => r.attempts.iter().map(reset_attempt).collect(),
        _ => Vec::new(),
    };
    ffi::ErrorInfo {
        kind,
        class_name: class.to_string(),
        call: driver.map(|d| d.call.name().to_owned()).unwrap_or_default(),
        code: driver.map_or(0, |d| d.code.raw),
        code_space: driver.map(|d| space(d.code.space).to_owned()).unwrap_or_default(),
        code_name: driver.map(|d| d.code.name().to_owned()).unwrap_or_default(),
        device: device.unwrap_or(0),
        message: e.to_string(),
        reset_attempts,
    }
}

fn space(s: CodeSpace) -> &'static str {
    match s {
        CodeSpace::Acl => "acl",
        CodeSpace::Hal => "hal",
        CodeSpace::Loader => "loader",
    }
}

fn cause(d: Option<DriverError>) -> String {
    d.map(|d| d.to_string()).unwrap_or_default()
}

/// A health event for C++.
pub fn health_event(e: &HealthEvent) -> ffi::HealthEvent {
    ffi::HealthEvent {
        kind: e.kind_name().to_owned(),
        device: e.device,
        call: e.call.map(|c| c.name().to_owned()).unwrap_or_default(),
        has_code: e.code.is_some(),
        code: e.code.map_or(0, |c| c.raw),
        detail: e.detail.clone(),
        unix_ms: e.unix_ms,
        json: serde_json::to_string(e).unwrap_or_default(),
    }
}

/// One reset attempt for C++.
pub fn reset_attempt(a: &ResetAttempt) -> ffi::ResetAttempt {
    ffi::ResetAttempt {
        attempt: a.attempt,
        has_rc: a.rc.is_some(),
        rc: a.rc.unwrap_or(0),
        reset_error: cause(a.reset_error),
        probe_ok: a.confirmed(),
        probe: a.probe.to_string(),
        duration_ms: a.duration.as_secs_f64() * 1000.0,
    }
}

fn reset_report(r: Option<&ResetReport>, device: u32, arch: Arch) -> ffi::ResetReport {
    ffi::ResetReport {
        device: r.map_or(device, |r| r.device),
        arch: arch.name().to_owned(),
        first_cause: cause(r.and_then(|r| r.first_cause)),
        attempts: r
            .map(|r| r.attempts.iter().map(reset_attempt).collect())
            .unwrap_or_default(),
    }
}

/// A finalize report for C++.
pub fn finalize_report(r: &FinalizeReport, arch: Arch) -> ffi::FinalizeReport {
    ffi::FinalizeReport {
        device: r.device,
        force_reset: r.reset.is_some(),
        reset: reset_report(r.reset.as_ref(), r.device, arch),
        teardown_errors: r.teardown_errors.iter().map(ToString::to_string).collect(),
    }
}

#[cfg(test)]
mod tests {
    use platform_common::driver::DriverCall;
    use platform_common::error::codes;
    use platform_common::runner_base::{UnusableError, UsageError, WrongLease};

    use super::*;

    fn fault() -> DriverError {
        DriverError::new(DriverCall::LaunchAicore, codes::RT_MEMORY_ALLOCATION)
    }

    #[test]
    fn kinds_and_classes_follow_the_variant_and_the_call_and_code_its_fields() {
        let device = error_info(&HostError::Run(RunError::Device(fault())));
        assert_eq!(device.kind, ffi::ErrorKind::Device);
        assert_eq!(
            (
                device.class_name.as_str(),
                device.call.as_str(),
                device.code,
                device.code_space.as_str()
            ),
            ("device_runtime", "rtKernelLaunchWithHandleV2", 207001, "acl")
        );
        assert_eq!(device.code_name, "ACL_ERROR_RT_MEMORY_ALLOCATION");

        let refused = error_info(&HostError::Run(RunError::Unusable(UnusableError {
            device: 4,
            arch: Arch::A2a3,
            first_cause: fault(),
        })));
        assert_eq!(refused.kind, ffi::ErrorKind::Unusable);
        assert_eq!((refused.device, refused.code), (4, 207001));

        let usage = error_info(&HostError::Run(RunError::Usage(UsageError::BlockDimZero)));
        assert_eq!(usage.kind, ffi::ErrorKind::Usage);
        assert_eq!(
            (usage.class_name.as_str(), usage.call.as_str(), usage.code),
            ("usage", "", 0)
        );

        let wrong = error_info(&HostError::Finalize(FinalizeError::WrongLease(WrongLease {
            runner_device: 2,
            lease_card: 3,
        })));
        assert_eq!((wrong.kind, wrong.device), (ffi::ErrorKind::Usage, 2));
        assert!(wrong.message.contains("lease of card 3"), "{}", wrong.message);
    }

    #[test]
    fn fill_card_names_the_card_only_on_an_error() {
        let mut err = error_info(&HostError::Usage(String::new()));
        err.kind = ffi::ErrorKind::None;
        err.device = 0;
        assert!(fill_card(&mut err, 7, Ok::<_, HostError>(())).is_ok());
        assert_eq!((err.kind, err.device), (ffi::ErrorKind::None, 0));
        let failed = fill_card(
            &mut err,
            7,
            Err::<(), _>(HostError::Run(RunError::Device(fault()))),
        );
        assert!(failed.is_err());
        assert_eq!((err.kind, err.device), (ffi::ErrorKind::Device, 7));
    }
}
