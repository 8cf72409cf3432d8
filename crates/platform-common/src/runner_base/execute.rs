//! The shared run pipeline: request checks, then allocate, copy in, launch AICore before AICPU,
//! bounded stream syncs (AICPU first: it reports the AICore work's failure), copy out, free.
//! Buffers the caller keeps ([`RunArg::BufferIn`], [`RunArg::BufferOut`]) are passed by address
//! and neither allocated nor freed here.
//!
//! Request checks happen before any driver call and fail as usage errors. The first driver call
//! of a run makes the card current on the calling thread ([`DeviceRunnerBase::make_current`]:
//! CANN keeps the current device per thread, and a runner may be moved between threads). Every
//! driver error of the pipeline goes through the fail-fast chain
//! ([`DeviceRunnerBase::device_failure`]); memory of a failed run stays recorded so the fatal
//! teardown can abandon it. Everything here is crate-private: only
//! [`ArchRunner::run`](super::ArchRunner::run), behind the guard, drives it. This file never maps
//! registers (arch runners do that before calling [`DeviceRunnerBase::execute`]).

use crate::driver::{AicpuTask, DevicePtr, KernelArg, KernelHandle, LaunchOrigin};
use crate::error::DriverError;

use super::base::DeviceRunnerBase;
use super::errors::{RunError, UsageError};
use super::request::{RunArg, RunOutput, RunRequest};

impl DeviceRunnerBase {
    /// Checks `req` against the arch's block-dim limit and the registered kernel, without any
    /// driver call, and returns the kernel's handle.
    pub(crate) fn check_request(&self, req: &RunRequest) -> Result<KernelHandle, UsageError> {
        let limit = self.facts.max_block_dim();
        if req.block_dim == 0 {
            return Err(UsageError::BlockDimZero);
        }
        if req.block_dim > limit {
            return Err(UsageError::BlockDimOverArchLimit {
                block_dim: req.block_dim,
                arch: self.facts.arch,
                limit,
            });
        }
        let kernel = self
            .kernels
            .get(&req.kernel)
            .ok_or_else(|| UsageError::UnknownKernel(req.kernel.clone()))?;
        if req.block_dim > kernel.meta.block_dim {
            return Err(UsageError::BlockDimOverKernel {
                block_dim: req.block_dim,
                kernel: req.kernel.clone(),
                max: kernel.meta.block_dim,
            });
        }
        if req.args.len() != kernel.meta.num_args as usize {
            return Err(UsageError::ArgCount {
                kernel: req.kernel.clone(),
                expected: kernel.meta.num_args,
                got: req.args.len(),
            });
        }
        for (index, arg) in req.args.iter().enumerate() {
            let empty = match arg {
                RunArg::Input(bytes) => bytes.is_empty(),
                RunArg::Output(n) => *n == 0,
                RunArg::Scalar(_) => false,
                RunArg::BufferIn(id) | RunArg::BufferOut(id) => {
                    self.buffer_ptr(*id)?;
                    false
                }
            };
            if empty {
                return Err(UsageError::EmptyBuffer {
                    kernel: req.kernel.clone(),
                    index,
                });
            }
        }
        Ok(kernel.handle)
    }

    /// `aclrtSetDevice` of the runner's card on the calling thread, admitted by the guard (a
    /// refused runner makes no call). A failure goes through the fail-fast chain.
    pub(crate) fn make_current(&mut self) -> Result<(), RunError> {
        self.guard()?;
        match self.driver.set_device(self.cfg.device) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.device_failure(e)),
        }
    }

    /// Runs a checked request on the device, admitted by the guard (an unusable runner is
    /// refused with no driver call). Any driver error marks the runner unusable (through the
    /// fail-fast chain) and is returned as [`RunError::Device`].
    pub(crate) fn execute(&mut self, kernel: KernelHandle, req: &RunRequest) -> Result<RunOutput, RunError> {
        self.guard()?;
        match self.execute_inner(kernel, req) {
            Ok(out) => Ok(out),
            Err(e) => Err(self.device_failure(e)),
        }
    }

    /// The address of a kept buffer `check_request` admitted (an internal error otherwise, which
    /// cannot happen: nothing frees a buffer between the check and the pipeline).
    fn kept_ptr(&self, id: super::buffers::BufferId) -> Result<DevicePtr, DriverError> {
        self.buffer_ptr(id).map_err(|e| {
            tracing::error!(error = %e, "a checked buffer argument vanished");
            DriverError::new(
                crate::driver::DriverCall::LaunchAicore,
                crate::error::codes::INVALID_PARAM,
            )
        })
    }

    fn execute_inner(&mut self, kernel: KernelHandle, req: &RunRequest) -> Result<RunOutput, DriverError> {
        let driver = self.driver.clone();
        let mut args = Vec::with_capacity(req.args.len());
        let mut outputs: Vec<(DevicePtr, usize)> = Vec::new();
        let first_alloc = self.allocations.len();
        for arg in &req.args {
            match arg {
                RunArg::Input(bytes) => {
                    let ptr = driver.malloc(bytes.len())?;
                    self.allocations.push(ptr);
                    driver.memcpy_to_device(ptr, bytes)?;
                    args.push(KernelArg::Input(ptr));
                }
                RunArg::Output(len) => {
                    let ptr = driver.malloc(*len)?;
                    self.allocations.push(ptr);
                    args.push(KernelArg::Output(ptr));
                    outputs.push((ptr, *len));
                }
                RunArg::Scalar(v) => args.push(KernelArg::Scalar(*v)),
                // Checked by `check_request`; the table cannot change in between.
                RunArg::BufferIn(id) => args.push(KernelArg::Input(self.kept_ptr(*id)?)),
                RunArg::BufferOut(id) => args.push(KernelArg::Output(self.kept_ptr(*id)?)),
            }
        }
        let streams = self.streams;
        driver.launch_aicore(streams.aicore, kernel, req.block_dim, &args, LaunchOrigin::Case)?;
        driver.launch_aicpu(
            streams.aicpu,
            AicpuTask {
                aicore: streams.aicore,
            },
        )?;
        let sync_ms = self.cfg.timeouts.stream_sync_ms();
        driver.synchronize_stream_with_timeout(streams.aicpu, sync_ms)?;
        driver.synchronize_stream_with_timeout(streams.aicore, sync_ms)?;
        let mut out = Vec::with_capacity(outputs.len());
        for (ptr, len) in outputs {
            let mut buf = vec![0u8; len];
            driver.memcpy_to_host(&mut buf, ptr)?;
            out.push(buf);
        }
        // Free this run's memory, newest first, forgetting each pointer once it is freed.
        while self.allocations.len() > first_alloc {
            if let Some(&ptr) = self.allocations.last() {
                driver.free(ptr)?;
                self.allocations.pop();
            }
        }
        Ok(RunOutput { outputs: out })
    }
}
