//! The three timeouts of a device run and the rule that orders them.
//!
//! scheduler < op-execute < stream-sync: the AICPU scheduler gives up first, the op-execute
//! timeout reaps a hung AICore kernel next, and a stream sync outlives both so it sees the reaped
//! op's error instead of timing out itself. On real cards the stream sync must also exceed the
//! scheduler timeout by 1500 ms. A bad value or ordering is an error naming the variable and rule;
//! there is no silent fallback.

use std::time::Duration;

/// Environment variable overriding the scheduler timeout, in milliseconds.
pub const ENV_SCHEDULER_MS: &str = "ONBOARD_SCHEDULER_TIMEOUT_MS";
/// Environment variable overriding the op-execute timeout, in microseconds.
pub const ENV_OP_EXECUTE_US: &str = "ONBOARD_OP_EXECUTE_TIMEOUT_US";
/// Environment variable overriding the stream-sync timeout, in milliseconds.
pub const ENV_STREAM_SYNC_MS: &str = "ONBOARD_STREAM_SYNC_TIMEOUT_MS";

/// The margin real cards need between the scheduler and the stream-sync timeout.
pub const REAL_CARD_SYNC_MARGIN: Duration = Duration::from_millis(1500);

/// Whether the timeouts drive simulated or real cards (their defaults and rules differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutProfile {
    /// Simulated cards: short defaults, ordering rule only.
    Sim,
    /// Real cards: CANN-sized defaults, plus the 1500 ms margin rule.
    Real,
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
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .map(Some)
                    .map_err(|_| TimeoutError::NotANumber { var, value: v }),
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
        Self::with_overrides(profile, |v| std::env::var(v).ok())
    }

    /// Checks the ordering rules of `profile`.
    pub fn validate(&self, profile: TimeoutProfile) -> Result<(), TimeoutError> {
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

    /// Stream-sync timeout in whole milliseconds, as the driver takes it.
    pub fn stream_sync_ms(&self) -> u32 {
        u32::try_from(self.stream_sync.as_millis()).unwrap_or(u32::MAX)
    }
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
}
