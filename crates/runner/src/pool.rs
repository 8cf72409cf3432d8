//! The chip-worker pool of one card: at most one [`ChipWorker`] at a time, reused across cases of
//! the same runtime, retired on a device-runtime error (DESIGN section 5, step 3).
//!
//! This module owns the pooled worker's lifecycle: build on first use, reuse while the runtime
//! stays the same, close when the runtime changes or the lane needs the card for a standalone case,
//! and retire (close = finalize, which force-resets an unusable card) when told to. It never
//! classifies errors: the caller retires only on a device-runtime error, never on a result
//! mismatch.

use platform_common::runner_base::{FinalizeError, FinalizeReport, InitError};
use platform_common::DeviceLease;

use crate::case::Runtime;
use crate::worker::{ChipWorker, WorkerEnv};

/// Getting a pooled worker failed.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// Building the worker failed (a health event of the card).
    #[error(transparent)]
    Init(#[from] InitError),
    /// Closing the previous runtime's worker failed to leave a usable card.
    #[error("closing the previous worker failed: {0}")]
    Close(#[source] FinalizeError),
}

/// The pooled worker of one card.
#[derive(Debug, Default)]
pub struct Pool {
    worker: Option<ChipWorker>,
}

impl Pool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// The pooled worker for `runtime`, reusing the current one when it serves that runtime.
    /// A worker of another runtime is closed first (at most one worker per card).
    pub fn worker(
        &mut self,
        env: &WorkerEnv,
        runtime: &Runtime,
        lease: &DeviceLease,
    ) -> Result<&mut ChipWorker, PoolError> {
        if self.worker.as_ref().is_some_and(|w| w.runtime() != runtime) {
            if let Some(Err(e)) = self.close(lease) {
                return Err(PoolError::Close(e));
            }
        }
        let worker = match self.worker.take() {
            Some(w) => w,
            None => ChipWorker::init(env, runtime)?,
        };
        Ok(self.worker.insert(worker))
    }

    /// Pools `worker`, built by this lane on this card for a multi-card block (its own card's
    /// worker, kept for the runtime's single-card cases after the block); a worker already
    /// pooled is closed first, as [`Pool::worker`] closes one of another runtime.
    pub fn adopt(
        &mut self,
        worker: ChipWorker,
        lease: &DeviceLease,
    ) -> Option<Result<FinalizeReport, FinalizeError>> {
        let closed = self.close(lease);
        self.worker = Some(worker);
        closed
    }

    /// The runtime of the pooled worker, if any.
    pub fn runtime(&self) -> Option<&Runtime> {
        self.worker.as_ref().map(ChipWorker::runtime)
    }

    /// The pooled worker, if any.
    pub fn current_mut(&mut self) -> Option<&mut ChipWorker> {
        self.worker.as_mut()
    }

    /// Whether a worker is pooled.
    pub fn is_empty(&self) -> bool {
        self.worker.is_none()
    }

    /// Retires the pooled worker after a device-runtime error: closes it (finalize force-resets an
    /// unusable card). The next case rebuilds. `None` when no worker was pooled.
    pub fn retire(&mut self, lease: &DeviceLease) -> Option<Result<FinalizeReport, FinalizeError>> {
        let w = self.worker.take()?;
        tracing::info!(device = w.device(), runtime = %w.runtime(), "retiring the pooled worker");
        Some(w.close(lease))
    }

    /// Closes the pooled worker, if any (before a standalone case, or at the end of the lane).
    pub fn close(&mut self, lease: &DeviceLease) -> Option<Result<FinalizeReport, FinalizeError>> {
        self.worker.take().map(|w| w.close(lease))
    }
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use std::sync::Arc;

    use platform_common::kernel::load_builtin;
    use platform_common::lease::LeaseConfig;
    use platform_common::sim::{start_run, FaultPlan, SimDriver};
    use platform_common::{Arch, FailureClass};

    use super::*;
    use crate::case::CaseSpec;
    use crate::exec::{self, CaseInput, CaseRun};
    use crate::lane::heal::{self, PoolStep};
    use crate::report::model::AttemptOutcome;

    /// One simulated card with `plan`, its lease and a worker environment.
    fn card(plan: &str) -> (tempfile::TempDir, WorkerEnv, DeviceLease) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::platform::arch_entry(Arch::A5)
            .sim_config(dir.path().join("sim"))
            .with_cards(1);
        let plan = FaultPlan::parse_for_cards(plan, 1).unwrap();
        start_run(&cfg, &[0], &plan).unwrap();
        let locks = LeaseConfig {
            dir: dir.path().join("locks"),
        };
        let lease = DeviceLease::try_acquire(&locks, 0, "pool-test").unwrap();
        let mut env = WorkerEnv::new(Arch::A5, Arc::new(SimDriver::new(cfg.clone())), 0, cfg.timeouts);
        env.probe_kernel = Some(load_builtin(Arch::A5, "noop").unwrap());
        (dir, env, lease)
    }

    fn vector_add() -> (Runtime, CaseSpec) {
        let suite = crate::suite::builtin(Arch::A5);
        let class = suite
            .find_class("VectorAdd")
            .expect("the built-in VectorAdd class");
        (class.runtime.clone(), class.cases[0].clone())
    }

    fn run(
        pool: &mut Pool,
        env: &mut WorkerEnv,
        rt: &Runtime,
        case: &CaseSpec,
        lease: &DeviceLease,
    ) -> CaseRun {
        pool.worker(env, rt, lease).unwrap();
        let worker = pool.current_mut().unwrap();
        let input = CaseInput {
            id: "VectorAdd::case",
            class: "VectorAdd",
            case,
            host_fixture: None,
            device_setup: None,
        };
        exec::execute(worker, env, &input).raw
    }

    fn unusable(pool: &mut Pool) -> bool {
        pool.current_mut().is_some_and(|w| w.is_unusable())
    }

    /// The lane retires the pooled worker exactly when a run says so: a golden mismatch (class
    /// result) never does, a device-runtime error does, and the retired worker's card is
    /// force-reset so the rebuilt worker passes.
    #[test]
    fn a_result_mismatch_never_retires_a_device_runtime_error_does() {
        let (_dir, mut env, lease) = card("dev=0:corrupt@1;dev=0:launch_fail@2");
        let (rt, case) = vector_add();
        let mut pool = Pool::new();

        let mismatch = run(&mut pool, &mut env, &rt, &case, &lease);
        assert_eq!(mismatch.outcome, AttemptOutcome::Failed);
        assert_eq!(mismatch.error.as_ref().unwrap().class, FailureClass::Result);
        assert_eq!(
            heal::after_case(mismatch.error.as_ref(), unusable(&mut pool), false),
            PoolStep::Keep,
            "a golden mismatch never retires the worker"
        );
        assert!(!pool.current_mut().unwrap().is_unusable());

        let device = run(&mut pool, &mut env, &rt, &case, &lease);
        assert_eq!(device.outcome, AttemptOutcome::Failed);
        assert_eq!(device.error.as_ref().unwrap().class, FailureClass::DeviceRuntime);
        assert_eq!(
            heal::after_case(device.error.as_ref(), unusable(&mut pool), false),
            PoolStep::Retire,
            "a device-runtime error retires the worker"
        );
        assert!(pool.current_mut().unwrap().is_unusable());

        let report = pool
            .retire(&lease)
            .expect("a worker was pooled")
            .expect("the reset recovers");
        assert!(
            report.reset.is_some(),
            "retiring an unusable worker force-resets its card"
        );
        assert!(pool.is_empty());
        assert_eq!(pool.runtime(), None);
        let after = run(&mut pool, &mut env, &rt, &case, &lease);
        assert_eq!(
            after,
            CaseRun::passed(),
            "the rebuilt worker runs on the reset card"
        );
        assert_eq!(pool.runtime(), Some(&rt));
        assert!(pool.close(&lease).unwrap().is_ok());
    }
}
