//! [`BufferId`]: the handle of one device buffer of one runner (the runner's tag and the
//! buffer's number), checked at every use by the runner that made it (`buffers`).
//!
//! This file owns the handle alone, below the errors that name it. It never touches a buffer.

use std::fmt;

/// A device buffer of one runner. Cheap to copy; checked at every use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId {
    runner: u64,
    index: u64,
}

impl BufferId {
    /// The handle of buffer `index` of the runner tagged `runner`.
    pub(super) fn new(runner: u64, index: u64) -> Self {
        Self { runner, index }
    }

    /// The tag of the runner that allocated it.
    pub fn runner(&self) -> u64 {
        self.runner
    }

    /// Its number within that runner, from 1.
    pub fn index(&self) -> u64 {
        self.index
    }
}

impl fmt::Display for BufferId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "buffer {} of runner {}", self.index, self.runner)
    }
}
