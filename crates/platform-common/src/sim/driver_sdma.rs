//! The [`SimDriver`] calls that can meet the card's SDMA engine: the SDMA copy, the stream
//! failure mode it follows, the forced stream destroy, the force reset (which blocks on a wedged
//! engine before the handoff window) and `aclFinalize` (which blocks the same way after an
//! unconfirmed reset). The trait impl in `driver.rs` forwards to these; the SDMA rules themselves
//! are in `sdma.rs`, the reset verdicts in `reset.rs`.

use std::sync::atomic::Ordering;

use super::card_file::{CardFile, CardState};
use super::context::card_file_error;
use super::driver::{fail, SimDriver};
use super::reset::{decide, ResetVerdict};
use super::sdma::{finalize_blocks, queue_copy, reset_blocks, unix_ms};
use crate::driver::{DevicePtr, DriverCall, DriverResult, SdmaOrigin, Stream, StreamFailureMode};
use crate::error::codes;
use crate::lease::DeviceLease;
use crate::visible::PhysicalId;

impl SimDriver {
    /// Blocks for the remote-event timeout on `card` (no driver lock held), counted in the card
    /// file and the stats.
    pub(super) fn remote_event_wait(&self, card: PhysicalId, why: &str) {
        let wait = self.cfg.sdma_remote_event;
        tracing::warn!(
            card,
            wait_ms = wait.as_millis() as u64,
            "sim SDMA: {why}: blocks for the remote-event timeout"
        );
        if let Ok(mut f) = CardFile::open(&self.cfg, card) {
            let _ = f.update(|s| s.counters.remote_event_waits += 1);
        }
        self.stats.remote_event_wait();
        std::thread::sleep(wait);
    }

    /// `aclrtResetDeviceForce` on the lease's card: the plan's verdict (`reset.rs`), including
    /// the block on a wedged SDMA engine.
    pub(super) fn force_reset(&self, lease: &DeviceLease) -> DriverResult<()> {
        let call = DriverCall::ResetDeviceForce;
        self.stats.call(call);
        let card = self.physical(call, lease.card())?;
        let mut inner = self.lock();
        let op_timeout = inner
            .contexts
            .get(&card)
            .map_or(self.cfg.timeouts.op_execute, |c| c.op_timeout);
        let now = unix_ms();
        let rule = |s: &mut CardState| {
            let blocks = reset_blocks(s, op_timeout, now);
            decide(s, blocks)
        };
        let verdict = match inner.contexts.get_mut(&card) {
            Some(ctx) => ctx.file.update(rule),
            None => CardFile::open(&self.cfg, card).and_then(|mut f| f.update(rule)),
        }
        .map_err(|e| card_file_error(call, &e))?
        .0;
        match verdict {
            ResetVerdict::Blocked => {
                drop(inner);
                self.remote_event_wait(card, "force reset before the SDMA handoff window");
                Ok(())
            }
            ResetVerdict::Dead => {
                tracing::warn!(card, "sim fault dead: force reset fails");
                fail(call, codes::RT_DEV_SETUP_ERROR)
            }
            ResetVerdict::Fails { attempt } => {
                tracing::warn!(card, attempt, "sim fault force_reset_fail: force reset fails");
                fail(call, codes::RT_INTERNAL_ERROR)
            }
            ResetVerdict::Done { generation, spoiled } => {
                self.stats.force_reset_ok();
                if let Some(ctx) = inner.contexts.get_mut(&card) {
                    ctx.teardown();
                    ctx.generation = generation;
                    if spoiled {
                        tracing::warn!(
                            card,
                            "sim fault probe_fail: force reset returned 0 but the sticky error stays"
                        );
                    } else {
                        ctx.sticky.clear();
                    }
                }
                tracing::info!(card, generation, "force reset");
                Ok(())
            }
        }
    }

    /// `aclrtSetStreamFailureMode`: records the stream's mode (the SDMA rule follows it).
    pub(super) fn stream_failure_mode(&self, stream: Stream, mode: StreamFailureMode) -> DriverResult<()> {
        let call = DriverCall::SetStreamFailureMode;
        self.with_current(call, |ctx| {
            ctx.stream(call, stream)?;
            ctx.stream_modes.insert(stream.0, mode);
            Ok(())
        })
    }

    /// `aclrtDestroyStreamForce`: the stream and its unfinished work are dropped at once.
    pub(super) fn destroy_forced(&self, stream: Stream) -> DriverResult<()> {
        let call = DriverCall::DestroyStreamForce;
        self.with_current(call, |ctx| {
            // No wait for unfinished work (hicann/runtime docs/api_docs/aclrtDestroyStreamForce.md).
            ctx.stream(call, stream)?.cancel();
            ctx.streams.remove(&stream.0);
            ctx.stream_modes.remove(&stream.0);
            Ok(())
        })
    }

    /// The SDMA copy (`sdma.rs` has the rules).
    pub(super) fn sdma(
        &self,
        stream: Stream,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        origin: SdmaOrigin,
    ) -> DriverResult<()> {
        let call = DriverCall::SdmaCopy;
        self.with_healthy(call, |ctx| queue_copy(ctx, stream, dst, src, bytes, origin))
    }

    /// `aclFinalize`: blocks for the remote-event timeout per SDMA-provisioned context on a
    /// wedged card; afterwards `aclInit` initialises again.
    pub(super) fn acl_finalize(&self) -> DriverResult<()> {
        self.stats.call(DriverCall::Finalize);
        let blocked: Vec<_> = {
            let mut inner = self.lock();
            let cards = inner
                .contexts
                .values_mut()
                .filter_map(|c| finalize_blocks(c).then_some(c.card));
            cards.collect()
        };
        for card in blocked {
            self.remote_event_wait(
                card,
                "aclFinalize walks a wedged SDMA engine's CP-process streams",
            );
        }
        self.initialized.store(false, Ordering::Relaxed);
        Ok(())
    }
}
