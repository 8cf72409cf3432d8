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
