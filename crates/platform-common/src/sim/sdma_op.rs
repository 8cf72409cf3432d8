//! One queued SDMA copy as a simulated stream runs it: copy the bytes, fail on the device
//! (507015), or stall until the stream is torn down. Which fate a copy gets is decided by
//! `sdma.rs`; this file only runs it.

use std::sync::Arc;

use super::aicore::{OpControl, StallNotify};
use super::memory::DeviceBuffer;
use crate::error::{codes, Code};

/// What a queued SDMA copy does when its stream runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SdmaFate {
    /// Copies the bytes.
    Copy,
    /// Fails on the device with 507015 (a stop-on-failure stream).
    Fail,
    /// Never finishes (a stream that continues on failure): its sync times out.
    Stall,
}

/// One queued device-to-device SDMA copy.
#[derive(Debug)]
pub(crate) struct SdmaOp {
    src: (Arc<DeviceBuffer>, usize),
    dst: (Arc<DeviceBuffer>, usize),
    bytes: usize,
    fate: SdmaFate,
}

impl SdmaOp {
    /// A copy of `bytes` bytes from `src` to `dst` (buffer and offset each) with its fate.
    pub(crate) fn new(
        src: (Arc<DeviceBuffer>, usize),
        dst: (Arc<DeviceBuffer>, usize),
        bytes: usize,
        fate: SdmaFate,
    ) -> Self {
        Self {
            src,
            dst,
            bytes,
            fate,
        }
    }

    /// Runs the copy on the stream's worker thread.
    pub(crate) fn run(&self, ctl: &OpControl, notify: StallNotify<'_>) -> Result<(), Code> {
        match self.fate {
            SdmaFate::Fail => Err(codes::RT_AICORE_EXCEPTION),
            SdmaFate::Stall => {
                ctl.stall_until_cancelled(notify);
                Ok(())
            }
            SdmaFate::Copy => {
                let mut buf = vec![0u8; self.bytes];
                if self.src.0.read(self.src.1, &mut buf) && self.dst.0.write(self.dst.1, &buf) {
                    Ok(())
                } else {
                    Err(codes::RT_AICORE_EXCEPTION)
                }
            }
        }
    }
}
