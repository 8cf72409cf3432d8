//! One clock for a run: `CLOCK_MONOTONIC`, which is one clock for every process of the host, so a
//! lane's reading and the dispatcher's compare directly. A health event is stamped with the lane's
//! monotonic reading when it happens, an attempt with the dispatcher's, and both become "ms since
//! the run started" against the run's one monotonic start ([`run_ms`]); a step of the wall clock
//! (NTP, a VM resumed) reorders nothing.
//!
//! This file owns the readings and the conversion. It never stamps an event itself.

use rustix::time::{clock_gettime, ClockId};

/// Now, on `CLOCK_MONOTONIC`, in nanoseconds.
pub fn mono_ns() -> u64 {
    let t = clock_gettime(ClockId::Monotonic);
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(t.tv_nsec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

/// The monotonic reading `t_ns` as whole milliseconds since the run's monotonic start
/// `start_ns` (0 for a moment before it).
pub fn run_ms(start_ns: u64, t_ns: u64) -> u64 {
    t_ns.saturating_sub(start_ns) / 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_become_ms_since_the_run_start() {
        const MS: u64 = 1_000_000;
        let start = 5_000 * MS + 123;
        #[rustfmt::skip]
        let rows = [
            // what,                       reading,            ms since the start
            ("the start itself",           start,              0),
            ("just under a millisecond",   start + MS - 1,     0),
            ("one millisecond later",      start + MS,         1),
            ("an hour later",              start + 3_600_000 * MS, 3_600_000),
            ("before the start",           start - 7 * MS,     0),
            ("the clock's origin",         0,                  0),
        ];
        for (what, t, want) in rows {
            assert_eq!(run_ms(start, t), want, "{what}");
        }
    }

    #[test]
    fn the_clock_never_goes_back() {
        let a = mono_ns();
        let b = mono_ns();
        assert!(b >= a);
        assert!(a > 0);
    }
}
