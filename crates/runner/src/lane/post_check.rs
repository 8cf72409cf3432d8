//! The post-case health check applied to an attempt (`--health-check`, DESIGN section 5 step 3):
//! after a case ran on a worker, [`super::heal::check_after`] decides whether the worker's card
//! is checked ([`ChipWorker::health_check`]); a failed check is the fault of the case that just
//! ran, never of the next one.
//!
//! This file owns turning a failed check into the attempt's failure: class `device_runtime`, the
//! failing call and code, the message `post-case health check failed: ...` (and what the attempt
//! had failed with before, if it had). The runner is left unusable by the check itself, so the
//! lane's heal step retires and force-resets it as for any device fault, and the dispatcher
//! retries the case. It never closes a worker and never talks to the dispatcher.

use platform_common::FailureClass;

use super::heal::{self, HealthCheck};
use crate::case::run_error_report;
use crate::exec::CaseRun;
use crate::worker::ChipWorker;

/// The prefix of a failed check's message.
pub const CHECK_FAILED: &str = "post-case health check failed";

/// The raw attempt `raw` of a case that just ran on `worker`, after the health check `mode`
/// asks for (unchanged when no check runs or the check passes).
pub fn apply(mode: HealthCheck, worker: &mut ChipWorker, raw: CaseRun) -> CaseRun {
    let touched = worker.take_touched();
    if !heal::check_after(mode, touched, raw.error.as_ref(), worker.is_unusable()) {
        return raw;
    }
    match worker.health_check() {
        Ok(()) => raw,
        Err(e) => {
            let mut error = run_error_report(&e, CHECK_FAILED);
            error.class = FailureClass::DeviceRuntime;
            error.post_case_check = true;
            if let Some(before) = &raw.error {
                error.message = format!("{}; the attempt had failed before it: {before}", error.message);
            }
            tracing::warn!(device = worker.device(), "{}", error.message);
            CaseRun::failed(error)
        }
    }
}
