//! Which cases a run holds, and in what order classes are handed out.
//!
//! This module owns case selection (`--case`, `--exclude`, `--runtime`, `--partition`, the arch
//! filter) and the
//! run order: pooled classes before standalone ones, classes of one runtime together (runtimes in
//! the order the suite first declares them). Cases excluded here are not part of the run and never
//! appear in a report. It never runs a case and never decides a verdict.

use std::fmt;
use std::str::FromStr;

use platform_common::Arch;

use crate::case::{valid_tag, CaseSpec, ClassSpec, Kind, Suite};
pub use crate::partition::{BadPartition, Partition, PartitionBy};
use crate::suggest::{hint, Wanted};

/// A `--case` or `--exclude` selector: `Class`, `Class::` (every case of the class),
/// `Class::case`, or `tag:NAME` (every case with that tag, its own or its class's).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Selector {
    /// Every case of a class.
    Class(String),
    /// One case.
    Case {
        /// The class.
        class: String,
        /// The case's name.
        case: String,
    },
    /// Every case with this tag.
    Tag(String),
}

/// A selector that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad selector {0:?}: expected Class, Class::, Class::case or tag:NAME")]
pub struct BadSelector(pub String);

impl FromStr for Selector {
    type Err = BadSelector;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadSelector(s.to_owned());
        if let Some(tag) = s.strip_prefix("tag:") {
            return if valid_tag(tag) {
                Ok(Selector::Tag(tag.to_owned()))
            } else {
                Err(bad())
            };
        }
        let ok_name = |n: &str| crate::case::valid_name(n);
        match s.split_once("::") {
            None if ok_name(s) => Ok(Selector::Class(s.to_owned())),
            Some((class, "")) if ok_name(class) => Ok(Selector::Class(class.to_owned())),
            Some((class, case)) if ok_name(class) && ok_name(case) => Ok(Selector::Case {
                class: class.to_owned(),
                case: case.to_owned(),
            }),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Class(c) => write!(f, "{c}::"),
            Selector::Case { class, case } => write!(f, "{class}::{case}"),
            Selector::Tag(t) => write!(f, "tag:{t}"),
        }
    }
}

impl Selector {
    /// Whether the selector takes case `case` of class `class` by their names (a tag selector
    /// needs the case itself: [`Selector::matches_case`]; poison-sink selectors are never tags).
    pub fn matches(&self, class: &str, case: &str) -> bool {
        match self {
            Selector::Class(c) => c == class,
            Selector::Case { class: c, case: k } => c == class && k == case,
            Selector::Tag(_) => false,
        }
    }

    /// Whether the selector takes `case` of `class`: by names, or by a tag of the case or of its
    /// class.
    pub fn matches_case(&self, class: &ClassSpec, case: &CaseSpec) -> bool {
        match self {
            Selector::Tag(t) => class.settings.tags.contains(t) || case.settings.tags.contains(t),
            other => other.matches(&class.name, &case.name),
        }
    }
}

/// What to select.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// `--case` selectors (none: every case).
    pub selectors: Vec<Selector>,
    /// `--exclude` selectors: a case any of them takes is not part of the run.
    pub exclude: Vec<Selector>,
    /// `--runtime`.
    pub runtime: Option<String>,
    /// `--partition`.
    pub partition: Option<Partition>,
}

/// A filter that selects nothing it names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// A `--case` selector that matches no case of the suite.
    #[error("--case {selector} matches no case of the suite ({})", hint(suggestions))]
    NoMatch {
        /// The selector as written back.
        selector: String,
        /// The suite's nearest selectors (`Relu::`, `tag:slow`), best first.
        suggestions: Vec<String>,
    },
    /// An `--exclude` selector that matches no case of the suite.
    #[error("--exclude {selector} matches no case of the suite ({})", hint(suggestions))]
    ExcludeMatchesNothing {
        /// The selector as written back.
        selector: String,
        /// The suite's nearest selectors, best first.
        suggestions: Vec<String>,
    },
    /// A `--runtime` no class uses.
    #[error("--runtime {0:?} is not a runtime of the suite (known: {1})")]
    UnknownRuntime(String, String),
    /// Filters that each match something but together (with the arch filter) select no case.
    #[error("{filters} select no case on {arch} (--list shows what a filter selects)")]
    NothingSelected {
        /// The filters, as written on the command line.
        filters: String,
        /// The arch.
        arch: Arch,
    },
}

/// The suite's nearest selectors to `sel`, best first ([`crate::suggest::nearest`]).
fn nearest(suite: &Suite, sel: &Selector) -> Vec<String> {
    let wanted = match sel {
        Selector::Class(c) => Wanted::Name(c),
        Selector::Case { class, case } => Wanted::Case { class, case },
        Selector::Tag(t) => Wanted::Tag(t),
    };
    crate::suggest::nearest(suite, wanted)
}

/// One class of the run with the indices of its selected cases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedClass {
    /// Index of the class in the suite.
    pub class: usize,
    /// Indices of its selected cases, in declaration order.
    pub cases: Vec<usize>,
}

/// The run's cases, classes in hand-out order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Classes in the order the dispatcher hands them out.
    pub classes: Vec<SelectedClass>,
}

impl Selection {
    /// Number of selected cases.
    pub fn len(&self) -> usize {
        self.classes.iter().map(|c| c.cases.len()).sum()
    }

    /// Whether nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ids of the selected cases, in order.
    pub fn ids(&self, suite: &Suite) -> Vec<String> {
        let mut ids = Vec::with_capacity(self.len());
        for sc in &self.classes {
            let class = &suite.classes[sc.class];
            ids.extend(sc.cases.iter().map(|&i| class.case_id(&class.cases[i])));
        }
        ids
    }
}

/// Whether any selected case runs on a runtime created with SDMA: then a preflight runs the SDMA
/// probe too (a compute-only probe passes a wedged SDMA engine, hw-native-sys/pypto-lib #1240).
pub fn uses_sdma(suite: &Suite, selection: &Selection) -> bool {
    selection
        .classes
        .iter()
        .any(|sc| !sc.cases.is_empty() && suite.classes[sc.class].runtime.sdma)
}

/// Selects the cases of `suite` that run on `arch` under `filter`, in hand-out order.
///
/// A selector naming a case that exists but is excluded by the arch or the partition is not an
/// error (the case is simply not part of this run); one that names nothing in the suite is, and
/// so are filters that together select no case at all (an empty share of `--partition` is no
/// error: another share has the cases).
pub fn select(suite: &Suite, arch: Arch, filter: &Filter) -> Result<Selection, SelectError> {
    let hits = |sel: &Selector| {
        suite
            .classes
            .iter()
            .any(|c| c.cases.iter().any(|k| sel.matches_case(c, k)))
    };
    for sel in &filter.selectors {
        if !hits(sel) {
            return Err(SelectError::NoMatch {
                selector: sel.to_string(),
                suggestions: nearest(suite, sel),
            });
        }
    }
    for sel in &filter.exclude {
        if !hits(sel) {
            return Err(SelectError::ExcludeMatchesNothing {
                selector: sel.to_string(),
                suggestions: nearest(suite, sel),
            });
        }
    }
    if let Some(rt) = &filter.runtime {
        if !suite.classes.iter().any(|c| &c.runtime.name == rt) {
            return Err(SelectError::UnknownRuntime(
                rt.clone(),
                runtime_names(suite).join(", "),
            ));
        }
    }
    let mut picked: Vec<SelectedClass> = Vec::new();
    for (ci, class) in suite.classes.iter().enumerate() {
        if filter
            .runtime
            .as_ref()
            .is_some_and(|rt| rt != &class.runtime.name)
        {
            continue;
        }
        if filter.partition.is_some_and(|p| !p.takes(&class.name)) {
            continue;
        }
        let cases: Vec<usize> = class
            .cases
            .iter()
            .enumerate()
            .filter(|(_, k)| k.arch.admits(arch))
            .filter(|(_, k)| {
                filter.selectors.is_empty() || filter.selectors.iter().any(|s| s.matches_case(class, k))
            })
            .filter(|(_, k)| !filter.exclude.iter().any(|s| s.matches_case(class, k)))
            .map(|(i, _)| i)
            .collect();
        if !cases.is_empty() {
            picked.push(SelectedClass { class: ci, cases });
        }
    }
    if picked.is_empty() && filter.partition.is_none() {
        return Err(SelectError::NothingSelected {
            filters: describe(filter),
            arch,
        });
    }
    Ok(Selection {
        classes: order(suite, picked),
    })
}

/// The filters as the command line wrote them (`--case A --runtime r`; "the suite" for none).
fn describe(filter: &Filter) -> String {
    let mut parts: Vec<String> = filter.selectors.iter().map(|s| format!("--case {s}")).collect();
    parts.extend(filter.exclude.iter().map(|s| format!("--exclude {s}")));
    if let Some(rt) = &filter.runtime {
        parts.push(format!("--runtime {rt}"));
    }
    if parts.is_empty() {
        "the suite's cases".to_owned()
    } else {
        parts.join(" ")
    }
}

/// Pooled before standalone; within each, runtimes in first-declaration order, classes of one
/// runtime together in declaration order.
fn order(suite: &Suite, picked: Vec<SelectedClass>) -> Vec<SelectedClass> {
    let runtimes = runtime_names(suite);
    let rank = |c: &ClassSpec| {
        let kind = u8::from(c.kind == Kind::Standalone);
        let rt = runtimes
            .iter()
            .position(|r| *r == c.runtime.name)
            .unwrap_or(usize::MAX);
        (kind, rt)
    };
    let mut picked = picked;
    // A stable sort keeps declaration order within a (kind, runtime) group.
    picked.sort_by_key(|sc| rank(&suite.classes[sc.class]));
    picked
}

fn runtime_names(suite: &Suite) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in &suite.classes {
        if !names.contains(&c.runtime.name) {
            names.push(c.runtime.name.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{CaseSpec, ClassSpec, Runtime};

    fn suite() -> Suite {
        let a = Runtime::new("a");
        let b = Runtime::new("b");
        Suite::new()
            .class(ClassSpec::standalone("S", a.clone()).case(CaseSpec::trivial("s")))
            .class(ClassSpec::pooled("B1", b.clone()).case(CaseSpec::trivial("x")))
            .class(
                ClassSpec::pooled("A1", a.clone())
                    .case(CaseSpec::trivial("x"))
                    .case(CaseSpec::trivial("only_a2a3").only_on(&[Arch::A2a3])),
            )
            .class(ClassSpec::pooled("A2", a).case(CaseSpec::trivial("y")))
            .class(ClassSpec::pooled("B2", b).case(CaseSpec::trivial("z")))
    }

    fn names(s: &Suite, sel: &Selection) -> Vec<String> {
        sel.classes
            .iter()
            .map(|c| s.classes[c.class].name.clone())
            .collect()
    }

    #[test]
    fn selectors_parse_and_print() {
        assert_eq!("A".parse::<Selector>().unwrap(), Selector::Class("A".into()));
        assert_eq!("A::".parse::<Selector>().unwrap(), Selector::Class("A".into()));
        assert_eq!(
            "A::x".parse::<Selector>().unwrap().to_string(),
            "A::x",
            "a case selector prints as written"
        );
        assert_eq!(
            "tag:sdma".parse::<Selector>().unwrap(),
            Selector::Tag("sdma".into())
        );
        assert_eq!(
            "tag:slow-2".parse::<Selector>().unwrap().to_string(),
            "tag:slow-2"
        );
        for bad in [
            "", "::x", "A::x::y", "A B", "::", "tag:", "tag:a b", "tag:a:b", "A:B",
        ] {
            let e = bad.parse::<Selector>().unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn order_is_pooled_first_grouped_by_runtime() {
        let s = suite();
        let sel = select(&s, Arch::A5, &Filter::default()).unwrap();
        // Runtime "a" is declared first (by S), so its pooled classes come first.
        assert_eq!(names(&s, &sel), ["A1", "A2", "B1", "B2", "S"]);
        let s2 = Suite::new()
            .class(ClassSpec::pooled("P", Runtime::new("b")).case(CaseSpec::trivial("x")))
            .extend(suite());
        let sel = select(&s2, Arch::A5, &Filter::default()).unwrap();
        assert_eq!(names(&s2, &sel), ["P", "B1", "B2", "A1", "A2", "S"]);
    }

    #[test]
    fn arch_filter_excludes_without_error() {
        let s = suite();
        let sel = select(&s, Arch::A5, &Filter::default()).unwrap();
        assert!(!sel.ids(&s).contains(&"A1::only_a2a3".to_owned()));
        let sel = select(&s, Arch::A2a3, &Filter::default()).unwrap();
        assert!(sel.ids(&s).contains(&"A1::only_a2a3".to_owned()));
        // The excluded case alone selects nothing on a5: a one-line error naming the filter.
        let f = Filter {
            selectors: vec!["A1::only_a2a3".parse().unwrap()],
            ..Filter::default()
        };
        let e = select(&s, Arch::A5, &f).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--case A1::only_a2a3 select no case on a5 (--list shows what a filter selects)"
        );
        // Beside a selector that does select, it is simply not part of the run.
        let f = Filter {
            selectors: vec!["A1::only_a2a3".parse().unwrap(), "A2".parse().unwrap()],
            ..Filter::default()
        };
        assert_eq!(select(&s, Arch::A5, &f).unwrap().ids(&s), ["A2::y"]);
    }

    #[test]
    fn filters_that_together_select_nothing_are_an_error_outside_a_partition() {
        let s = suite();
        // Each matches something; together (class of runtime a, runtime b) nothing.
        let f = Filter {
            selectors: vec!["A1".parse().unwrap()],
            runtime: Some("b".into()),
            ..Filter::default()
        };
        let e = select(&s, Arch::A5, &f).unwrap_err();
        assert!(matches!(e, SelectError::NothingSelected { .. }), "{e}");
        assert!(e.to_string().contains("--case A1:: --runtime b"), "{e}");
        // An empty share of a partition is no error.
        let empty_share = (1..=8)
            .map(|k| Filter {
                selectors: vec!["B2".parse().unwrap()],
                partition: Some(Partition::hash(k, 8)),
                ..Filter::default()
            })
            .find(|f| select(&s, Arch::A5, f).is_ok_and(|sel| sel.is_empty()));
        assert!(empty_share.is_some(), "one class cannot fill 8 shares");
    }

    #[test]
    fn selectors_and_runtime() {
        let s = suite();
        let f = Filter {
            selectors: vec!["A1::x".parse().unwrap(), "B2".parse().unwrap()],
            ..Filter::default()
        };
        assert_eq!(select(&s, Arch::A5, &f).unwrap().ids(&s), ["A1::x", "B2::z"]);
        let f = Filter {
            runtime: Some("b".into()),
            ..Filter::default()
        };
        assert_eq!(select(&s, Arch::A5, &f).unwrap().ids(&s), ["B1::x", "B2::z"]);
        let f = Filter {
            selectors: vec!["Nope::".parse().unwrap()],
            ..Filter::default()
        };
        let e = select(&s, Arch::A5, &f).unwrap_err();
        assert!(e.to_string().contains("--case Nope::"), "{e}");
        let f = Filter {
            runtime: Some("zz".into()),
            ..Filter::default()
        };
        assert!(select(&s, Arch::A5, &f)
            .unwrap_err()
            .to_string()
            .contains("\"zz\""));
    }

    use crate::suggest::tests::suite as tagged;

    #[test]
    fn a_selector_that_matches_nothing_suggests_the_nearest_names() {
        let f = Filter {
            selectors: vec!["math".parse().unwrap()],
            ..Filter::default()
        };
        assert_eq!(
            select(&tagged(), Arch::A5, &f).unwrap_err().to_string(),
            "--case math:: matches no case of the suite (did you mean Math::? --list shows them)"
        );
    }

    #[test]
    fn tag_selectors_take_case_and_class_tags() {
        let s = tagged();
        let sel = |case: &[&str], exclude: &[&str]| {
            let f = Filter {
                selectors: case.iter().map(|c| c.parse().unwrap()).collect(),
                exclude: exclude.iter().map(|c| c.parse().unwrap()).collect(),
                ..Filter::default()
            };
            select(&s, Arch::A5, &f).map(|x| x.ids(&s))
        };
        assert_eq!(
            sel(&["tag:sdma"], &[]).unwrap(),
            ["Dma::copy", "Dma::big"],
            "the class's tag"
        );
        assert_eq!(
            sel(&["tag:slow"], &[]).unwrap(),
            ["Dma::big", "Math::huge"],
            "the cases' own tag"
        );
        assert_eq!(
            sel(&["tag:slow", "Math::add"], &[]).unwrap(),
            ["Dma::big", "Math::add", "Math::huge"]
        );
        // upstream's `-m "not sdma"`
        assert_eq!(sel(&[], &["tag:sdma"]).unwrap(), ["Math::add", "Math::huge"]);
        assert_eq!(sel(&[], &["tag:slow", "Dma::copy"]).unwrap(), ["Math::add"]);
        assert_eq!(sel(&["Dma"], &["Dma::big"]).unwrap(), ["Dma::copy"]);
        assert_eq!(sel(&[], &["Math"]).unwrap(), ["Dma::copy", "Dma::big"]);
    }

    #[test]
    fn tag_and_exclude_errors_are_one_line_naming_the_selector() {
        let s = tagged();
        let f = |case: &[&str], exclude: &[&str]| Filter {
            selectors: case.iter().map(|c| c.parse().unwrap()).collect(),
            exclude: exclude.iter().map(|c| c.parse().unwrap()).collect(),
            ..Filter::default()
        };
        let e = select(&s, Arch::A5, &f(&["tag:gpu"], &[])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--case tag:gpu matches no case of the suite (--list shows them)"
        );
        let e = select(&s, Arch::A5, &f(&[], &["tag:gpu"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--exclude tag:gpu matches no case of the suite (--list shows them)"
        );
        let e = select(&s, Arch::A5, &f(&[], &["Nope::x"])).unwrap_err();
        assert!(
            e.to_string().starts_with("--exclude Nope::x matches no case"),
            "{e}"
        );
        // Each matches, together nothing is left.
        let e = select(&s, Arch::A5, &f(&["tag:sdma"], &["Dma"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--case tag:sdma --exclude Dma:: select no case on a5 (--list shows what a filter selects)"
        );
        assert!(!e.to_string().contains('\n'));
    }

    #[test]
    fn partitions_split_classes_exactly() {
        let s = suite();
        let all = select(&s, Arch::A5, &Filter::default()).unwrap().ids(&s);
        let mut joined = Vec::new();
        for k in 1..=3 {
            let f = Filter {
                partition: Some(format!("hash:{k}/3").parse().unwrap()),
                ..Filter::default()
            };
            joined.extend(select(&s, Arch::A5, &f).unwrap().ids(&s));
        }
        joined.sort();
        let mut all = all;
        all.sort();
        assert_eq!(joined, all);
    }
}
