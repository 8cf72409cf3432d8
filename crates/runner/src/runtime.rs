//! The pool key of a class ([`Runtime`]): cases of one runtime share a pooled chip worker on a
//! card. Below the case API (which re-exports it as `case::Runtime`), since workers and the pool
//! are keyed by it too.
//!
//! This file owns that one small declaration. It never builds a worker.

use std::fmt;

/// A runtime: the key of the chip-worker pool. Cases of one runtime share a pooled worker on a card.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Runtime {
    /// The runtime's name, e.g. `tensormap_and_ringbuffer`.
    pub name: String,
    /// Workers of this runtime are created with the SDMA option (one force-reset attempt, as the
    /// a2a3 SDMA workers have).
    pub sdma: bool,
}

impl Runtime {
    /// A runtime without the SDMA option.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sdma: false,
        }
    }

    /// A runtime whose workers are created with the SDMA option.
    pub fn sdma(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sdma: true,
        }
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}
