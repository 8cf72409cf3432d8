//! SDMA, the card's system DMA engine, as measured upstream: the facts both the runner and the
//! simulated card follow, in one place.
//!
//! Sources (hw-native-sys/simpler at 6ebaf77, `src/a2a3/platform/onboard/host/device_runner.cpp`):
//! - `create_run_stream`: a worker that provisioned SDMA holds [`CP_PROCESS_STREAMS`]
//!   CP-process streams; on CANN 9.0.0 with driver 26.0.rc1 a force reset walks them and blocks
//!   in a 300-second remote event ([`REAL_REMOTE_EVENT_TIMEOUT`]) unless the host observed the
//!   SDMA-generation fault before the device went down, hence stop-on-failure on the SDMA run
//!   stream (the fault surfaces early as 507015; an ordinary stream keeps 507046).
//! - `finalize`: no retirement fence exists for those streams, so before the one force-reset
//!   attempt of an SDMA-provisioned card upstream waits `max(10 s, op-execute timeout + 5 s)`
//!   (simpler #1664) ([`handoff_wait`]); a non-confirming reset already blocks on the
//!   remote-event timeout and a retry multiplies it, so there is exactly one attempt; `aclFinalize`
//!   runs only after a confirmed reset.
//! - `src/common/platform/onboard/host/device_runner_base.cpp`, `provision_dma_workspace`: the
//!   SDMA warm-up runs at worker init, and a warm-up that faults the card fails the init
//!   (simpler #1896, #1906, #2088, #2092).
//! - hw-native-sys/pypto-lib #1240: a health probe without SDMA passed wedged dies; only the probe
//!   with SDMA enabled was reliable ([`SDMA_PROBE_BYTES`]).
//!
//! This file owns those numbers and the handoff formula, scaled for the simulator; it makes no
//! driver call.

use std::time::Duration;

use crate::timeouts::TimeoutProfile;

/// CP-process streams a worker that provisioned SDMA holds (upstream's measurement).
pub const CP_PROCESS_STREAMS: u32 = 48;

/// Bytes the SDMA probe copies device to device.
pub const SDMA_PROBE_BYTES: usize = 64;

/// The remote-event timeout a non-confirming force reset (or `aclFinalize` after one) blocks
/// for on a real card (CANN 9.0.0, driver 26.0.rc1).
pub const REAL_REMOTE_EVENT_TIMEOUT: Duration = Duration::from_secs(300);

/// The simulator's remote-event timeout unless its config says otherwise (the real 300 s,
/// scaled down a thousandfold).
pub const SIM_REMOTE_EVENT_TIMEOUT: Duration = Duration::from_millis(300);

/// The two terms of the handoff wait: `max(floor, op-execute timeout + margin)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandoffScale {
    /// The wait's lower bound (10 s on real cards).
    pub floor: Duration,
    /// What is added to the applied op-execute timeout (5 s on real cards).
    pub margin: Duration,
}

impl HandoffScale {
    /// The scale of `profile`: upstream's 10 s and 5 s on real cards; 100 ms and 50 ms on the
    /// simulator (whose op-execute default is 500 ms instead of 4 s).
    pub fn of(profile: TimeoutProfile) -> Self {
        match profile {
            TimeoutProfile::Real => Self {
                floor: Duration::from_secs(10),
                margin: Duration::from_secs(5),
            },
            TimeoutProfile::Sim => Self {
                floor: Duration::from_millis(100),
                margin: Duration::from_millis(50),
            },
        }
    }
}

/// How long a runner waits, after an SDMA-provisioned card faulted, before its one force-reset
/// attempt: `max(floor, applied op-execute timeout rounded up to ms + margin)` of `profile`'s
/// [`HandoffScale`]. `applied` is the op-execute timeout the runtime applied (read back), not
/// the one requested.
pub fn handoff_wait(profile: TimeoutProfile, applied: Duration) -> Duration {
    let scale = HandoffScale::of(profile);
    let op_ms = applied.as_micros().div_ceil(1000);
    let op = Duration::from_millis(u64::try_from(op_ms).unwrap_or(u64::MAX));
    scale.floor.max(op.saturating_add(scale.margin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handoff_wait_is_the_larger_of_the_floor_and_op_execute_plus_the_margin() {
        let real = |ms| handoff_wait(TimeoutProfile::Real, Duration::from_millis(ms));
        // Upstream's numbers: a 4 s op-execute timeout waits the 10 s floor, a 7 s one 12 s.
        assert_eq!(real(4000), Duration::from_secs(10));
        assert_eq!(real(7000), Duration::from_secs(12));
        // The op-execute timeout is rounded up to whole milliseconds, as upstream's `+ 999`.
        assert_eq!(
            handoff_wait(TimeoutProfile::Real, Duration::from_micros(7_000_001)),
            Duration::from_millis(12_001)
        );
        let sim = |ms| handoff_wait(TimeoutProfile::Sim, Duration::from_millis(ms));
        assert_eq!(sim(500), Duration::from_millis(550));
        assert_eq!(sim(20), Duration::from_millis(100));
    }
}
