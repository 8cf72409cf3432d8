//! Cards that remember their health (issue 9, item 4), on disk: a card's health record beside its
//! lock file, read when the run takes the card, written when the run quarantines the card for a
//! fault of its own (when, why, by which run, its health events of the run), cleared when its
//! preflight passes.
//!
//! This file owns carrying out the state machine's `Remember` and `Forget` actions on a card's
//! lease (the files are `platform_common::lease`'s). It never decides what a record means or when one is written (the
//! state machine does); a failure to write is a warning (the run's own report has it all).

use platform_common::health::Capability;
use platform_common::lease::{CardHealth, HealthStatus};
use platform_common::DeviceLease;

use crate::report::model::HealthRecord;

/// The card's health record, as the run finds it.
pub fn found(lease: &DeviceLease) -> Option<CardHealth> {
    lease.health_record()
}

/// Writes the card's health record: `status` (quarantined, or needs service) now by run `run_id`
/// for `reason`, with `events` (its health events of the run) and the `capability` that failed.
pub fn remember(
    lease: &DeviceLease,
    status: HealthStatus,
    run_id: &str,
    reason: &str,
    events: &[HealthRecord],
    capability: Capability,
) {
    let events = events
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    let rec = CardHealth::now(lease.physical(), status, run_id, reason)
        .with_events(events)
        .with_capability(capability);
    if let Err(e) = lease.remember_health(&rec) {
        tracing::warn!(
            device = lease.card(),
            "cannot record the card's health beside its lock: {e}"
        );
    }
}

/// Clears the card's health record (its preflight passed in run `run_id`), saying why.
pub fn forget(lease: &DeviceLease, run_id: &str, reason: &str) {
    if let Err(e) = lease.clear_health(run_id, reason) {
        tracing::warn!(
            device = lease.card(),
            "cannot clear the card's health record: {e}"
        );
    }
}
