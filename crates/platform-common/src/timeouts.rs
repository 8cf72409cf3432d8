//! The three timeouts of a device run and the rule that orders them.
//!
//! scheduler < op-execute < stream-sync: the AICPU scheduler gives up first, the op-execute
//! timeout reaps a hung AICore kernel next, and a stream sync outlives both so it sees the reaped
//! op's error instead of timing out itself. On real cards the stream sync must also exceed the
//! scheduler timeout by 1500 ms. Every timeout is at least 1 ms and at most [`MAX_TIMEOUT_MS`]
//! (CANN takes its timeouts as `int32_t` milliseconds), so nothing is ever clamped. A bad value or
//! ordering is an error naming the variable and rule; there is no silent fallback.
//!
//! Which rules apply is the [`TimeoutProfile`]: a device runner picks it from its driver
//! ([`TimeoutProfile::for_driver`]) and refuses to init with timeouts that break it. This module
//! never reads the environment except in [`Timeouts::from_env`], and never calls a driver.

use std::fmt;
use std::time::Duration;

use crate::driver::DriverKind;

/// Environment variable overriding the scheduler timeout, in milliseconds.
pub const ENV_SCHEDULER_MS: &str = "ONBOARD_SCHEDULER_TIMEOUT_MS";
/// Environment variable overriding the op-execute timeout, in microseconds.
pub const ENV_OP_EXECUTE_US: &str = "ONBOARD_OP_EXECUTE_TIMEOUT_US";
/// Environment variable overriding the stream-sync timeout, in milliseconds.
pub const ENV_STREAM_SYNC_MS: &str = "ONBOARD_STREAM_SYNC_TIMEOUT_MS";

/// The margin real cards need between the scheduler and the stream-sync timeout.
pub const REAL_CARD_SYNC_MARGIN: Duration = Duration::from_millis(1500);

/// The largest timeout, in milliseconds: CANN takes stream and device sync timeouts as
/// `int32_t` milliseconds (-1 is "forever", never used), and every timeout here is held to it.
pub const MAX_TIMEOUT_MS: u64 = i32::MAX as u64;

/// Whether the timeouts drive simulated or real cards (their defaults and rules differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutProfile {
    /// Simulated cards: short defaults, ordering rule only.
    Sim,
    /// Real cards: CANN-sized defaults, plus the 1500 ms margin rule.
    Real,
}

impl TimeoutProfile {
    /// The rules a runner on `kind` is held to: the simulator's for [`DriverKind::Sim`], the real
    /// cards' for [`DriverKind::Acl`]. The `acl` driver may be backed by `libsim_acl.so` (the
    /// simulator behind the C ABI); nothing tells the runner so, and it never guesses from a
    /// library's file name, so an `acl` driver always gets the real-card rules.
    pub fn for_driver(kind: DriverKind) -> Self {
        match kind {
            DriverKind::Sim => Self::Sim,
            DriverKind::Acl => Self::Real,
        }
    }

    /// The profile's name in messages: `sim` or `real-card`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sim => "sim",
            Self::Real => "real-card",
        }
    }
}

impl fmt::Display for TimeoutProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The timeouts of one device run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// AICPU scheduler timeout.
    pub scheduler: Duration,
    /// AICore op-execute timeout (a kernel blocked longer is reaped).
    pub op_execute: Duration,
    /// Bound on every stream sync.
    pub stream_sync: Duration,
}

/// A timeout value or ordering that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeoutError {
    /// A variable that is not a whole number.
    #[error("{var}={value:?} is not a whole number")]
    NotANumber {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// A value outside 1 ms ..= [`MAX_TIMEOUT_MS`] (what the driver takes).
    #[error("{var}: {value:?} is out of range ({rule})")]
    OutOfRange {
        /// The variable of the bad value.
        var: &'static str,
        /// The bad value.
        value: Duration,
        /// The range it must be in.
        rule: &'static str,
    },
    /// A variable that is not UTF-8.
    #[error(transparent)]
    Env(#[from] crate::env::EnvError),
    /// The ordering rule is broken.
    #[error("{rule} does not hold ({detail}); set {vars} so that it does")]
    Ordering {
        /// The rule, e.g. `scheduler < op-execute`.
        rule: &'static str,
        /// The values that broke it.
        detail: String,
        /// The variables to change.
        vars: &'static str,
    },
}

impl Timeouts {
    /// The defaults of a profile.
    pub fn defaults(profile: TimeoutProfile) -> Self {
        match profile {
            TimeoutProfile::Sim => Self {
                scheduler: Duration::from_millis(250),
                op_execute: Duration::from_millis(500),
                stream_sync: Duration::from_millis(1500),
            },
            TimeoutProfile::Real => Self {
                scheduler: Duration::from_millis(3000),
                op_execute: Duration::from_millis(4000),
                stream_sync: Duration::from_millis(6000),
            },
        }
    }

    /// The defaults of `profile` with overrides read by `lookup` (the process environment in
    /// [`Timeouts::from_env`]; tests pass their own), validated.
    pub fn with_overrides(
        profile: TimeoutProfile,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, TimeoutError> {
        let mut t = Self::defaults(profile);
        let read = |var: &'static str| -> Result<Option<u64>, TimeoutError> {
            match lookup(var) {
                None => Ok(None),
                Some(v) => crate::number::whole(&v)
                    .map(Some)
                    .ok_or(TimeoutError::NotANumber { var, value: v }),
            }
        };
        if let Some(ms) = read(ENV_SCHEDULER_MS)? {
            t.scheduler = Duration::from_millis(ms);
        }
        if let Some(us) = read(ENV_OP_EXECUTE_US)? {
            t.op_execute = Duration::from_micros(us);
        }
        if let Some(ms) = read(ENV_STREAM_SYNC_MS)? {
            t.stream_sync = Duration::from_millis(ms);
        }
        t.validate(profile)?;
        Ok(t)
    }

    /// [`Timeouts::with_overrides`] from the process environment.
    pub fn from_env(profile: TimeoutProfile) -> Result<Self, TimeoutError> {
        crate::env::check(&[ENV_SCHEDULER_MS, ENV_OP_EXECUTE_US, ENV_STREAM_SYNC_MS])?;
        Self::with_overrides(profile, |v| std::env::var(v).ok())
    }

    /// Checks every value's range (1 ms ..= [`MAX_TIMEOUT_MS`]), then the ordering rules of
    /// `profile`.
    pub fn validate(&self, profile: TimeoutProfile) -> Result<(), TimeoutError> {
        const RANGE: &str = "at least 1 ms and at most 2147483647 ms, the driver's int32 milliseconds";
        let max = Duration::from_millis(MAX_TIMEOUT_MS);
        for (var, value) in [
            (ENV_SCHEDULER_MS, self.scheduler),
            (ENV_OP_EXECUTE_US, self.op_execute),
            (ENV_STREAM_SYNC_MS, self.stream_sync),
        ] {
            if value < Duration::from_millis(1) || value > max {
                return Err(TimeoutError::OutOfRange {
                    var,
                    value,
                    rule: RANGE,
                });
            }
        }
        if self.scheduler >= self.op_execute {
            return Err(TimeoutError::Ordering {
                rule: "scheduler < op-execute",
                detail: format!("{:?} >= {:?}", self.scheduler, self.op_execute),
                vars: "ONBOARD_SCHEDULER_TIMEOUT_MS / ONBOARD_OP_EXECUTE_TIMEOUT_US",
            });
        }
        if self.op_execute >= self.stream_sync {
            return Err(TimeoutError::Ordering {
                rule: "op-execute < stream-sync",
                detail: format!("{:?} >= {:?}", self.op_execute, self.stream_sync),
                vars: "ONBOARD_OP_EXECUTE_TIMEOUT_US / ONBOARD_STREAM_SYNC_TIMEOUT_MS",
            });
        }
        if profile == TimeoutProfile::Real && self.stream_sync <= self.scheduler + REAL_CARD_SYNC_MARGIN {
            return Err(TimeoutError::Ordering {
                rule: "stream-sync > scheduler + 1500 ms",
                detail: format!("{:?} <= {:?} + 1500ms", self.stream_sync, self.scheduler),
                vars: "ONBOARD_STREAM_SYNC_TIMEOUT_MS / ONBOARD_SCHEDULER_TIMEOUT_MS",
            });
        }
        Ok(())
    }

    /// Checks the ordering rules of `profile` on the op-execute timeout as the runtime applies it
    /// (`applied`; the V1 call rounds up to whole seconds), not as requested: an inverted order
    /// on the applied values is the same error as on the requested ones, naming both values.
    pub fn validate_applied(&self, applied: Duration, profile: TimeoutProfile) -> Result<(), TimeoutError> {
        if applied == self.op_execute {
            return self.validate(profile);
        }
        let as_applied = Self {
            op_execute: applied,
            ..*self
        };
        as_applied.validate(profile).map_err(|e| match e {
            TimeoutError::Ordering { rule, detail, vars } => TimeoutError::Ordering {
                rule,
                detail: format!(
                    "{detail}, with op-execute {applied:?} as the runtime applies the requested {:?}",
                    self.op_execute
                ),
                vars,
            },
            other => other,
        })
    }

    /// Stream-sync timeout in whole milliseconds, as the driver takes it. Exact for validated
    /// timeouts (at most [`MAX_TIMEOUT_MS`]); [`Timeouts::validate`] rejects anything larger.
    pub fn stream_sync_ms(&self) -> u32 {
        duration_ms(self.stream_sync)
    }

    /// Op-execute timeout in microseconds, as `aclrtSetOpExecuteTimeOutV2` takes it. Exact for
    /// validated timeouts (at most [`MAX_TIMEOUT_MS`] ms, far below `u64::MAX` us).
    pub fn op_execute_us(&self) -> u64 {
        u64::try_from(self.op_execute.as_micros()).unwrap_or(u64::MAX)
    }

    /// The bound of the drain before each of finalize's `attempts` force-reset attempts (a drain
    /// whose result is ignored): the scheduler timeout, capped at `stream-sync / (attempts + 1)`
    /// and at least 1 ms. So the drains of all attempts together stay below one stream-sync
    /// timeout (for any stream-sync of at least `attempts + 1` ms), where bounding each by the
    /// stream-sync timeout would let three attempts wait three of them on a real card.
    pub fn pre_reset_drain(&self, attempts: u32) -> Duration {
        let share = self.stream_sync / attempts.saturating_add(1);
        self.scheduler.min(share).max(Duration::from_millis(1))
    }
}

/// `d` in whole milliseconds as the driver takes it (saturating: validated values never are).
pub(crate) fn duration_ms(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn sim_defaults_are_ordered() {
        let t = Timeouts::with_overrides(TimeoutProfile::Sim, env(&[])).unwrap();
        assert_eq!(t.scheduler, Duration::from_millis(250));
        assert_eq!(t.op_execute, Duration::from_millis(500));
        assert_eq!(t.stream_sync, Duration::from_millis(1500));
        Timeouts::defaults(TimeoutProfile::Real)
            .validate(TimeoutProfile::Real)
            .unwrap();
    }

    #[test]
    fn overrides_apply_in_their_units() {
        let t = Timeouts::with_overrides(
            TimeoutProfile::Sim,
            env(&[
                (ENV_SCHEDULER_MS, "100"),
                (ENV_OP_EXECUTE_US, "200000"),
                (ENV_STREAM_SYNC_MS, "900"),
            ]),
        )
        .unwrap();
        assert_eq!(t.scheduler, Duration::from_millis(100));
        assert_eq!(t.op_execute, Duration::from_millis(200));
        assert_eq!(t.stream_sync, Duration::from_millis(900));
    }

    #[test]
    fn not_a_number_names_the_variable() {
        let e = Timeouts::with_overrides(TimeoutProfile::Sim, env(&[(ENV_OP_EXECUTE_US, "5s")])).unwrap_err();
        assert!(e.to_string().contains(ENV_OP_EXECUTE_US), "{e}");
    }

    #[test]
    fn broken_ordering_names_the_rule() {
        let e = Timeouts::with_overrides(TimeoutProfile::Sim, env(&[(ENV_SCHEDULER_MS, "600")])).unwrap_err();
        assert!(e.to_string().contains("scheduler < op-execute"), "{e}");
        let e =
            Timeouts::with_overrides(TimeoutProfile::Sim, env(&[(ENV_STREAM_SYNC_MS, "400")])).unwrap_err();
        assert!(e.to_string().contains("op-execute < stream-sync"), "{e}");
        let e = Timeouts::with_overrides(
            TimeoutProfile::Real,
            env(&[
                (ENV_SCHEDULER_MS, "3000"),
                (ENV_OP_EXECUTE_US, "3500000"),
                (ENV_STREAM_SYNC_MS, "4000"),
            ]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("stream-sync > scheduler + 1500 ms"), "{e}");
    }

    #[test]
    fn the_order_is_checked_on_the_applied_op_execute_timeout() {
        let t = Timeouts {
            scheduler: Duration::from_millis(250),
            op_execute: Duration::from_millis(1200),
            stream_sync: Duration::from_millis(1800),
        };
        t.validate(TimeoutProfile::Sim).unwrap();
        t.validate_applied(t.op_execute, TimeoutProfile::Sim).unwrap();
        // Rounded up to 2 s by a seconds-only runtime: no longer below the stream-sync bound.
        let e = t
            .validate_applied(Duration::from_secs(2), TimeoutProfile::Sim)
            .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(
                e,
                TimeoutError::Ordering {
                    rule: "op-execute < stream-sync",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            text.contains("2s") && text.contains("1.2s") && text.contains("1.8s"),
            "{text}"
        );
    }

    #[test]
    fn out_of_range_values_are_rejected_naming_the_variable_not_clamped() {
        let over_ms = (MAX_TIMEOUT_MS + 1).to_string();
        let e = Timeouts::with_overrides(TimeoutProfile::Sim, env(&[(ENV_STREAM_SYNC_MS, &over_ms)]))
            .unwrap_err();
        assert!(
            matches!(
                e,
                TimeoutError::OutOfRange {
                    var: ENV_STREAM_SYNC_MS,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains(ENV_STREAM_SYNC_MS), "{e}");
        let over_us = ((MAX_TIMEOUT_MS + 1) * 1000).to_string();
        let e = Timeouts::with_overrides(
            TimeoutProfile::Real,
            env(&[(ENV_OP_EXECUTE_US, &over_us), (ENV_STREAM_SYNC_MS, &over_ms)]),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                TimeoutError::OutOfRange {
                    var: ENV_OP_EXECUTE_US,
                    ..
                }
            ),
            "the op-execute value is named before any ordering rule: {e:?}"
        );
        let e = Timeouts::with_overrides(TimeoutProfile::Sim, env(&[(ENV_SCHEDULER_MS, "0")])).unwrap_err();
        assert!(
            matches!(
                e,
                TimeoutError::OutOfRange {
                    var: ENV_SCHEDULER_MS,
                    ..
                }
            ),
            "{e:?}"
        );
        // The largest value the driver takes is accepted and passed on exactly.
        let max = Timeouts {
            scheduler: Duration::from_millis(1000),
            op_execute: Duration::from_millis(2000),
            stream_sync: Duration::from_millis(MAX_TIMEOUT_MS),
        };
        max.validate(TimeoutProfile::Real).unwrap();
        assert_eq!(u64::from(max.stream_sync_ms()), MAX_TIMEOUT_MS);
        assert_eq!(max.op_execute_us(), 2_000_000);
    }

    #[test]
    fn the_profile_follows_the_driver() {
        assert_eq!(TimeoutProfile::for_driver(DriverKind::Sim), TimeoutProfile::Sim);
        assert_eq!(TimeoutProfile::for_driver(DriverKind::Acl), TimeoutProfile::Real);
    }

    #[test]
    fn pre_reset_drains_of_every_attempt_stay_below_one_stream_sync() {
        let sim = Timeouts::defaults(TimeoutProfile::Sim);
        assert_eq!(
            sim.pre_reset_drain(3),
            sim.scheduler,
            "the scheduler timeout when it fits"
        );
        let real = Timeouts::defaults(TimeoutProfile::Real);
        assert_eq!(
            real.pre_reset_drain(3),
            Duration::from_millis(1500),
            "capped: 6000 ms / 4"
        );
        for attempts in 1..=5u32 {
            for t in [sim, real] {
                assert!(
                    t.pre_reset_drain(attempts) * attempts < t.stream_sync,
                    "{t:?} x{attempts}"
                );
                assert!(t.pre_reset_drain(attempts) <= t.scheduler);
            }
        }
    }
}
