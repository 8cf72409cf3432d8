//! The simulated card's SDMA engine: the copy op a stream runs, and the rules of the SDMA calls
//! (copy, stream failure mode, forced destroy, `aclFinalize`) as measured upstream
//! ([`crate::sdma`] cites the sources).
//!
//! The rules:
//! - A context's first SDMA copy provisions its CP-process stream set
//!   ([`crate::sdma::CP_PROCESS_STREAMS`] streams; upstream provisions them at worker init, where
//!   the warm-up copy is the first).
//! - A copy the plan faults (`sdma_fault@K`, `sdma_warmup_fault`), or any copy while the card's
//!   SDMA engine is wedged, fails on the device: on a stream in stop-on-failure mode the next sync
//!   reports 507015 and poisons the context; on a stream that continues on failure the copy
//!   stalls, so its sync runs into its timeout (507046) and the fault stays unobserved. A planned
//!   fault wedges the card's engine (the card file's [`SdmaWedge`], seen by every process) until a
//!   force reset clears it.
//! - A force reset while the engine is wedged, earlier than the handoff window after the fault
//!   (or at any time after an unobserved fault), blocks for the remote-event timeout
//!   ([`super::SimConfig::sdma_remote_event`]) and does not confirm: it returns 0 but leaves the
//!   context's sticky error and the wedge in place, and the wedge counts as unobserved from then
//!   on, so every later attempt blocks again (upstream: a retry multiplies the timeout). A reset
//!   after the window, with no blocked one before it, clears both.
//! - `aclFinalize` in a process whose SDMA-provisioned context sits on a wedged card blocks the
//!   same way.
//! - Compute is untouched by a wedge in a context the fault did not poison: a compute-only probe
//!   from a fresh process passes on a wedged card, the SDMA probe fails (pypto-lib #1240).
//!
//! The driver (`driver.rs`) routes the calls here; this file owns their rules and never takes a
//! lease.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::card_file::{CardState, SdmaWedge};
use super::context::{card_file_error, Context};
use super::sdma_op::{SdmaFate, SdmaOp};
use super::stream::Op;
use crate::driver::{DevicePtr, DriverCall, DriverResult, SdmaOrigin, Stream, StreamFailureMode};
use crate::error::{codes, DriverError};
use crate::sdma::{handoff_wait, CP_PROCESS_STREAMS};
use crate::timeouts::TimeoutProfile;

/// Milliseconds since the Unix epoch (the wedge's clock: card files are shared across processes).
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Queues an SDMA copy on `stream` of the (healthy, current) context `ctx`; returns whether the
/// plan faulted it (for the log). See the module docs for the rules.
pub(crate) fn queue_copy(
    ctx: &mut Context,
    stream: Stream,
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    origin: SdmaOrigin,
) -> DriverResult<()> {
    let call = DriverCall::SdmaCopy;
    let s = ctx.stream(call, stream)?;
    let region = |ptr: DevicePtr| match ctx.memory.find(ptr) {
        Some((buf, off)) if bytes > 0 && off + bytes <= buf.size() => Ok((buf, off)),
        _ => Err(DriverError::new(call, codes::INVALID_PARAM)),
    };
    let (src, dst) = (region(src)?, region(dst)?);
    if ctx.cp_streams == 0 {
        ctx.cp_streams = CP_PROCESS_STREAMS;
        tracing::debug!(
            card = ctx.card,
            streams = CP_PROCESS_STREAMS,
            "sim SDMA: CP-process streams provisioned"
        );
    }
    let mode = ctx.stream_modes.get(&stream.0).copied().unwrap_or_default();
    let stop = mode == StreamFailureMode::StopOnFailure;
    let ((planned, wedged), _) = ctx
        .file
        .update(|st| {
            let planned = st.count_sdma_copy(origin);
            let wedged = st.sdma_wedge.is_some();
            if planned && !wedged {
                st.sdma_wedge = Some(SdmaWedge {
                    unix_ms: unix_ms(),
                    observed: stop,
                });
            }
            (planned, wedged)
        })
        .map_err(|e| card_file_error(call, &e))?;
    let fate = match (planned || wedged, stop) {
        (false, _) => SdmaFate::Copy,
        (true, true) => SdmaFate::Fail,
        (true, false) => SdmaFate::Stall,
    };
    if planned {
        tracing::warn!(
            card = ctx.card,
            ?origin,
            ?mode,
            "sim fault sdma: the copy faults the card's SDMA engine"
        );
    } else if wedged {
        tracing::info!(card = ctx.card, ?origin, "sim SDMA copy on a wedged engine fails");
    }
    s.submit(Op::Sdma(SdmaOp::new(src, dst, bytes, fate)));
    Ok(())
}

/// Whether a force reset now blocks on the remote-event timeout: the engine is wedged and the
/// fault was unobserved, or the handoff window (from the op-execute timeout `op_timeout`, in the
/// simulator's scale) has not passed since it.
pub(crate) fn reset_blocks(st: &CardState, op_timeout: Duration, now_ms: u64) -> bool {
    let Some(w) = st.sdma_wedge else {
        return false;
    };
    let window = handoff_wait(TimeoutProfile::Sim, op_timeout);
    let window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
    !w.observed || now_ms < w.unix_ms.saturating_add(window_ms)
}

/// Whether `aclFinalize` walks poisoned CP-process streams: `ctx` provisioned SDMA and its card's
/// engine is still wedged.
pub(crate) fn finalize_blocks(ctx: &mut Context) -> bool {
    ctx.cp_streams > 0
        && ctx
            .card_state(DriverCall::Finalize)
            .is_ok_and(|st| st.sdma_wedge.is_some())
}
