//! The case API: how a suite declares its classes and cases.
//!
//! This is the API that the built-in suite fills in `crates/runner/src/suite/` (one file per class
//! group, each exposing `pub fn builtin(arch: Arch) -> Suite`, joined by `suite/mod.rs`). The
//! runner reads these declarations and never changes them: the dispatcher selects and orders
//! classes, a lane runs their cases, and the report names them by [`CaseSpec::id`].
//!
//! Shape:
//! - a [`Suite`] is a list of [`ClassSpec`]s;
//! - a class has a name, a [`Runtime`] (the pool key: one chip worker per runtime and card) and a
//!   [`Kind`] (pooled cases share the lane's pooled worker; standalone cases get a worker of their
//!   own, built after the pooled one is closed);
//! - a case has a name, an [`ArchFilter`], the kernels it registers, a device count, a fixed seed
//!   and a [`Body`]: real device work ([`Body::Compute`]: an input generator and golden reference
//!   with tolerances, built from `crate::suite::reference`'s [`KernelCase`] constructors), no device work at all ([`Body::Trivial`], the runner's own cost in the
//!   benchmark), or a launch that must fail with the arch's op-timeout ([`Body::ExpectOpTimeout`]).
//!
//! This module owns the declarations and their validation; it never runs anything.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use crate::suite::reference::KernelCase;
use platform_common::Arch;

/// A runtime: the key of the chip-worker pool. Cases of one runtime share a pooled worker on a card.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Runtime {
    /// The runtime's name, e.g. `tensormap_and_ringbuffer`.
    pub name: String,
    /// Workers of this runtime are created with the SDMA option (one force-reset attempt, as the
    /// a2a3 SDMA workers have).
    pub sdma: bool,
}

impl Runtime {
    /// A runtime without the SDMA option.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sdma: false,
        }
    }

    /// A runtime whose workers are created with the SDMA option.
    pub fn sdma(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sdma: true,
        }
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// How a class's cases get a chip worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The lane's pooled worker of the class's runtime, reused across cases.
    Pooled,
    /// A worker of its own, built after the lane's pooled worker is closed and closed after the
    /// case (one process per card at a time).
    Standalone,
}

impl Kind {
    /// `pooled` or `standalone`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Pooled => "pooled",
            Kind::Standalone => "standalone",
        }
    }
}

/// Which arches a case runs on. A case whose filter excludes the run's arch is not part of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchFilter {
    /// Every arch.
    Any,
    /// Only the listed arches.
    Only(Vec<Arch>),
}

impl ArchFilter {
    /// Whether the filter admits `arch`.
    pub fn admits(&self, arch: Arch) -> bool {
        match self {
            ArchFilter::Any => true,
            ArchFilter::Only(list) => list.contains(&arch),
        }
    }
}

/// Relative and absolute tolerances of a golden comparison (`|got - want| <= atol + rtol * |want|`).
/// A case's tolerance, when set, replaces the ones its generator's [`KernelCase`]s carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f32,
    /// Absolute tolerance.
    pub atol: f32,
}

/// What a generator returns: the launches of one case ([`KernelCase`]s from
/// `crate::suite::reference`: kernel, block dim, host args, expected f32 outputs), run in
/// order on one worker, each checked against its goldens.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workload {
    /// The launches.
    pub launches: Vec<KernelCase>,
}

impl From<KernelCase> for Workload {
    fn from(l: KernelCase) -> Self {
        Self { launches: vec![l] }
    }
}

impl From<Vec<KernelCase>> for Workload {
    fn from(launches: Vec<KernelCase>) -> Self {
        Self { launches }
    }
}

/// An input generator with its golden reference: builds the workload for an arch from a fixed
/// seed. Deterministic: the same (arch, seed) always gives the same workload.
pub type Generator = Arc<dyn Fn(Arch, u64) -> Workload + Send + Sync>;

/// A case that launches a kernel that must hit the AICore op-timeout (the `AicoreOpTimeout`
/// class). It passes when the run fails with the arch's op-timeout code
/// (its arch crate's `FACTS.op_timeout`) before the configured stream-sync timeout plus 5 s, and the
/// worker's `close` (finalize: force reset and probe) returns before three reset attempts' worth
/// of configured timeouts plus 5 s. These are liveness bounds, generous on purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectOpTimeout {
    /// The kernel that hangs in the wait API (normally `hang`).
    pub kernel: String,
    /// Its block dim.
    pub block_dim: u32,
}

/// What a case does.
#[derive(Clone)]
pub enum Body {
    /// Real device work: launches from the generator, outputs compared with its goldens.
    Compute {
        /// Inputs and goldens.
        generator: Generator,
        /// Tolerances replacing the launches' own, when set.
        tolerance: Option<Tolerance>,
    },
    /// No device work: the case passes at once (benchmark of the runner's own cost).
    Trivial,
    /// A launch that must fail with the op-timeout; standalone classes only.
    ExpectOpTimeout(ExpectOpTimeout),
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Body::Compute { tolerance, .. } => f
                .debug_struct("Compute")
                .field("tolerance", tolerance)
                .finish_non_exhaustive(),
            Body::Trivial => f.write_str("Trivial"),
            Body::ExpectOpTimeout(e) => f.debug_tuple("ExpectOpTimeout").field(e).finish(),
        }
    }
}

impl Body {
    /// Whether the body touches a device (and so needs a chip worker).
    pub fn needs_device(&self) -> bool {
        !matches!(self, Body::Trivial)
    }
}

/// One test case.
#[derive(Debug, Clone)]
pub struct CaseSpec {
    /// The case's name within its class.
    pub name: String,
    /// Arches it runs on.
    pub arch: ArchFilter,
    /// Kernels registered with the worker before the case runs.
    pub kernels: Vec<String>,
    /// Cards the case needs (1 for every case the lanes run; more is skipped with a reason when the
    /// run has fewer cards).
    pub device_count: u32,
    /// The fixed seed handed to the generator.
    pub seed: u64,
    /// What the case does.
    pub body: Body,
}

impl CaseSpec {
    /// A compute case: `kernels` are registered, `generator` gives the launches with inputs and
    /// goldens (compared with the launches' tolerances unless [`CaseSpec::tolerance`] sets them).
    /// The seed defaults to a fixed hash of the name ([`CaseSpec::seed`] sets it).
    pub fn compute<W: Into<Workload>>(
        name: impl Into<String>,
        kernels: &[&str],
        generator: impl Fn(Arch, u64) -> W + Send + Sync + 'static,
    ) -> Self {
        let name = name.into();
        Self {
            seed: stable_hash(&name),
            name,
            arch: ArchFilter::Any,
            kernels: kernels.iter().map(|k| (*k).to_owned()).collect(),
            device_count: 1,
            body: Body::Compute {
                generator: Arc::new(move |arch, seed| generator(arch, seed).into()),
                tolerance: None,
            },
        }
    }

    /// A case that does no device work.
    pub fn trivial(name: impl Into<String>) -> Self {
        let name = name.into();
        Self {
            seed: stable_hash(&name),
            name,
            arch: ArchFilter::Any,
            kernels: Vec::new(),
            device_count: 1,
            body: Body::Trivial,
        }
    }

    /// A case that launches `kernel` and expects the arch's op-timeout (standalone classes only).
    pub fn expect_op_timeout(name: impl Into<String>, kernel: &str, block_dim: u32) -> Self {
        let name = name.into();
        Self {
            seed: stable_hash(&name),
            name,
            arch: ArchFilter::Any,
            kernels: vec![kernel.to_owned()],
            device_count: 1,
            body: Body::ExpectOpTimeout(ExpectOpTimeout {
                kernel: kernel.to_owned(),
                block_dim,
            }),
        }
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
}

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
}

impl ClassSpec {
    /// A pooled class.
    pub fn pooled(name: impl Into<String>, runtime: Runtime) -> Self {
        Self {
            name: name.into(),
            runtime,
            kind: Kind::Pooled,
            cases: Vec::new(),
        }
    }

    /// A standalone class.
    pub fn standalone(name: impl Into<String>, runtime: Runtime) -> Self {
        Self {
            name: name.into(),
            runtime,
            kind: Kind::Standalone,
            cases: Vec::new(),
        }
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

    /// The id of this class's case `case`: `Class::case`.
    pub fn case_id(&self, case: &CaseSpec) -> String {
        format!("{}::{}", self.name, case.name)
    }
}

/// A declaration that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteError {
    /// Two classes share a name.
    #[error("class {0:?} is declared twice")]
    DuplicateClass(String),
    /// Two cases of a class share a name.
    #[error("case {0:?} is declared twice")]
    DuplicateCase(String),
    /// A name that cannot be part of a selector.
    #[error("name {0:?} is empty or contains \"::\" or whitespace")]
    BadName(String),
    /// An op-timeout case in a pooled class (it would poison the pooled worker on purpose).
    #[error("case {0:?} expects an op-timeout but its class is pooled; declare the class standalone")]
    OpTimeoutInPooledClass(String),
    /// A device count of zero.
    #[error("case {0:?} needs 0 cards")]
    ZeroDevices(String),
}

/// The cases a suite binary knows: every class of every runtime.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    /// Classes in declaration order.
    pub classes: Vec<ClassSpec>,
}

impl Suite {
    /// An empty suite.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a class.
    pub fn class(mut self, class: ClassSpec) -> Self {
        self.classes.push(class);
        self
    }

    /// Appends another suite's classes (one file per class group joins this way).
    pub fn extend(mut self, other: Suite) -> Self {
        self.classes.extend(other.classes);
        self
    }

    /// The class named `name`.
    pub fn find_class(&self, name: &str) -> Option<&ClassSpec> {
        self.classes.iter().find(|c| c.name == name)
    }

    /// The class and case with id `Class::case`.
    pub fn find_case(&self, id: &str) -> Option<(&ClassSpec, &CaseSpec)> {
        let (class, case) = id.split_once("::")?;
        let class = self.find_class(class)?;
        let case = class.cases.iter().find(|c| c.name == case)?;
        Some((class, case))
    }

    /// Number of cases in the suite.
    pub fn len(&self) -> usize {
        self.classes.iter().map(|c| c.cases.len()).sum()
    }

    /// Whether the suite has no case.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks the declarations: unique names usable in selectors, op-timeout cases only in
    /// standalone classes, at least one card per case.
    pub fn validate(&self) -> Result<(), SuiteError> {
        let mut classes = HashSet::new();
        for class in &self.classes {
            check_name(&class.name)?;
            if !classes.insert(class.name.as_str()) {
                return Err(SuiteError::DuplicateClass(class.name.clone()));
            }
            let mut cases = HashSet::new();
            for case in &class.cases {
                check_name(&case.name)?;
                let id = class.case_id(case);
                if !cases.insert(case.name.as_str()) {
                    return Err(SuiteError::DuplicateCase(id));
                }
                if matches!(case.body, Body::ExpectOpTimeout(_)) && class.kind == Kind::Pooled {
                    return Err(SuiteError::OpTimeoutInPooledClass(id));
                }
                if case.device_count == 0 {
                    return Err(SuiteError::ZeroDevices(id));
                }
            }
        }
        Ok(())
    }
}

fn check_name(name: &str) -> Result<(), SuiteError> {
    if name.is_empty() || name.contains("::") || name.chars().any(char::is_whitespace) {
        return Err(SuiteError::BadName(name.to_owned()));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> Runtime {
        Runtime::new("rt")
    }

    #[test]
    fn ids_and_lookup() {
        let suite = Suite::new().class(ClassSpec::pooled("A", rt()).case(CaseSpec::trivial("x")));
        let (class, case) = suite.find_case("A::x").unwrap();
        assert_eq!(class.case_id(case), "A::x");
        assert!(suite.find_case("A::y").is_none());
        assert!(suite.find_case("A").is_none());
        assert_eq!(suite.len(), 1);
    }

    #[test]
    fn validation_names_the_bad_declaration() {
        let dup = Suite::new()
            .class(ClassSpec::pooled("A", rt()))
            .class(ClassSpec::pooled("A", rt()));
        assert_eq!(dup.validate(), Err(SuiteError::DuplicateClass("A".into())));
        let pooled_timeout = Suite::new()
            .class(ClassSpec::pooled("T", rt()).case(CaseSpec::expect_op_timeout("hang", "hang", 1)));
        assert_eq!(
            pooled_timeout.validate(),
            Err(SuiteError::OpTimeoutInPooledClass("T::hang".into()))
        );
        let bad = Suite::new().class(ClassSpec::pooled("A::B", rt()));
        assert_eq!(bad.validate(), Err(SuiteError::BadName("A::B".into())));
        let zero = Suite::new().class(ClassSpec::pooled("A", rt()).case(CaseSpec::trivial("x").devices(0)));
        assert_eq!(zero.validate(), Err(SuiteError::ZeroDevices("A::x".into())));
    }

    #[test]
    fn default_seeds_are_fixed_and_distinct() {
        assert_eq!(CaseSpec::trivial("x").seed, CaseSpec::trivial("x").seed);
        assert_ne!(CaseSpec::trivial("x").seed, CaseSpec::trivial("y").seed);
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn arch_filter() {
        assert!(ArchFilter::Any.admits(Arch::A5));
        let only = CaseSpec::trivial("x").only_on(&[Arch::A2a3]);
        assert!(!only.arch.admits(Arch::A5));
        assert!(only.arch.admits(Arch::A2a3));
    }
}
