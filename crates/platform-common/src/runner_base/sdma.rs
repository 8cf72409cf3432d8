//! The runner's streams and its SDMA engine, as upstream handles them
//! ([`crate::sdma`] cites the sources).
//!
//! - Every stream a runner (or its probes) creates is put in stop-on-failure mode
//!   ([`create_run_stream`]), as upstream's SDMA run stream: a failed task surfaces at the next
//!   sync (507015 for an SDMA fault) instead of a later timeout (507046). The per-arch drain codes
//!   of ordinary faults are untouched (they are the seed's measurements).
//! - A runner created with the SDMA option provisions SDMA at init ([`SdmaSet::provision`]): an
//!   SDMA stream, two [`SDMA_PROBE_BYTES`] buffers, and the warm-up copy, synced; a warm-up that
//!   faults fails the init.
//! - The SDMA probe ([`sdma_probe`]) is a 64-byte device-to-device copy, synced; a stream whose
//!   sync failed is dropped with `aclrtDestroyStreamForce` (it cannot be synchronised).
//!
//! This file never resets a card and never decides what a failure means (finalize and the
//! fail-fast chain do).

use crate::driver::{DevicePtr, Driver, SdmaOrigin, Stream, StreamFailureMode};
use crate::error::DriverError;
use crate::sdma::SDMA_PROBE_BYTES;
use crate::timeouts::Timeouts;

/// `aclrtCreateStream`, then `aclrtSetStreamFailureMode(ACL_STOP_ON_FAILURE)`; a stream whose
/// mode cannot be set is destroyed and the error returned (as upstream's `create_run_stream`).
pub fn create_run_stream(driver: &dyn Driver) -> Result<Stream, DriverError> {
    let stream = driver.create_stream()?;
    if let Err(e) = driver.set_stream_failure_mode(stream, StreamFailureMode::StopOnFailure) {
        let _ = driver.destroy_stream(stream);
        return Err(e);
    }
    Ok(stream)
}

/// What an SDMA-provisioned runner holds: its SDMA stream and the two probe buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaSet {
    /// The SDMA stream (stop-on-failure).
    pub stream: Stream,
    /// The copy's source and destination ([`SDMA_PROBE_BYTES`] each).
    pub buffers: [DevicePtr; 2],
}

impl SdmaSet {
    /// Provisions SDMA on the current context: the stream, the buffers, and the warm-up copy,
    /// synced within the stream-sync timeout. On a failure what was made is released
    /// best-effort (a stream whose sync failed is force-destroyed) and the error returned.
    pub fn provision(driver: &dyn Driver, timeouts: &Timeouts) -> Result<Self, DriverError> {
        let stream = create_run_stream(driver)?;
        let a = match driver.malloc(SDMA_PROBE_BYTES) {
            Ok(p) => p,
            Err(e) => {
                let _ = driver.destroy_stream(stream);
                return Err(e);
            }
        };
        let b = match driver.malloc(SDMA_PROBE_BYTES) {
            Ok(p) => p,
            Err(e) => {
                let _ = driver.free(a);
                let _ = driver.destroy_stream(stream);
                return Err(e);
            }
        };
        let set = Self {
            stream,
            buffers: [a, b],
        };
        if let Err(e) = set.copy(driver, SdmaOrigin::Warmup, timeouts) {
            let _ = driver.destroy_stream_force(stream);
            let _ = driver.free(a);
            let _ = driver.free(b);
            return Err(e);
        }
        Ok(set)
    }

    /// One [`SDMA_PROBE_BYTES`] copy from the first buffer to the second on the SDMA stream,
    /// synced within the stream-sync timeout.
    pub fn copy(
        &self,
        driver: &dyn Driver,
        origin: SdmaOrigin,
        timeouts: &Timeouts,
    ) -> Result<(), DriverError> {
        let [src, dst] = self.buffers;
        driver.sdma_copy(self.stream, dst, src, SDMA_PROBE_BYTES, origin)?;
        driver.synchronize_stream_with_timeout(self.stream, timeouts.stream_sync_ms())
    }
}

/// The SDMA probe on the current context, with streams and buffers of its own: a
/// [`SDMA_PROBE_BYTES`] device-to-device copy, synced. `Ok` means the card's SDMA engine works.
pub fn sdma_probe(driver: &dyn Driver, timeouts: &Timeouts) -> Result<(), DriverError> {
    let stream = create_run_stream(driver)?;
    let release = |bufs: &[DevicePtr], force: bool| {
        for &p in bufs {
            let _ = driver.free(p);
        }
        if force {
            let _ = driver.destroy_stream_force(stream);
        } else {
            let _ = driver.destroy_stream(stream);
        }
    };
    let mut bufs = Vec::with_capacity(2);
    for _ in 0..2 {
        match driver.malloc(SDMA_PROBE_BYTES) {
            Ok(p) => bufs.push(p),
            Err(e) => {
                release(&bufs, false);
                return Err(e);
            }
        }
    }
    let set = SdmaSet {
        stream,
        buffers: [bufs[0], bufs[1]],
    };
    match set.copy(driver, SdmaOrigin::Probe, timeouts) {
        Ok(()) => {
            for &p in &bufs {
                driver.free(p)?;
            }
            driver.destroy_stream(stream)
        }
        Err(e) => {
            release(&bufs, true);
            Err(e)
        }
    }
}
