//! What one [`super::SimDriver`] has been asked to do, for tests and reports.
//!
//! Plain counters of this process's calls; the cross-process counters live in the card files.

use std::sync::atomic::{AtomicU64, Ordering};

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
}

#[derive(Debug, Default)]
pub(crate) struct StatCounters {
    calls: AtomicU64,
    error_state_syncs: AtomicU64,
    aicore_launches: AtomicU64,
    force_resets_ok: AtomicU64,
}

impl StatCounters {
    pub(crate) fn call(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
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

    pub(crate) fn snapshot(&self) -> SimStats {
        SimStats {
            calls: self.calls.load(Ordering::Relaxed),
            error_state_syncs: self.error_state_syncs.load(Ordering::Relaxed),
            aicore_launches: self.aicore_launches.load(Ordering::Relaxed),
            force_resets_ok: self.force_resets_ok.load(Ordering::Relaxed),
        }
    }
}
