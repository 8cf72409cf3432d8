//! Simulated device memory: real host memory the sim allocates, addressed by its host address.
//!
//! This file owns allocations and the map from device addresses to them. Buffers are words of
//! `AtomicU64`, so the host side copies in and out without `unsafe` while kernels on AICore
//! threads read and write the same memory through the addresses they are given. A queued op holds
//! its buffers alive, so freeing memory never pulls it from under a running kernel. It never
//! decides whether a call may allocate (the sticky rules are the driver's).

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
    /// A zeroed buffer of `size` bytes (rounded up to whole words inside).
    pub(crate) fn new(size: usize) -> Self {
        let words = size.div_ceil(8);
        Self {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            size,
        }
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

/// The live allocations of one context, by address.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    buffers: BTreeMap<u64, Arc<DeviceBuffer>>,
}

impl Memory {
    /// Allocates `size` bytes.
    pub(crate) fn alloc(&mut self, size: usize) -> Arc<DeviceBuffer> {
        let buf = Arc::new(DeviceBuffer::new(size));
        self.buffers.insert(buf.addr(), Arc::clone(&buf));
        buf
    }

    /// Frees the allocation starting at `ptr`; false when there is none.
    pub(crate) fn free(&mut self, ptr: DevicePtr) -> bool {
        self.buffers.remove(&ptr.0).is_some()
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
        let mut m = Memory::default();
        let b = m.alloc(13);
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
