//! [`CaseSpec`]: one test case and its builder.
//!
//! A case has a name, an [`ArchFilter`], the kernels it launches (registered before its body
//! runs; a case whose kernel has no binary for the run's platform is skipped), a device count, a
//! fixed seed, a [`Body`] and its [`Settings`]. This file owns the declaration; it never runs it.

use std::sync::Arc;
use std::time::Duration;

use platform_common::Arch;

use super::body::{Body, Tolerance, Workload};
use super::ctx::CaseCtx;
use super::failure::CaseFailure;
use super::kind::ArchFilter;
use super::settings::{Expected, RunInfo, Settings};

/// One test case.
#[derive(Debug, Clone)]
pub struct CaseSpec {
    /// The case's name within its class.
    pub name: String,
    /// Arches it runs on.
    pub arch: ArchFilter,
    /// Kernels registered with the worker before the body runs: every kernel it launches.
    pub kernels: Vec<String>,
    /// Cards the case needs (more than the run has: skipped with a reason; more than one: the
    /// body runs on every card at once, each on its own worker).
    pub device_count: u32,
    /// The fixed seed (the case context's [`CaseCtx::seed`] and RNG; a compute generator's).
    pub seed: u64,
    /// What the case does.
    pub body: Body,
    /// Its own settings (over its class's).
    pub settings: Settings,
}

impl CaseSpec {
    fn with_body(name: impl Into<String>, kernels: &[&str], body: Body) -> Self {
        let name = name.into();
        Self {
            seed: stable_hash(&name),
            name,
            arch: ArchFilter::Any,
            kernels: kernels.iter().map(|k| (*k).to_owned()).collect(),
            device_count: 1,
            body,
            settings: Settings::default(),
        }
    }

    /// A host-code case: `body` runs with the case context, which registered `kernels` first.
    /// The seed defaults to a fixed hash of the name ([`CaseSpec::seed`] sets it).
    pub fn host(
        name: impl Into<String>,
        kernels: &[&str],
        body: impl Fn(&mut CaseCtx<'_>) -> Result<(), CaseFailure> + Send + Sync + 'static,
    ) -> Self {
        Self::with_body(name, kernels, Body::Host(Arc::new(body)))
    }

    /// A compute case: `kernels` are registered, `generator` gives the launches with inputs and
    /// goldens (compared with the launches' tolerances unless [`CaseSpec::tolerance`] sets them).
    pub fn compute<W: Into<Workload>>(
        name: impl Into<String>,
        kernels: &[&str],
        generator: impl Fn(Arch, u64) -> W + Send + Sync + 'static,
    ) -> Self {
        let body = Body::Compute {
            generator: Arc::new(move |arch, seed| generator(arch, seed).into()),
            tolerance: None,
        };
        Self::with_body(name, kernels, body)
    }

    /// A case that does no device work.
    pub fn trivial(name: impl Into<String>) -> Self {
        Self::with_body(name, &[], Body::Trivial)
    }

    /// Restricts the case to `arches`.
    pub fn only_on(mut self, arches: &[Arch]) -> Self {
        self.arch = ArchFilter::Only(arches.to_vec());
        self
    }

    /// Sets the tolerances of a compute case's comparison (no effect on other bodies).
    pub fn tolerance(mut self, rtol: f32, atol: f32) -> Self {
        if let Body::Compute { tolerance, .. } = &mut self.body {
            *tolerance = Some(Tolerance { rtol, atol });
        }
        self
    }

    /// Sets the fixed seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the number of cards the case needs.
    pub fn devices(mut self, n: u32) -> Self {
        self.device_count = n;
        self
    }

    /// Its own timeout, overriding `--case-timeout` (and its class's).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = Some(timeout);
        self
    }

    /// Its own retries after a device-class failure, overriding `--retries` (and its class's).
    pub fn retries(mut self, retries: u32) -> Self {
        self.settings.retries = Some(retries);
        self
    }

    /// An expected failure: the case passes when it fails with `expected` and fails when it
    /// passes ("expected failure did not happen") or fails otherwise. Never retried once its
    /// expectation is met; a device fault it expects still heals the card.
    pub fn expect_failure(mut self, reason: impl Into<String>, expected: Expected) -> Self {
        self.settings.set_expect(reason, expected);
        self
    }

    /// Skipped with `reason` in a run where `test` holds (decided before hand-out: the case never
    /// reaches a lane or a poison sink).
    pub fn skip_if(
        mut self,
        reason: impl Into<String>,
        test: impl Fn(&RunInfo) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.settings.add_skip_if(reason, test);
        self
    }

    /// Adds tags (`--case tag:NAME`, `--exclude tag:NAME`).
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.settings.tags.extend(tags.into_iter().map(Into::into));
        self
    }
}
/// FNV-1a: a hash that never changes between builds or platforms (default seeds, partitions).
pub fn stable_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
