//! One attempt of a case body on a chip worker: [`execute`].
//!
//! In order: the case's kernels registered; the class's device fixture built on this worker if
//! it has none yet (its buffers stay with the worker); the body run with the case context under
//! `catch_unwind` (a panic fails the attempt with class `result` and the panic's message, and
//! the lane goes on); the buffers the body did not free freed; and then the runner's own state
//! has the last word: if the runner is marked unusable, the attempt is a `device_runtime` failure
//! naming the first cause, whatever the body returned (a device error is never hidden, not by a
//! body that swallowed it, nor by a panic after it). The result is the raw attempt; an
//! expectation is judged from it by the lane (`super::expect`), and the lane heals from it.
//! This file never retires a worker and never talks to the dispatcher.

use platform_common::FailureClass;

use super::attempt::{setup_error_report, CaseRun};
use super::compute;
use super::fixture::FixtureNote;
use super::panic;
use crate::case::{Body, CaseFailure, CaseSpec, DeviceSetup, FixtureData};
use crate::case::{CaseCtx, CtxParts};
use crate::report::model::{ErrorReport, FixturePart};
use crate::worker::{ChipWorker, DeviceFixture, WorkerEnv};

/// What an attempt runs with.
#[derive(Clone)]
pub struct CaseInput<'a> {
    /// `Class::case`.
    pub id: &'a str,
    /// The class's name.
    pub class: &'a str,
    /// The case.
    pub case: &'a CaseSpec,
    /// The class fixture's host data, if the class has a fixture (built by the lane).
    pub host_fixture: Option<FixtureData>,
    /// The class fixture's device part, if it has one.
    pub device_setup: Option<DeviceSetup>,
}

impl std::fmt::Debug for CaseInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaseInput")
            .field("id", &self.id)
            .field("fixture", &self.host_fixture.is_some())
            .field("device_setup", &self.device_setup.is_some())
            .finish_non_exhaustive()
    }
}

/// What an attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executed {
    /// The raw attempt (before any expectation is judged).
    pub raw: CaseRun,
    /// The fixture setup steps that ran for it.
    pub notes: Vec<FixtureNote>,
}

/// Runs one attempt of `input` on `worker` (see the module docs).
pub fn execute(worker: &mut ChipWorker, env: &mut WorkerEnv, input: &CaseInput<'_>) -> Executed {
    let case = input.case;
    if let Err(e) = worker.ensure_kernels(env, &case.kernels) {
        return Executed {
            raw: unusable_rule(worker, CaseRun::failed(setup_error_report(&e)), "failed"),
            notes: Vec::new(),
        };
    }
    let parts = CtxParts {
        arch: env.arch,
        timeouts: env.timeouts,
        id: input.id,
        seed: case.seed,
        kernels: &case.kernels,
        crumb: env.breadcrumb.as_deref(),
    };
    let mut notes = Vec::new();
    let device = match device_fixture(worker, parts, input, &mut notes) {
        Ok(d) => d,
        Err(e) => {
            return Executed {
                raw: unusable_rule(worker, CaseRun::failed(e), "failed"),
                notes,
            }
        }
    };
    let mut ctx = CaseCtx::new(worker, parts).with_fixture(input.host_fixture.clone(), device);
    let result = panic::catch(|| run_body(&mut ctx, &case.body));
    let leftover = ctx.take_owned();
    drop(ctx);
    free_leftovers(worker, input.id, leftover);
    let (raw, what) = match result {
        Ok(Ok(())) => (CaseRun::passed(), "passed"),
        Ok(Err(f)) => (CaseRun::failed(f.into_report()), "failed"),
        Err(p) => (
            CaseRun::failed(ErrorReport::new(FailureClass::Result, p.to_string())),
            "panicked",
        ),
    };
    Executed {
        raw: unusable_rule(worker, raw, what),
        notes,
    }
}

fn run_body(ctx: &mut CaseCtx<'_>, body: &Body) -> Result<(), CaseFailure> {
    match body {
        Body::Host(f) => f(ctx),
        Body::Compute { generator, tolerance } => compute::run(ctx, generator, *tolerance),
        Body::Trivial => Ok(()),
    }
}

/// Frees what a body allocated and left behind, on a usable runner (an unusable one refuses;
/// its finalize abandons them with the rest). A free that fails marks the runner unusable, which
/// the attempt then reports.
fn free_leftovers(worker: &mut ChipWorker, id: &str, leftover: Vec<platform_common::runner_base::BufferId>) {
    if leftover.is_empty() || worker.is_unusable() {
        return;
    }
    tracing::debug!(
        case = id,
        buffers = leftover.len(),
        "freeing the buffers the body left"
    );
    for b in leftover {
        if let Err(e) = worker.free_buffer(b) {
            tracing::warn!(case = id, "cannot free a buffer the body left: {e}");
            if worker.is_unusable() {
                return;
            }
        }
    }
}

/// The runner's state has the last word: an unusable runner makes the attempt a device-runtime
/// failure naming its first cause, unless it already is one. `what` is what the body did.
fn unusable_rule(worker: &ChipWorker, raw: CaseRun, what: &str) -> CaseRun {
    if !worker.is_unusable() || raw.class() == Some(FailureClass::DeviceRuntime) {
        return raw;
    }
    let Some(cause) = worker.first_cause() else {
        return raw;
    };
    let body = match &raw.error {
        Some(e) => format!("the body {what} ({e})"),
        None => format!("the body {what}"),
    };
    let mut report = ErrorReport::from_driver(
        &cause,
        format!(
            "card {}'s runner is marked unusable since {} failed with {}, but {body}: a device error \
             is never hidden",
            worker.device(),
            cause.call,
            cause.code
        ),
    );
    report.class = FailureClass::DeviceRuntime;
    CaseRun::failed(report)
}

/// The class's device fixture on this worker: built now if it has none (a failure without a
/// device error is kept on the worker and referred to by its later cases).
fn device_fixture(
    worker: &mut ChipWorker,
    parts: CtxParts<'_>,
    input: &CaseInput<'_>,
    notes: &mut Vec<FixtureNote>,
) -> Result<Option<FixtureData>, ErrorReport> {
    let (Some(setup), Some(host)) = (&input.device_setup, &input.host_fixture) else {
        return Ok(None);
    };
    match worker.device_fixture(input.class) {
        Some(DeviceFixture::Ready(d)) => return Ok(Some(d.clone())),
        Some(DeviceFixture::Failed { first_case, .. }) => {
            return Err(ErrorReport::new(
                FailureClass::Infrastructure,
                format!(
                    "device setup of class {} failed on this worker, see {first_case}",
                    input.class
                ),
            ))
        }
        None => {}
    }
    let mut ctx = CaseCtx::new(worker, parts).with_fixture(Some(host.clone()), None);
    let built = panic::catch(|| setup(&mut ctx, host));
    let allocated = ctx.take_owned();
    drop(ctx);
    let note = |error: Option<String>| FixtureNote {
        class: input.class.to_owned(),
        part: FixturePart::Device,
        case: input.id.to_owned(),
        error,
    };
    let failure = match built {
        Ok(Ok(d)) => {
            worker.set_device_fixture(input.class, DeviceFixture::Ready(d.clone()));
            notes.push(note(None));
            return Ok(Some(d));
        }
        Ok(Err(f)) => f,
        Err(p) => CaseFailure::infrastructure(p.to_string().replacen("the body", "the device setup", 1)),
    };
    free_leftovers(worker, input.id, allocated);
    notes.push(note(Some(failure.message().to_owned())));
    let failure = failure.context(format!("device setup of class {}", input.class));
    if failure.class() == FailureClass::DeviceRuntime {
        // A device fault: the worker is retired and the next one builds it again.
        return Err(failure.into_report());
    }
    worker.set_device_fixture(
        input.class,
        DeviceFixture::Failed {
            reason: failure.message().to_owned(),
            first_case: input.id.to_owned(),
        },
    );
    let mut report = failure.into_report();
    report.class = FailureClass::Infrastructure;
    Err(report)
}
