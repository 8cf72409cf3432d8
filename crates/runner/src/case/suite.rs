//! [`Suite`]: every class a suite binary knows, where its own kernels are, and the checks a
//! declaration must pass before anything runs.
//!
//! This file owns the suite's shape and its validation ([`SuiteError`], each naming the bad
//! declaration). It never runs anything.

use rustc_hash::FxHashSet;
use std::path::PathBuf;
use std::time::Duration;

use super::class::ClassSpec;
use super::settings::{valid_tag, Settings};
use super::spec::CaseSpec;

/// The shortest timeout a case or class may set (as `--case-timeout`).
pub const MIN_CASE_TIMEOUT: Duration = Duration::from_millis(1);

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
    #[error("name {0:?} is empty or contains ':' or whitespace")]
    BadName(String),
    /// A device count of zero.
    #[error("case {0:?} needs 0 cards")]
    ZeroDevices(String),
    /// A tag that is not a plain word.
    #[error("{0:?} has tag {1:?}: a tag is ASCII letters, digits, '_' and '-'")]
    BadTag(String, String),
    /// A kernel name that cannot name a binary.
    #[error("case {0:?} names kernel {1:?}: a kernel name is lowercase ASCII letters, digits and '_'")]
    BadKernelName(String, String),
    /// A timeout under the minimum.
    #[error("{0:?} has a timeout under 1 ms")]
    ShortTimeout(String),
}

/// The cases a suite binary knows: every class of every runtime, and its own kernel dirs.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    /// Classes in declaration order.
    pub classes: Vec<ClassSpec>,
    /// Kernel roots of the suite's own kernels (`<dir>/<arch>/<name>.so`, device binaries
    /// beside them), searched after `ONBOARD_KERNEL_DIR` and before the built-in kernels.
    pub kernel_dirs: Vec<PathBuf>,
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

    /// Adds a root of the suite's own kernels (e.g. where its `build.rs` built them).
    pub fn kernel_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.kernel_dirs.push(dir.into());
        self
    }

    /// Appends another suite's classes and kernel dirs (one file per class group joins this way).
    pub fn extend(mut self, other: Suite) -> Self {
        self.classes.extend(other.classes);
        for d in other.kernel_dirs {
            if !self.kernel_dirs.contains(&d) {
                self.kernel_dirs.push(d);
            }
        }
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

    /// Checks the declarations: unique names usable in selectors, at least one card per case,
    /// plain tags, kernel names that can name a file, timeouts of at least 1 ms.
    pub fn validate(&self) -> Result<(), SuiteError> {
        let mut classes = FxHashSet::default();
        for class in &self.classes {
            check_name(&class.name)?;
            if !classes.insert(class.name.as_str()) {
                return Err(SuiteError::DuplicateClass(class.name.clone()));
            }
            check_settings(|| class.name.clone(), &class.settings)?;
            let mut cases = FxHashSet::default();
            for case in &class.cases {
                check_name(&case.name)?;
                // Named only in an error: a valid suite of 100,000 cases formats none of them.
                let id = || class.case_id(case);
                if !cases.insert(case.name.as_str()) {
                    return Err(SuiteError::DuplicateCase(id()));
                }
                if case.device_count == 0 {
                    return Err(SuiteError::ZeroDevices(id()));
                }
                check_settings(id, &case.settings)?;
                if let Some(k) = case.kernels.iter().find(|k| !valid_kernel_name(k)) {
                    return Err(SuiteError::BadKernelName(id(), k.clone()));
                }
            }
        }
        Ok(())
    }
}

/// Checks the settings of the class or case `what` names (called only for an error).
fn check_settings(what: impl Fn() -> String, s: &Settings) -> Result<(), SuiteError> {
    if let Some(t) = s.tags.iter().find(|t| !valid_tag(t)) {
        return Err(SuiteError::BadTag(what(), t.clone()));
    }
    if s.timeout.is_some_and(|t| t < MIN_CASE_TIMEOUT) {
        return Err(SuiteError::ShortTimeout(what()));
    }
    Ok(())
}

/// Whether `name` can name a class or a case: not empty, no `:` (selectors use `::` and
/// `tag:`), no whitespace.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(':') && !name.chars().any(char::is_whitespace)
}

fn check_name(name: &str) -> Result<(), SuiteError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(SuiteError::BadName(name.to_owned()))
    }
}

/// Whether `name` can name a kernel binary: `[a-z0-9_]+`, as kernel sources are named.
pub fn valid_kernel_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Runtime;

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
        let bad = Suite::new().class(ClassSpec::pooled("A::B", rt()));
        assert_eq!(bad.validate(), Err(SuiteError::BadName("A::B".into())));
        let tag_like = Suite::new().class(ClassSpec::pooled("tag:x", rt()));
        assert_eq!(tag_like.validate(), Err(SuiteError::BadName("tag:x".into())));
        let zero = Suite::new().class(ClassSpec::pooled("A", rt()).case(CaseSpec::trivial("x").devices(0)));
        assert_eq!(zero.validate(), Err(SuiteError::ZeroDevices("A::x".into())));
        let tag =
            Suite::new().class(ClassSpec::pooled("A", rt()).case(CaseSpec::trivial("x").tags(["no tag"])));
        assert_eq!(
            tag.validate(),
            Err(SuiteError::BadTag("A::x".into(), "no tag".into()))
        );
        let class_tag = Suite::new().class(ClassSpec::pooled("A", rt()).tags([""]));
        assert_eq!(
            class_tag.validate(),
            Err(SuiteError::BadTag("A".into(), String::new()))
        );
        let kernel = Suite::new().class(ClassSpec::pooled("A", rt()).case(CaseSpec::compute(
            "x",
            &["../evil"],
            |_, _| Vec::new(),
        )));
        assert_eq!(
            kernel.validate(),
            Err(SuiteError::BadKernelName("A::x".into(), "../evil".into()))
        );
        let short = Suite::new().class(
            ClassSpec::pooled("A", rt()).case(CaseSpec::trivial("x").timeout(Duration::from_micros(10))),
        );
        assert_eq!(short.validate(), Err(SuiteError::ShortTimeout("A::x".into())));
    }

    #[test]
    fn default_seeds_are_fixed_and_distinct() {
        assert_eq!(CaseSpec::trivial("x").seed, CaseSpec::trivial("x").seed);
        assert_ne!(CaseSpec::trivial("x").seed, CaseSpec::trivial("y").seed);
        assert_eq!(super::super::spec::stable_hash(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn extending_keeps_classes_and_kernel_dirs_once() {
        let a = Suite::new().kernel_dir("/k").class(ClassSpec::pooled("A", rt()));
        let b = Suite::new()
            .kernel_dir("/k")
            .kernel_dir("/j")
            .class(ClassSpec::pooled("B", rt()));
        let s = a.extend(b);
        assert_eq!(s.classes.len(), 2);
        assert_eq!(s.kernel_dirs, [PathBuf::from("/k"), PathBuf::from("/j")]);
    }
}
