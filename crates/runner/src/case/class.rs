//! [`ClassSpec`]: a named group of cases of one runtime and kind, with the settings its cases
//! inherit and an optional fixture. This file owns the declaration; it never runs it.

use std::time::Duration;

use super::fixture::ClassFixture;
use super::kind::Kind;
use super::settings::{Expected, RunInfo, Settings};
use super::spec::CaseSpec;
use crate::runtime::Runtime;

/// A class: a named group of cases of one runtime and kind.
#[derive(Debug, Clone)]
pub struct ClassSpec {
    /// The class name (the first half of a case id).
    pub name: String,
    /// The pool key of its cases.
    pub runtime: Runtime,
    /// Pooled or standalone.
    pub kind: Kind,
    /// The cases, in declaration order.
    pub cases: Vec<CaseSpec>,
    /// Settings every case inherits (a case's own win).
    pub settings: Settings,
    /// The class's fixture, if any.
    pub fixture: Option<ClassFixture>,
}

impl ClassSpec {
    fn new(name: impl Into<String>, runtime: Runtime, kind: Kind) -> Self {
        Self {
            name: name.into(),
            runtime,
            kind,
            cases: Vec::new(),
            settings: Settings::default(),
            fixture: None,
        }
    }

    /// A pooled class.
    pub fn pooled(name: impl Into<String>, runtime: Runtime) -> Self {
        Self::new(name, runtime, Kind::Pooled)
    }

    /// A standalone class.
    pub fn standalone(name: impl Into<String>, runtime: Runtime) -> Self {
        Self::new(name, runtime, Kind::Standalone)
    }

    /// Adds a case.
    pub fn case(mut self, case: CaseSpec) -> Self {
        self.cases.push(case);
        self
    }

    /// Adds cases.
    pub fn cases(mut self, cases: impl IntoIterator<Item = CaseSpec>) -> Self {
        self.cases.extend(cases);
        self
    }

    /// The class's fixture ([`super::Fixture`]).
    pub fn fixture(mut self, fixture: impl Into<ClassFixture>) -> Self {
        self.fixture = Some(fixture.into());
        self
    }

    /// A timeout for every case of the class (see [`CaseSpec::timeout`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = Some(timeout);
        self
    }

    /// Retries for every case of the class (see [`CaseSpec::retries`]).
    pub fn retries(mut self, retries: u32) -> Self {
        self.settings.retries = Some(retries);
        self
    }

    /// An expected failure of every case of the class (see [`CaseSpec::expect_failure`]).
    pub fn expect_failure(mut self, reason: impl Into<String>, expected: Expected) -> Self {
        self.settings.set_expect(reason, expected);
        self
    }

    /// Skips every case of the class where `test` holds (see [`CaseSpec::skip_if`]).
    pub fn skip_if(
        mut self,
        reason: impl Into<String>,
        test: impl Fn(&RunInfo) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.settings.add_skip_if(reason, test);
        self
    }

    /// Tags every case of the class.
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.settings.tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// The id of this class's case `case`: `Class::case`.
    pub fn case_id(&self, case: &CaseSpec) -> String {
        format!("{}::{}", self.name, case.name)
    }

    /// Case `case`'s settings over this class's ([`Settings::merged`]).
    pub fn settings_of(&self, case: &CaseSpec) -> Settings {
        Settings::merged(&case.settings, &self.settings)
    }
}
