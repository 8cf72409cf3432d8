//! A queued retry waiting for a good card: the data `placement` keeps per retry (which case, the
//! card its failed attempt ran on, since when it waits, whether its wait ran out).
//!
//! This file owns that record only; what it means is `placement`'s.

use std::time::Duration;

/// A retry in the queue, waiting for a good card.
#[derive(Debug, Clone, Copy)]
pub struct RetryWait {
    /// The case.
    pub case: usize,
    /// The card its failed attempt ran on.
    pub own_card: usize,
    /// When it was queued.
    pub since: Duration,
    /// Whether its wait ran out (the hand-out ran again for it then).
    pub over: bool,
}
