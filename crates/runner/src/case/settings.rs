//! Per-case and per-class settings: a timeout and retries that override `--case-timeout` and
//! `--retries`, an expected failure, skip conditions, and tags.
//!
//! A class's settings are its cases' defaults: a case's own timeout, retries and expectation win,
//! its tags and skip conditions add to the class's ([`Settings::merged`]). Who reads what: the
//! dispatcher the timeout, the retries and the skip conditions (decided before hand-out, so a
//! skip never reaches a lane or a poison sink), the selector the tags, the lane the expectation.
//! This file owns the declarations; it never applies them.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use platform_common::{Arch, Code, DeviceId, FailureClass};

use crate::report::model::Platform;

/// What a skip condition sees of the run: decided by the dispatcher before any case is handed
/// out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// The arch.
    pub arch: Arch,
    /// Simulated or real cards.
    pub platform: Platform,
    /// The run's cards, in order.
    pub devices: Vec<DeviceId>,
}

impl RunInfo {
    /// How many cards the run holds.
    pub fn cards(&self) -> usize {
        self.devices.len()
    }
}

/// The failure an expected-failure case must end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// A failure of this class (e.g. any device fault: [`FailureClass::DeviceRuntime`]).
    Class(FailureClass),
    /// A failure with this code (a driver error's, or for a refusal the first cause's).
    Code(Code),
    /// The run's arch's AICore op-timeout code (a5 507000, a2a3 507018: its arch crate's
    /// `FACTS.op_timeout`), as a hung kernel reports it.
    OpTimeout,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Class(c) => write!(f, "a {c} failure"),
            Expected::Code(c) => write!(f, "code {c}"),
            Expected::OpTimeout => f.write_str("the arch's op-timeout"),
        }
    }
}

/// An expected failure: the case passes when it fails as expected, and fails when it passes or
/// fails otherwise. A device fault it expects still heals the card as any device fault does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation {
    /// Why the failure is expected, for people.
    pub reason: String,
    /// What the failure must be.
    pub expected: Expected,
}

/// A skip condition's test.
pub type SkipTest = Arc<dyn Fn(&RunInfo) -> bool + Send + Sync>;

/// A legitimate skip: when `test` holds for the run, the case is `skipped` with `reason`.
#[derive(Clone)]
pub struct SkipIf {
    /// The skip reason the report gives.
    pub reason: String,
    /// Whether the case is skipped in a run.
    pub test: SkipTest,
}

impl fmt::Debug for SkipIf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkipIf")
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

/// The settings of a case or a class; all unset by default.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Overrides `--case-timeout`.
    pub timeout: Option<Duration>,
    /// Overrides `--retries`.
    pub retries: Option<u32>,
    /// The failure it must end with.
    pub expect: Option<Expectation>,
    /// When it is skipped.
    pub skip_if: Vec<SkipIf>,
    /// Its tags, for `--case tag:NAME` and `--exclude tag:NAME`.
    pub tags: Vec<String>,
}

impl Settings {
    /// Sets the expected failure (`expect_failure` of a case or a class).
    pub(crate) fn set_expect(&mut self, reason: impl Into<String>, expected: Expected) {
        self.expect = Some(Expectation {
            reason: reason.into(),
            expected,
        });
    }

    /// Adds a skip condition (`skip_if` of a case or a class).
    pub(crate) fn add_skip_if(
        &mut self,
        reason: impl Into<String>,
        test: impl Fn(&RunInfo) -> bool + Send + Sync + 'static,
    ) {
        self.skip_if.push(SkipIf {
            reason: reason.into(),
            test: Arc::new(test),
        });
    }

    /// A case's settings over its class's: the case's own timeout, retries and expectation win;
    /// skip conditions and tags are both (the class's first, no tag twice).
    pub fn merged(case: &Settings, class: &Settings) -> Settings {
        let mut tags = class.tags.clone();
        for t in &case.tags {
            if !tags.contains(t) {
                tags.push(t.clone());
            }
        }
        Settings {
            timeout: case.timeout.or(class.timeout),
            retries: case.retries.or(class.retries),
            expect: case.expect.clone().or_else(|| class.expect.clone()),
            skip_if: class.skip_if.iter().chain(&case.skip_if).cloned().collect(),
            tags,
        }
    }

    /// The first skip condition that holds for `run`: its reason.
    pub fn skip_reason(&self, run: &RunInfo) -> Option<&str> {
        self.skip_if
            .iter()
            .find(|s| (s.test)(run))
            .map(|s| s.reason.as_str())
    }
}

/// Whether `tag` can be a tag: ASCII letters, digits, `_` and `-`, not empty.
pub fn valid_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(reason: &str, test: fn(&RunInfo) -> bool) -> SkipIf {
        SkipIf {
            reason: reason.into(),
            test: Arc::new(test),
        }
    }

    #[test]
    fn a_case_overrides_its_class_and_adds_to_it() {
        let class = Settings {
            timeout: Some(Duration::from_secs(5)),
            retries: Some(1),
            tags: vec!["slow".into(), "sdma".into()],
            skip_if: vec![skip("class", |_| false)],
            ..Settings::default()
        };
        let case = Settings {
            retries: Some(0),
            tags: vec!["sdma".into(), "x".into()],
            skip_if: vec![skip("case", |r| r.cards() < 2)],
            ..Settings::default()
        };
        let m = Settings::merged(&case, &class);
        assert_eq!(m.timeout, Some(Duration::from_secs(5)), "inherited");
        assert_eq!(m.retries, Some(0), "the case's own wins");
        assert_eq!(m.tags, ["slow", "sdma", "x"]);
        let one = RunInfo {
            arch: Arch::A5,
            platform: Platform::Sim,
            devices: vec![0],
        };
        assert_eq!(m.skip_reason(&one), Some("case"));
        let two = RunInfo {
            devices: vec![0, 1],
            ..one
        };
        assert_eq!(m.skip_reason(&two), None);
    }

    #[test]
    fn tags_are_plain_words() {
        assert!(valid_tag("sdma") && valid_tag("slow-2") && valid_tag("a_b"));
        assert!(!valid_tag("") && !valid_tag("a b") && !valid_tag("a:b") && !valid_tag("é"));
    }
}
