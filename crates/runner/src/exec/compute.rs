//! [`Body::Compute`](crate::case::Body::Compute) on the case context: the convenience the
//! built-in suite's reference cases use, written with nothing but the public [`CaseCtx`]
//! operations a host body has.
//!
//! Each launch of the workload: a buffer per input (copied in) and per output, the launch,
//! every output copied back and checked against the goldens, the buffers freed. A device error
//! keeps its type (`launch N (label): ...`); a mismatch is `launch N (label): golden mismatch:
//! ...` (class `result`); a workload without a launch is a usage failure. This file never judges
//! more than that.

use crate::case::{Arg, CaseCtx, DeviceBuffer, DeviceError};
use crate::case::{CaseFailure, Generator, Tolerance};
use cardguard_reference::{HostArg, KernelCase};

/// Runs the workload `generator` gives for the context's arch and seed.
pub fn run(
    ctx: &mut CaseCtx<'_>,
    generator: &Generator,
    tolerance: Option<Tolerance>,
) -> Result<(), CaseFailure> {
    let workload = generator(ctx.arch(), ctx.seed());
    if workload.launches.is_empty() {
        return Err(CaseFailure::usage(format!(
            "case {:?} generated no launch",
            ctx.case_id()
        )));
    }
    ctx.plan_launches(workload.launches.len());
    for (i, launch) in workload.launches.iter().enumerate() {
        let mut launch = launch.clone();
        if let Some(t) = tolerance {
            launch.rtol = t.rtol;
            launch.atol = t.atol;
        }
        let what = format!("launch {} ({})", i + 1, launch.label);
        let outputs =
            run_launch(ctx, &launch).map_err(|e| CaseFailure::from(e.described_as(what.clone())))?;
        if let Err(m) = launch.check(&outputs) {
            return Err(CaseFailure::from(m).context(&what));
        }
    }
    Ok(())
}

/// One reference launch on the device: its outputs, in argument order.
fn run_launch(ctx: &mut CaseCtx<'_>, launch: &KernelCase) -> Result<Vec<Vec<u8>>, DeviceError> {
    let mut args = Vec::with_capacity(launch.args.len());
    let mut buffers: Vec<DeviceBuffer> = Vec::new();
    let mut outputs: Vec<DeviceBuffer> = Vec::new();
    for arg in &launch.args {
        match arg {
            HostArg::Input(bytes) => {
                let b = ctx.upload(bytes)?;
                buffers.push(b);
                args.push(Arg::In(b));
            }
            HostArg::Output(n) => {
                let b = ctx.alloc(*n)?;
                buffers.push(b);
                outputs.push(b);
                args.push(Arg::Out(b));
            }
            HostArg::Scalar(v) => args.push(Arg::Scalar(*v)),
        }
    }
    ctx.launch(launch.kernel, launch.block_dim, &args)?;
    let read: Result<Vec<Vec<u8>>, DeviceError> = outputs.iter().map(|b| ctx.copy_out(*b)).collect();
    let read = read?;
    // Newest first, as a run frees its memory.
    for b in buffers.into_iter().rev() {
        ctx.free(b)?;
    }
    Ok(read)
}
