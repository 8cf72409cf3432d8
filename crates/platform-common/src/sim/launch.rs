//! What happens to one AICore launch before it is queued: its arguments resolved against the
//! context's memory, the card's launch counter moved (case launches only), and the plan's launch
//! fault, if one fires at this launch, turned into the launch's fate.
//!
//! Bounds: a buffer argument must point at or into a live allocation (else the launch fails with
//! 100000), and the kernel is told how many bytes are valid from that address to the end of the
//! allocation (a scalar: 0). Kernels check their size scalars against those lengths and refuse
//! (`CG_KERNEL_BAD_ARGS`) before touching memory, which surfaces at the sync as 507015 and poisons
//! the context, as an out-of-bounds access raises an AICore exception on a real card.
//!
//! This file never queues, waits or runs anything; the driver acts on the [`Fate`].

use std::sync::Arc;

use super::aicore::OpMode;
use super::context::{card_file_error, Context};
use super::memory::DeviceBuffer;
use super::plan::Fault;
use crate::driver::{DriverCall, DriverResult, KernelArg, LaunchOrigin};
use crate::error::{codes, Code, DriverError};

/// A launch's arguments as the kernel gets them, and the buffers they point into.
#[derive(Debug, Default)]
pub(crate) struct LaunchArgs {
    /// Buffers as addresses, scalars by value.
    pub(crate) raw: Vec<u64>,
    /// Per argument: bytes from the address to the end of its allocation; 0 for a scalar.
    pub(crate) bytes: Vec<u64>,
    /// Every buffer an argument points into (kept alive by the queued op).
    pub(crate) buffers: Vec<Arc<DeviceBuffer>>,
    /// The first output buffer and the argument's offset into it.
    pub(crate) first_output: Option<(Arc<DeviceBuffer>, usize)>,
}

/// Resolves `args`: every buffer must point into a live allocation of the context (else 100000).
pub(crate) fn resolve_args(ctx: &Context, args: &[KernelArg]) -> DriverResult<LaunchArgs> {
    let mut out = LaunchArgs::default();
    for arg in args {
        match *arg {
            KernelArg::Scalar(v) => {
                out.raw.push(v);
                out.bytes.push(0);
            }
            KernelArg::Input(p) | KernelArg::Output(p) => {
                let Some((buf, offset)) = ctx.memory.find(p) else {
                    tracing::warn!(
                        ptr = format_args!("{:#x}", p.0),
                        "launch argument is not a live allocation"
                    );
                    return Err(DriverError::new(DriverCall::LaunchAicore, codes::INVALID_PARAM));
                };
                if matches!(arg, KernelArg::Output(_)) && out.first_output.is_none() {
                    out.first_output = Some((Arc::clone(&buf), offset));
                }
                out.raw.push(p.0);
                out.bytes.push(remaining(&buf, offset));
                out.buffers.push(buf);
            }
        }
    }
    Ok(out)
}

/// Bytes of `buf` from `offset` to its end (`offset` is inside it).
fn remaining(buf: &DeviceBuffer, offset: usize) -> u64 {
    u64::try_from(buf.size().saturating_sub(offset)).unwrap_or(u64::MAX)
}

/// Counts the launch in the card file; returns the case launch number (0 for internal launches)
/// and the launch fault that fires at it.
pub(crate) fn count_launch(ctx: &mut Context, origin: LaunchOrigin) -> DriverResult<(u64, Option<Fault>)> {
    let counted = match origin {
        LaunchOrigin::Case => ctx.file.update(|st| st.count_case_launch()),
        LaunchOrigin::Internal => ctx.file.update(|st| {
            st.counters.internal_launches += 1;
            (0, None)
        }),
    };
    counted
        .map(|(result, _)| result)
        .map_err(|e| card_file_error(DriverCall::LaunchAicore, &e))
}

/// What becomes of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Queued, its kernel run this way.
    Queue(OpMode),
    /// The launch call fails with this code and poisons the context (`launch_fail`).
    Fail(Code),
    /// The process dies (`crash`).
    Crash,
    /// The calling thread blocks forever (`stall`).
    Stall,
    /// Queued and run normally; the context turns sticky at its next call that starts new work
    /// (`poison_after`).
    QueueThenPoison,
}

/// The fate of a launch at which `fault` (if any) fires.
pub(crate) fn fate(fault: Option<Fault>) -> Fate {
    match fault {
        None => Fate::Queue(OpMode::Normal),
        Some(Fault::LaunchFail { code, .. }) => Fate::Fail(Fault::launch_fail_code(code)),
        Some(Fault::SyncFail { code, .. }) => Fate::Queue(OpMode::Fail(Code::acl(code))),
        Some(Fault::OpTimeout { .. }) => Fate::Queue(OpMode::Hang),
        Some(Fault::Corrupt { .. }) => Fate::Queue(OpMode::Corrupt),
        Some(Fault::Crash { .. }) => Fate::Crash,
        Some(Fault::Stall { .. }) => Fate::Stall,
        Some(Fault::PoisonAfter { .. }) => Fate::QueueThenPoison,
        Some(setting) => {
            tracing::error!(fault = %setting, "a setting fired as a launch fault; ignored");
            Fate::Queue(OpMode::Normal)
        }
    }
}
