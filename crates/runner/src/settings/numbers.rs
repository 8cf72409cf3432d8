//! The one parser of each kind of number a run setting takes (a count, seconds, a wait), shared
//! by the flags, the environment and the config file, and the built-in timeouts.
//!
//! This file owns those rules (on top of [`platform_common::number`]'s one rule for a number).
//! It never reads a setting.

use std::time::Duration;

/// Default per-case timeout.
pub const DEFAULT_CASE_TIMEOUT: Duration = Duration::from_secs(300);

/// Default bound on a card's init (`--init-timeout`).
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(120);

/// The shortest timeout a flag takes: anything shorter would end every lane at once.
pub const MIN_TIMEOUT: Duration = Duration::from_millis(1);

/// The longest (about 115 days).
const MAX_TIMEOUT_SECS: f64 = 1e7;

/// A timeout flag's value: seconds as `DIGITS[.DIGITS]` (the one number rule of
/// [`platform_common::number`]), at least [`MIN_TIMEOUT`].
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let v = platform_common::number::decimal(s)
        .ok_or_else(|| format!("{s:?} is not a number of seconds (digits, optionally a point and digits)"))?;
    if v > MAX_TIMEOUT_SECS {
        return Err(format!("{s:?} is too long (at most {MAX_TIMEOUT_SECS} s)"));
    }
    let d = Duration::from_secs_f64(v);
    if d < MIN_TIMEOUT {
        return Err(format!("{s:?} is under the 1 ms minimum"));
    }
    Ok(d)
}

/// `--wait-for-cards`: `0` (do not wait), or a timeout as [`parse_secs`] takes it.
pub fn parse_wait(s: &str) -> Result<Duration, String> {
    if platform_common::number::decimal(s).is_some_and(|v| v == 0.0) {
        Ok(Duration::ZERO)
    } else {
        parse_secs(s)
    }
}

/// A count or card number: digits only (no sign), as every number of the command line.
pub fn parse_count(s: &str) -> Result<u32, String> {
    platform_common::number::whole_u32(s).ok_or_else(|| format!("{s:?} is not a whole number"))
}

/// `--stress-count`: how many iterations, a count as [`parse_count`] takes it, at least 1.
pub fn parse_iterations(s: &str) -> Result<u32, String> {
    match parse_count(s)? {
        0 => Err(format!("{s:?} is no number of iterations (at least 1)")),
        n => Ok(n),
    }
}
