//! One process's context on one simulated card: its streams, memory, registered kernels, its
//! op-execute timeout, its sticky error and the reset generation it was opened at.
//!
//! This file owns the per-process state and three rules about it: which code each call meets on a
//! sticky context, when a poison left pending by `poison_after` is reported (the next call that
//! starts new work fails with it: [`starts_work`]) and turns sticky, and how a context notices that another process
//! force-reset its card (the generation in the card file moved). It never counts launches or installs faults (the card file
//! and the driver do).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::card_file::{CardFile, CardState};
use super::memory::{DeviceBuffer, Memory};
use super::stream::{StickyCell, StreamShared};
use crate::driver::{DeviceId, DriverCall, DriverResult, Stream, StreamFailureMode};
use crate::error::{codes, Code, DriverError};
use crate::kernel::KernelBlob;

/// A registered kernel and its registration buffer on the device.
#[derive(Debug)]
pub(crate) struct Registered {
    pub(crate) blob: KernelBlob,
    _buffer: Arc<DeviceBuffer>,
}

impl Registered {
    pub(crate) fn new(blob: KernelBlob, buffer: Arc<DeviceBuffer>) -> Self {
        Self {
            blob,
            _buffer: buffer,
        }
    }
}

/// The code `call` meets on a sticky context (in the simulator), or `None` when the call still
/// works there (set device, resets, destroy stream, syncs, drain, free).
pub fn sticky_code(call: DriverCall) -> Option<Code> {
    match call {
        DriverCall::SetOpExecuteTimeout => Some(codes::RT_INTERNAL_ERROR),
        DriverCall::CreateStream
        | DriverCall::Malloc
        | DriverCall::RegisterKernel
        | DriverCall::MemcpyToDevice
        | DriverCall::MemcpyToHost
        | DriverCall::LaunchAicore
        | DriverCall::LaunchAicpu
        | DriverCall::SdmaCopy => Some(codes::RT_DRV_INTERNAL_ERROR),
        DriverCall::HalResMap | DriverCall::HalMemCtl => Some(codes::HAL_NO_PROCESS),
        DriverCall::Init
        | DriverCall::SetDevice
        | DriverCall::ResetDevice
        | DriverCall::ResetDeviceForce
        | DriverCall::DestroyStream
        | DriverCall::DestroyStreamForce
        | DriverCall::SetStreamFailureMode
        | DriverCall::Finalize
        | DriverCall::SynchronizeStreamWithTimeout
        | DriverCall::SynchronizeDeviceWithTimeout
        | DriverCall::Free => None,
    }
}

/// Whether `call` starts new work on a context (a stream, memory, a kernel, a launch, a register
/// mapping): a poison left pending by `poison_after` is reported at such a call (it fails with
/// the exception's code) and the context is sticky from then on. The calls that
/// finish a run (the AICPU task, syncs, copies back, frees) never raise it, so the run of the
/// launch that armed it completes with correct output.
pub fn starts_work(call: DriverCall) -> bool {
    matches!(
        call,
        DriverCall::SetOpExecuteTimeout
            | DriverCall::CreateStream
            | DriverCall::Malloc
            | DriverCall::RegisterKernel
            | DriverCall::LaunchAicore
            | DriverCall::SdmaCopy
            | DriverCall::HalResMap
            | DriverCall::HalMemCtl
    )
}

/// An I/O failure of the card file, as a driver call sees it.
pub(crate) fn card_file_error(call: DriverCall, e: &super::error::SimError) -> DriverError {
    tracing::error!(%call, error = %e, "sim card file unusable");
    DriverError::new(call, codes::RT_DRV_INTERNAL_ERROR)
}

/// One process's context on one card.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) card: DeviceId,
    pub(crate) file: CardFile,
    /// The reset generation this context last saw.
    pub(crate) generation: u64,
    pub(crate) sticky: Arc<StickyCell>,
    /// A sticky error armed by `poison_after`, not yet reported (see [`starts_work`]).
    pub(crate) pending_poison: Option<Code>,
    pub(crate) streams: HashMap<u64, Arc<StreamShared>>,
    pub(crate) memory: Memory,
    pub(crate) kernels: HashMap<u64, Registered>,
    pub(crate) op_timeout: Duration,
    /// A reset tore the context down since its last init: the next set-device is an init again.
    pub(crate) torn_down: bool,
    /// The CP-process streams the context's SDMA provisioning holds (0: none yet; see `sdma.rs`).
    pub(crate) cp_streams: u32,
    /// Each stream's failure mode, once set (a stream without an entry continues on failure).
    pub(crate) stream_modes: HashMap<u64, StreamFailureMode>,
}

impl Context {
    /// A clean context opened at the card's current generation.
    /// `memory` is the card's capacity in bytes.
    pub(crate) fn open(
        card: DeviceId,
        mut file: CardFile,
        op_timeout: Duration,
        memory: u64,
    ) -> DriverResult<Self> {
        let state = file
            .read()
            .map_err(|e| card_file_error(DriverCall::SetDevice, &e))?;
        tracing::debug!(card, generation = state.generation, "sim context opened");
        Ok(Self {
            card,
            file,
            generation: state.generation,
            sticky: Arc::new(StickyCell::default()),
            pending_poison: None,
            streams: HashMap::new(),
            memory: Memory::new(memory),
            kernels: HashMap::new(),
            op_timeout,
            torn_down: false,
            cp_streams: 0,
            stream_modes: HashMap::new(),
        })
    }

    /// The card's record (read under a shared lock).
    pub(crate) fn card_state(&mut self, call: DriverCall) -> DriverResult<CardState> {
        self.file.read().map_err(|e| card_file_error(call, &e))
    }

    /// Fails `call` with 507007 once when another process force-reset the card since this context
    /// last looked, and poisons the context.
    pub(crate) fn check_generation(&mut self, call: DriverCall) -> DriverResult<()> {
        let now = self.card_state(call)?.generation;
        if now == self.generation {
            return Ok(());
        }
        tracing::warn!(
            card = self.card,
            seen = self.generation,
            now,
            %call,
            "card was force-reset by another process; context released"
        );
        self.generation = now;
        self.sticky.poison(codes::RT_CONTEXT_RELEASE_ERROR);
        Err(DriverError::new(call, codes::RT_CONTEXT_RELEASE_ERROR))
    }

    /// Arms `poison_after`: the context turns sticky with `code` at its next call that starts
    /// new work.
    pub(crate) fn arm_poison(&mut self, code: Code) {
        self.pending_poison = Some(code);
    }

    /// Reports a pending poison when `call` starts new work: `call` fails with the asynchronous
    /// exception's code and the context is sticky from then on (its later calls meet the sticky
    /// codes). A teardown (`reset`: a soft or force reset) turns it sticky without a failure.
    pub(crate) fn raise_pending(&mut self, call: DriverCall, reset: bool) -> DriverResult<()> {
        if !(reset || starts_work(call)) {
            return Ok(());
        }
        let Some(code) = self.pending_poison.take() else {
            return Ok(());
        };
        tracing::warn!(
            card = self.card,
            %call,
            %code,
            "sim fault poison_after: the asynchronous exception is reported; the context is sticky"
        );
        self.sticky.poison(code);
        if reset {
            Ok(())
        } else {
            Err(DriverError::new(call, code))
        }
    }

    /// Fails `call` with its sticky code when the context is poisoned.
    pub(crate) fn refuse_if_sticky(&self, call: DriverCall) -> DriverResult<()> {
        match (self.sticky.get(), sticky_code(call)) {
            (Some(cause), Some(code)) => {
                tracing::debug!(card = self.card, %call, %cause, "refused on a sticky context");
                Err(DriverError::new(call, code))
            }
            _ => Ok(()),
        }
    }

    /// A stream of this context.
    pub(crate) fn stream(&self, call: DriverCall, s: Stream) -> DriverResult<Arc<StreamShared>> {
        self.streams
            .get(&s.0)
            .cloned()
            .ok_or(DriverError::new(call, codes::INVALID_PARAM))
    }

    /// Tears down streams (their pending work is dropped), memory and registrations (a soft or a
    /// force reset); the next set-device is an init. The sticky error is not touched (a pending
    /// `poison_after` is reported first: it turns sticky).
    pub(crate) fn teardown(&mut self) {
        let _ = self.raise_pending(DriverCall::ResetDevice, true);
        self.torn_down = true;
        for stream in self.streams.values() {
            stream.cancel();
        }
        tracing::debug!(
            card = self.card,
            streams = self.streams.len(),
            allocations = self.memory.len(),
            "sim context torn down"
        );
        self.streams.clear();
        self.stream_modes.clear();
        self.cp_streams = 0;
        self.memory.clear();
        self.kernels.clear();
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        for stream in self.streams.values() {
            stream.cancel();
        }
    }
}
