//! Simulated device memory: real host memory the sim allocates, addressed by its host address.
//!
//! This file owns allocations and the map from device addresses to them. Buffers are words of
//! `AtomicU64`, so the host side copies in and out without `unsafe` while kernels on AICore
//! threads read and write the same memory through the addresses they are given. A queued op holds
//! its buffers alive, so freeing memory never pulls it from under a running kernel. Each context
//! has the card's capacity ([`super::SimConfig::card_memory`]): an allocation past what is left,
//! or one the host cannot back (`try_reserve`), is refused rather than aborting the process. It
//! never decides whether a call may allocate (the sticky rules are the driver's).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::driver::DevicePtr;

/// One allocation.
#[derive(Debug)]
pub(crate) struct DeviceBuffer {
    words: Box<[AtomicU64]>,
    size: usize,
}

impl DeviceBuffer {
    /// A zeroed buffer of `size` bytes (rounded up to whole words inside). For small fixed sizes;
    /// allocations a caller sizes go through [`Self::try_new`].
    pub(crate) fn new(size: usize) -> Self {
        let words = size.div_ceil(8);
        Self {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            size,
        }
    }

    /// A zeroed buffer of `size` bytes, or `None` when the host cannot allocate it.
    pub(crate) fn try_new(size: usize) -> Option<Self> {
        let words = size.div_ceil(8);
        let mut v: Vec<AtomicU64> = Vec::new();
        v.try_reserve_exact(words).ok()?;
        v.extend((0..words).map(|_| AtomicU64::new(0)));
        Some(Self {
            words: v.into_boxed_slice(),
            size,
        })
    }

    /// The buffer's device address.
    pub(crate) fn addr(&self) -> u64 {
        self.words.as_ptr() as u64
    }

    /// Its size in bytes.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Copies `src` into the buffer at byte `offset`; false when it does not fit.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> bool {
        if !self.fits(offset, src.len()) {
            return false;
        }
        for (i, &b) in src.iter().enumerate() {
            self.set_byte(offset + i, b);
        }
        true
    }

    /// Copies bytes at `offset` into `dst`; false when the range does not fit.
    pub(crate) fn read(&self, offset: usize, dst: &mut [u8]) -> bool {
        if !self.fits(offset, dst.len()) {
            return false;
        }
        for (i, b) in dst.iter_mut().enumerate() {
            *b = self.byte(offset + i);
        }
        true
    }

    fn fits(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.size)
    }

    fn byte(&self, at: usize) -> u8 {
        self.words[at / 8].load(Ordering::Acquire).to_ne_bytes()[at % 8]
    }

    fn set_byte(&self, at: usize, value: u8) {
        let word = &self.words[at / 8];
        let mut bytes = word.load(Ordering::Acquire).to_ne_bytes();
        bytes[at % 8] = value;
        word.store(u64::from_ne_bytes(bytes), Ordering::Release);
    }
}

/// Why an allocation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AllocError {
    /// More than the card has left.
    OverCapacity {
        /// Bytes asked for.
        size: usize,
        /// Bytes the card has left.
        left: u64,
    },
    /// The host could not back it.
    Host,
}

/// The live allocations of one context, by address, and how much of the card they use.
#[derive(Debug)]
pub(crate) struct Memory {
    buffers: BTreeMap<u64, Arc<DeviceBuffer>>,
    capacity: u64,
    used: u64,
}

impl Memory {
    /// No allocations, on a card of `capacity` bytes.
    pub(crate) fn new(capacity: u64) -> Self {
        Self {
            buffers: BTreeMap::new(),
            capacity,
            used: 0,
        }
    }

    /// Allocates `size` bytes, within the card's capacity.
    pub(crate) fn alloc(&mut self, size: usize) -> Result<Arc<DeviceBuffer>, AllocError> {
        let left = self.capacity.saturating_sub(self.used);
        let want = u64::try_from(size).unwrap_or(u64::MAX);
        if want > left {
            return Err(AllocError::OverCapacity { size, left });
        }
        let buf = Arc::new(DeviceBuffer::try_new(size).ok_or(AllocError::Host)?);
        self.buffers.insert(buf.addr(), Arc::clone(&buf));
        self.used += want;
        Ok(buf)
    }

    /// Frees the allocation starting at `ptr`; false when there is none.
    pub(crate) fn free(&mut self, ptr: DevicePtr) -> bool {
        match self.buffers.remove(&ptr.0) {
            Some(buf) => {
                self.used = self
                    .used
                    .saturating_sub(u64::try_from(buf.size()).unwrap_or(u64::MAX));
                true
            }
            None => false,
        }
    }

    /// The allocation containing `ptr`, with `ptr`'s offset into it.
    pub(crate) fn find(&self, ptr: DevicePtr) -> Option<(Arc<DeviceBuffer>, usize)> {
        let (&base, buf) = self.buffers.range(..=ptr.0).next_back()?;
        let offset = usize::try_from(ptr.0 - base).ok()?;
        (offset < buf.size()).then(|| (Arc::clone(buf), offset))
    }

    /// Drops every allocation (a reset).
    pub(crate) fn clear(&mut self) {
        self.buffers.clear();
        self.used = 0;
    }

    /// How many allocations are live.
    pub(crate) fn len(&self) -> usize {
        self.buffers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_round_trip_at_any_offset() {
        let mut m = Memory::new(1 << 20);
        let b = m.alloc(13).unwrap();
        assert!(b.write(3, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
        let mut out = [0u8; 13];
        assert!(b.read(0, &mut out));
        assert_eq!(out, [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert!(!b.write(4, &[0; 10]), "a copy past the end must be refused");
        let (found, off) = m.find(DevicePtr(b.addr() + 5)).unwrap();
        assert_eq!((found.addr(), off), (b.addr(), 5));
        assert!(m.find(DevicePtr(b.addr() + 13)).is_none());
        assert!(m.free(DevicePtr(b.addr())));
        assert!(m.find(DevicePtr(b.addr())).is_none());
    }
}

#[cfg(test)]
mod capacity_tests {
    use super::*;

    #[test]
    fn allocations_stay_within_the_capacity_and_frees_give_it_back() {
        let mut m = Memory::new(100);
        let a = m.alloc(60).unwrap();
        assert_eq!(
            m.alloc(41).unwrap_err(),
            AllocError::OverCapacity { size: 41, left: 40 }
        );
        let b = m.alloc(40).unwrap();
        assert!(m.free(DevicePtr(a.addr())));
        m.alloc(60).unwrap();
        m.clear();
        m.alloc(100).unwrap();
        drop(b);
    }

    #[test]
    fn what_the_host_cannot_back_is_refused_not_aborted() {
        let mut m = Memory::new(u64::MAX);
        assert_eq!(m.alloc(1 << 62).unwrap_err(), AllocError::Host);
        assert_eq!(m.alloc(usize::MAX).unwrap_err(), AllocError::Host);
        assert_eq!(m.len(), 0);
    }
}
