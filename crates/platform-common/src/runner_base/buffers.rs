//! Device buffers a caller keeps across runs: allocate, copy in, pass to any number of launches
//! ([`RunArg::BufferIn`](super::RunArg::BufferIn) / [`RunArg::BufferOut`](super::RunArg::BufferOut)),
//! copy out, free.
//!
//! A buffer belongs to the runner that allocated it. Its [`BufferId`] carries the runner's tag (a
//! number no other runner of the process ever has), so a handle kept past its runner (a worker
//! that was closed and rebuilt after a fault) is refused as a usage error before any driver call,
//! as is a freed handle or a copy outside the buffer: no call ever reaches a dead context through a
//! stale handle. Every operation is admitted by the guard and makes the card current first; a
//! driver error goes through the fail-fast chain, exactly as a run's (`buffer_ops`). A healthy
//! finalize frees what is left; the fatal teardown abandons it with the rest. This file owns the
//! table of a runner's live buffers and the range check; it never launches anything.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::driver::DevicePtr;

pub use super::buffer_id::BufferId;
use super::errors::UsageError;

/// Tags handed to runners, one each, never reused in a process.
static NEXT_TAG: AtomicU64 = AtomicU64::new(1);

/// One live buffer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Allocation {
    pub(super) ptr: DevicePtr,
    pub(super) bytes: usize,
}

/// The live buffers of one runner.
#[derive(Debug)]
pub(super) struct Buffers {
    tag: u64,
    next: u64,
    live: BTreeMap<u64, Allocation>,
}

impl Buffers {
    /// An empty table with a tag of its own.
    pub(super) fn new() -> Self {
        Self {
            tag: NEXT_TAG.fetch_add(1, Ordering::Relaxed),
            next: 1,
            live: BTreeMap::new(),
        }
    }

    /// The runner's tag.
    #[cfg(test)]
    fn tag(&self) -> u64 {
        self.tag
    }

    /// The live buffer `id`, or why it is not one of this runner's.
    pub(super) fn get(&self, id: BufferId) -> Result<Allocation, UsageError> {
        if id.runner() != self.tag {
            return Err(UsageError::ForeignBuffer {
                buffer: id,
                runner: self.tag,
            });
        }
        self.live
            .get(&id.index())
            .copied()
            .ok_or(UsageError::FreedBuffer(id))
    }

    pub(super) fn insert(&mut self, a: Allocation) -> BufferId {
        let index = self.next;
        self.next += 1;
        self.live.insert(index, a);
        BufferId::new(self.tag, index)
    }

    pub(super) fn remove(&mut self, id: BufferId) {
        self.live.remove(&id.index());
    }

    /// How many buffers are live.
    pub(super) fn len(&self) -> usize {
        self.live.len()
    }

    /// Takes every live buffer out of the table (a teardown).
    pub(super) fn drain(&mut self) -> Vec<Allocation> {
        std::mem::take(&mut self.live).into_values().collect()
    }
}

/// Checks that `len` bytes at `offset` lie inside `a`.
pub(super) fn check_range(id: BufferId, a: Allocation, offset: usize, len: usize) -> Result<(), UsageError> {
    match offset.checked_add(len) {
        Some(end) if end <= a.bytes => Ok(()),
        _ => Err(UsageError::BufferRange {
            buffer: id,
            offset,
            len,
            size: a.bytes,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_checked_against_their_runner_and_liveness() {
        let mut mine = Buffers::new();
        let other = Buffers::new();
        assert_ne!(mine.tag(), other.tag(), "every runner has a tag of its own");
        let id = mine.insert(Allocation {
            ptr: DevicePtr(0x1000),
            bytes: 64,
        });
        assert_eq!(mine.get(id).unwrap().bytes, 64);
        assert_eq!(
            other.get(id).unwrap_err(),
            UsageError::ForeignBuffer {
                buffer: id,
                runner: other.tag()
            }
        );
        mine.remove(id);
        assert_eq!(mine.get(id).unwrap_err(), UsageError::FreedBuffer(id));
        let again = mine.insert(Allocation {
            ptr: DevicePtr(0x1000),
            bytes: 8,
        });
        assert_ne!(again, id, "a freed number is never handed out again");
    }

    #[test]
    fn ranges_stay_inside_the_buffer() {
        let id = BufferId::new(1, 1);
        let a = Allocation {
            ptr: DevicePtr(0),
            bytes: 16,
        };
        assert!(check_range(id, a, 0, 16).is_ok());
        assert!(check_range(id, a, 8, 8).is_ok());
        assert!(check_range(id, a, 16, 0).is_ok());
        for (offset, len) in [(0, 17), (9, 8), (usize::MAX, 2)] {
            assert!(
                matches!(
                    check_range(id, a, offset, len),
                    Err(UsageError::BufferRange { .. })
                ),
                "{offset}+{len}"
            );
        }
    }
}
