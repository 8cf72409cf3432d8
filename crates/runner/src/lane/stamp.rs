//! A lane's health events, stamped when they happen on the run's one clock ([`crate::clock`]).
//!
//! A device runner calls its subscriber on its own thread at the moment of the event; the lane
//! sends the events later (at a case's end, after a retire), so the stamp is taken here, in the
//! subscriber, not when the event is sent. This file owns that subscriber. It never sends an event.

use std::sync::mpsc::{self, Receiver};

use platform_common::health::{HealthEvent, HealthSubscriber};

use crate::clock;

/// Health events with their `CLOCK_MONOTONIC` stamp, in the order they happened.
pub type Stamped = Receiver<(u64, HealthEvent)>;

/// A subscriber that stamps every event as it happens, and where the events go.
pub fn subscriber() -> (HealthSubscriber, Stamped) {
    let (tx, rx) = mpsc::channel();
    let sub = HealthSubscriber::new(move |e| {
        let _ = tx.send((clock::mono_ns(), e.clone()));
    });
    (sub, rx)
}
