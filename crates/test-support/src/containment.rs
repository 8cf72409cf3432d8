//! The seed's measurements ([`crate::measure`]) through `libsim_acl.so`,
//! for the arch crates' tests: a process factory that makes each simulated process a fresh copy
//! of the library behind the `acl` driver, and views of the measurements without their timings,
//! so a run through the C ABI can be compared field by field with the in-process one.
//!
//! This module never asserts: the tests compare the views.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use platform_common::driver::DriverCall;
use platform_common::error::Code;
use platform_common::runner_base::{
    FinalizeError, FinalizeReport, InitError, ResetAttempt, RunError, RunOutput,
};

use crate::bench::{ProcessFactory, SimBench, SimProcess};
use crate::locate::acl_process;
use crate::measure::RecoveryProbe;

/// A factory whose every process is a fresh copy of `libsim_acl.so` in `dir`, loaded with the
/// `acl` driver and simulating the bench's machine.
pub fn acl_processes(dir: PathBuf) -> ProcessFactory {
    Arc::new(move |cfg| {
        acl_process(&dir, cfg)
            .map(|d| Arc::new(d) as Arc<dyn SimProcess>)
            .map_err(|e| e.to_string())
    })
}

/// `bench` with its processes made through `libsim_acl.so` (copies in `dir`).
pub fn through_acl(bench: &SimBench, dir: PathBuf) -> SimBench {
    bench.clone().with_processes(acl_processes(dir))
}

/// A health event without its time and wording: kind, call, code.
pub type EventView = (&'static str, Option<DriverCall>, Option<Code>);

/// A [`RecoveryProbe`] without timings.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryView {
    /// The trigger's run.
    pub trigger: Result<RunOutput, RunError>,
    /// Unusable after the trigger.
    pub unusable_after_trigger: bool,
    /// The noop tried before finalize.
    pub refused_noop: Result<RunOutput, RunError>,
    /// Finalize, every attempt's duration zeroed.
    pub finalize: Result<FinalizeReport, FinalizeError>,
    /// Error-state syncs during finalize.
    pub finalize_error_state_syncs: u64,
    /// The sticky error left after finalize.
    pub sticky_after_finalize: Option<Code>,
    /// The rebuild.
    pub rebuilt: Option<Result<(), InitError>>,
    /// The noop on the rebuilt runner.
    pub noop_after: Option<Result<RunOutput, RunError>>,
    /// The compute case on the rebuilt runner, as text (`CaseOutcome` carries floats).
    pub compute_after: Option<String>,
    /// The poisoned runner's health events.
    pub events: Vec<EventView>,
}

impl From<&RecoveryProbe> for RecoveryView {
    fn from(p: &RecoveryProbe) -> Self {
        Self {
            trigger: p.trigger.clone(),
            unusable_after_trigger: p.unusable_after_trigger,
            refused_noop: p.refused_noop.clone(),
            finalize: untimed(&p.finalize),
            finalize_error_state_syncs: p.finalize_error_state_syncs,
            sticky_after_finalize: p.sticky_after_finalize,
            rebuilt: p.rebuilt.clone(),
            noop_after: p.noop_after.clone(),
            compute_after: p.compute_after.as_ref().map(|c| format!("{c:?}")),
            events: p.events.iter().map(|e| (e.kind_name(), e.call, e.code)).collect(),
        }
    }
}

/// `finalize` with every reset attempt's duration zeroed.
pub fn untimed(finalize: &Result<FinalizeReport, FinalizeError>) -> Result<FinalizeReport, FinalizeError> {
    let zero =
        |attempts: &mut Vec<ResetAttempt>| attempts.iter_mut().for_each(|a| a.duration = Duration::ZERO);
    let mut f = finalize.clone();
    match &mut f {
        Ok(report) => {
            if let Some(reset) = &mut report.reset {
                zero(&mut reset.attempts);
            }
        }
        Err(FinalizeError::ResetFailed(failed)) => zero(&mut failed.attempts),
        Err(FinalizeError::WrongLease(_)) => {}
    }
    f
}
