//! [`Breadcrumb`]: the record a lane's card thread keeps of what it is doing, as atomics, so a
//! thread that is not the stuck one (the lane's channel reader) can read it at any time.
//!
//! This file owns the record and its one reading ([`Crumb`]). Writers are the card thread only:
//! the lane at a case's start and end, the case context when it knows how many launches a case
//! makes, and [`super::StampedDriver`] around every driver call. Every store is a plain atomic
//! store (no lock, no allocation); a reading taken while the thread moves on may mix two moments,
//! which a diagnosis of a thread stuck in one call never sees. It never formats or sends anything.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

use platform_common::driver::DriverCall;

/// The case field when no case is running.
pub const NO_CASE: u32 = u32::MAX;

/// The call field when no driver call is in flight.
const NO_CALL: u8 = u8::MAX;

/// What a lane's card thread is doing (see the module docs).
#[derive(Debug)]
pub struct Breadcrumb {
    /// The running case: its index in the lane's case table, or [`NO_CASE`].
    case: AtomicU32,
    /// Case launches the running case has started (the one in flight included).
    launch: AtomicU64,
    /// Launches the running case makes, when known (0: unknown).
    launches: AtomicU64,
    /// The driver call in flight: its index in [`DriverCall::ALL`], or `NO_CALL`.
    call: AtomicU8,
    /// When that call started (`CLOCK_MONOTONIC`, ns).
    since_ns: AtomicU64,
}

impl Default for Breadcrumb {
    fn default() -> Self {
        Self {
            case: AtomicU32::new(NO_CASE),
            launch: AtomicU64::new(0),
            launches: AtomicU64::new(0),
            call: AtomicU8::new(NO_CALL),
            since_ns: AtomicU64::new(0),
        }
    }
}

/// One reading of a [`Breadcrumb`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crumb {
    /// The running case's index in the lane's case table.
    pub case: Option<u32>,
    /// Case launches it has started (0: none yet).
    pub launch: u64,
    /// Launches it makes, when known.
    pub launches: Option<u64>,
    /// The driver call in flight, and since when (`CLOCK_MONOTONIC`, ns).
    pub in_call: Option<(DriverCall, u64)>,
}

impl Breadcrumb {
    /// Case `index` of the lane's table starts: no launch yet, the number of launches unknown.
    pub fn start_case(&self, index: u32) {
        self.launch.store(0, Ordering::Relaxed);
        self.launches.store(0, Ordering::Relaxed);
        self.case.store(index, Ordering::Release);
    }

    /// The running case ended.
    pub fn end_case(&self) {
        self.case.store(NO_CASE, Ordering::Release);
    }

    /// The running case makes `n` launches.
    pub fn plan_launches(&self, n: u64) {
        self.launches.store(n, Ordering::Relaxed);
    }

    /// A case launch starts.
    pub fn launch_started(&self) {
        self.launch.fetch_add(1, Ordering::Relaxed);
    }

    /// Driver call `call` starts now (`now_ns` on `CLOCK_MONOTONIC`).
    pub fn enter(&self, call: DriverCall, now_ns: u64) {
        self.since_ns.store(now_ns, Ordering::Relaxed);
        self.call.store(call as u8, Ordering::Release);
    }

    /// The driver call in flight returned.
    pub fn leave(&self) {
        self.call.store(NO_CALL, Ordering::Release);
    }

    /// What the thread is doing now.
    pub fn read(&self) -> Crumb {
        let call = self.call.load(Ordering::Acquire);
        let since = self.since_ns.load(Ordering::Relaxed);
        let case = self.case.load(Ordering::Acquire);
        let launches = self.launches.load(Ordering::Relaxed);
        Crumb {
            case: (case != NO_CASE).then_some(case),
            launch: self.launch.load(Ordering::Relaxed),
            launches: (launches > 0).then_some(launches),
            in_call: DriverCall::ALL.get(usize::from(call)).map(|c| (*c, since)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_stored_as_its_index_in_all() {
        for (i, call) in DriverCall::ALL.into_iter().enumerate() {
            assert_eq!(call as u8 as usize, i, "{call}");
        }
        assert!(DriverCall::ALL.len() < usize::from(NO_CALL));
    }

    #[test]
    fn readings_follow_the_case_and_its_calls() {
        let b = Breadcrumb::default();
        assert_eq!(
            b.read(),
            Crumb {
                case: None,
                launch: 0,
                launches: None,
                in_call: None
            }
        );
        b.start_case(7);
        b.plan_launches(5);
        b.enter(DriverCall::Malloc, 10);
        b.leave();
        b.launch_started();
        b.launch_started();
        b.enter(DriverCall::LaunchAicore, 42);
        let r = b.read();
        assert_eq!(r.case, Some(7));
        assert_eq!((r.launch, r.launches), (2, Some(5)));
        assert_eq!(r.in_call, Some((DriverCall::LaunchAicore, 42)));
        b.leave();
        b.end_case();
        assert_eq!(b.read().in_call, None);
        assert_eq!(b.read().case, None);
        b.start_case(8);
        assert_eq!(
            (b.read().launch, b.read().launches),
            (0, None),
            "a new case starts afresh"
        );
    }
}
