//! What one [`super::SimDriver`] has been asked to do, for tests and reports.
//!
//! Plain counters of this process's calls, in total and per [`DriverCall`]; the cross-process
//! counters live in the card files. This file never decides anything: the driver bumps the counters.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::driver::DriverCall;

/// Every [`DriverCall`], in declaration order (the index of a call's counter).
const ALL_CALLS: [DriverCall; 22] = [
    DriverCall::Init,
    DriverCall::SetDevice,
    DriverCall::ResetDevice,
    DriverCall::ResetDeviceForce,
    DriverCall::SetOpExecuteTimeout,
    DriverCall::CreateStream,
    DriverCall::DestroyStream,
    DriverCall::SynchronizeStreamWithTimeout,
    DriverCall::SynchronizeDeviceWithTimeout,
    DriverCall::Malloc,
    DriverCall::Free,
    DriverCall::MemcpyToDevice,
    DriverCall::MemcpyToHost,
    DriverCall::RegisterKernel,
    DriverCall::LaunchAicore,
    DriverCall::LaunchAicpu,
    DriverCall::HalResMap,
    DriverCall::HalMemCtl,
    DriverCall::SetStreamFailureMode,
    DriverCall::DestroyStreamForce,
    DriverCall::SdmaCopy,
    DriverCall::Finalize,
];

/// The counter slot of `call`.
fn slot(call: DriverCall) -> usize {
    match call {
        DriverCall::Init => 0,
        DriverCall::SetDevice => 1,
        DriverCall::ResetDevice => 2,
        DriverCall::ResetDeviceForce => 3,
        DriverCall::SetOpExecuteTimeout => 4,
        DriverCall::CreateStream => 5,
        DriverCall::DestroyStream => 6,
        DriverCall::SynchronizeStreamWithTimeout => 7,
        DriverCall::SynchronizeDeviceWithTimeout => 8,
        DriverCall::Malloc => 9,
        DriverCall::Free => 10,
        DriverCall::MemcpyToDevice => 11,
        DriverCall::MemcpyToHost => 12,
        DriverCall::RegisterKernel => 13,
        DriverCall::LaunchAicore => 14,
        DriverCall::LaunchAicpu => 15,
        DriverCall::HalResMap => 16,
        DriverCall::HalMemCtl => 17,
        DriverCall::SetStreamFailureMode => 18,
        DriverCall::DestroyStreamForce => 19,
        DriverCall::SdmaCopy => 20,
        DriverCall::Finalize => 21,
    }
}

/// How many times each [`DriverCall`] was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallCounts([u64; ALL_CALLS.len()]);

impl CallCounts {
    /// The calls of `call` made.
    pub fn get(&self, call: DriverCall) -> u64 {
        self.0[slot(call)]
    }

    /// Every call with a non-zero count, in declaration order.
    pub fn nonzero(&self) -> impl Iterator<Item = (DriverCall, u64)> + '_ {
        ALL_CALLS
            .iter()
            .map(|&c| (c, self.get(c)))
            .filter(|&(_, n)| n > 0)
    }
}

/// A snapshot of a driver's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Every `Driver` call made (whatever its outcome; `info` is not a driver call).
    pub calls: u64,
    /// Syncs of a stream that was already in error state (each blocked until its timeout).
    pub error_state_syncs: u64,
    /// AICore launches that were queued.
    pub aicore_launches: u64,
    /// Force resets that returned 0.
    pub force_resets_ok: u64,
    /// Ops that failed on a stream (an AICore exception, an op-timeout, an AICPU task reporting
    /// its AICore op's failure), counted when they fail, whether or not a sync has reported them.
    pub failed_ops: u64,
    /// Inits: set-device calls that opened a context, or reopened one a reset had torn down (the
    /// other set-device calls only select the current device).
    pub inits: u64,
    /// Inits that slept the plan's `init_delay_ms` (each exactly once).
    pub init_delays: u64,
    /// Calls that blocked for the remote-event timeout on a wedged SDMA engine (a force reset
    /// before the handoff window, `aclFinalize` after one). Zero when read through
    /// `libsim_acl.so`'s `cgSimGetStats` (the card file's counter has them).
    pub remote_event_waits: u64,
    /// Device allocations live in this driver's contexts when the snapshot was taken (not a
    /// counter: what is allocated now; a reset drops a context's allocations). Zero when read
    /// through `libsim_acl.so`'s `cgSimGetStats`.
    pub live_allocations: u64,
    /// [`Self::calls`] split by call (whatever their outcome). All zero when read through
    /// `libsim_acl.so`'s `cgSimGetStats`, whose C struct does not carry them.
    pub per_call: CallCounts,
}

impl SimStats {
    /// The calls of `call` made (whatever their outcome).
    pub fn calls_of(&self, call: DriverCall) -> u64 {
        self.per_call.get(call)
    }
}

#[derive(Debug, Default)]
pub(crate) struct StatCounters {
    calls: AtomicU64,
    per_call: [AtomicU64; ALL_CALLS.len()],
    error_state_syncs: AtomicU64,
    aicore_launches: AtomicU64,
    force_resets_ok: AtomicU64,
    failed_ops: AtomicU64,
    inits: AtomicU64,
    init_delays: AtomicU64,
    remote_event_waits: AtomicU64,
}

impl StatCounters {
    pub(crate) fn call(&self, call: DriverCall) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.per_call[slot(call)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn error_state_sync(&self) {
        self.error_state_syncs.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn aicore_launch(&self) {
        self.aicore_launches.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn force_reset_ok(&self) {
        self.force_resets_ok.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn op_failed(&self) {
        self.failed_ops.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn init(&self) {
        self.inits.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn init_delay(&self) {
        self.init_delays.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn remote_event_wait(&self) {
        self.remote_event_waits.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> SimStats {
        SimStats {
            calls: self.calls.load(Ordering::Relaxed),
            error_state_syncs: self.error_state_syncs.load(Ordering::Relaxed),
            aicore_launches: self.aicore_launches.load(Ordering::Relaxed),
            force_resets_ok: self.force_resets_ok.load(Ordering::Relaxed),
            failed_ops: self.failed_ops.load(Ordering::Relaxed),
            inits: self.inits.load(Ordering::Relaxed),
            init_delays: self.init_delays.load(Ordering::Relaxed),
            remote_event_waits: self.remote_event_waits.load(Ordering::Relaxed),
            live_allocations: 0,
            per_call: CallCounts(std::array::from_fn(|i| self.per_call[i].load(Ordering::Relaxed))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_has_its_own_slot() {
        for (i, &c) in ALL_CALLS.iter().enumerate() {
            assert_eq!(slot(c), i, "{c}");
        }
    }
}
