//! Whether a failed lane spawn is tried again, and after how long: a transient failure (the host
//! out of processes, memory or descriptors for a moment: `EAGAIN`, `ENOMEM`, `EMFILE`, ...) is
//! retried with a doubling backoff, up to [`SPAWN_TRIES`] tries in about 0.75 s; anything else,
//! or the last try, gives up, and the card is quarantined (step 7).
//!
//! This file owns that rule as a pure function of the try count and the error's code (never its
//! message). It never spawns and never sleeps: the spawner applies the delay.

use std::io;
use std::time::Duration;

use rustix::io::Errno;

/// Tries of one lane spawn before its card is given up.
pub const SPAWN_TRIES: u32 = 5;

/// The delay before the second try; it doubles before each later one (50, 100, 200, 400 ms).
pub const SPAWN_BACKOFF: Duration = Duration::from_millis(50);

/// Whether `error` may pass by itself: the host was short of processes, memory or descriptors,
/// or the call was interrupted.
pub fn transient(error: &io::Error) -> bool {
    matches!(
        Errno::from_io_error(error),
        Some(Errno::AGAIN | Errno::INTR | Errno::NOMEM | Errno::MFILE | Errno::NFILE | Errno::NOBUFS)
    )
}

/// After try number `tries` (from 1) failed with `error`: the delay before the next try, or
/// `None` to give up.
pub fn retry_after(tries: u32, error: &io::Error) -> Option<Duration> {
    if tries >= SPAWN_TRIES || !transient(error) {
        return None;
    }
    Some(SPAWN_BACKOFF * 2u32.saturating_pow(tries.saturating_sub(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errno(e: Errno) -> io::Error {
        io::Error::from_raw_os_error(e.raw_os_error())
    }

    #[test]
    fn spawn_retry_table() {
        const MS: Duration = Duration::from_millis(1);
        #[rustfmt::skip]
        let rows: Vec<(&str, u32, io::Error, Option<Duration>)> = vec![
            // what,                                   try, error,                    next try after
            ("EAGAIN on the first try",                 1,  errno(Errno::AGAIN),       Some(50 * MS)),
            ("EAGAIN again: the backoff doubles",       2,  errno(Errno::AGAIN),       Some(100 * MS)),
            ("out of memory on the fourth",             4,  errno(Errno::NOMEM),       Some(400 * MS)),
            ("the fifth try was the last",              5,  errno(Errno::AGAIN),       None),
            ("out of descriptors",                      1,  errno(Errno::MFILE),       Some(50 * MS)),
            ("the host out of descriptors",             1,  errno(Errno::NFILE),       Some(50 * MS)),
            ("interrupted",                             3,  errno(Errno::INTR),        Some(200 * MS)),
            ("the binary is gone: never transient",     1,  errno(Errno::NOENT),       None),
            ("permission denied: never transient",      1,  errno(Errno::ACCESS),      None),
            ("an error without a code",                 1,  io::Error::other("odd"),   None),
        ];
        for (what, tries, error, want) in rows {
            assert_eq!(retry_after(tries, &error), want, "{what}");
        }
        let total: Duration = (1..SPAWN_TRIES)
            .filter_map(|t| retry_after(t, &errno(Errno::AGAIN)))
            .sum();
        assert_eq!(total, 750 * MS, "5 tries in about 0.75 s");
    }
}
