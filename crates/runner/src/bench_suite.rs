//! The benchmark suite behind `cargo xtask bench dispatch` and `bench scale`: trivial cases
//! (bodies that do no device work) spread evenly over pooled classes of one runtime, so the
//! figure is the runner's own cost. By default 2000 cases in 20 classes.
//!
//! This module owns that suite's shape only; it is selected with the suite binary's hidden
//! `--suite bench` flag (sized by `--bench-cases` and `--bench-classes`, which the dispatcher
//! passes on to its lanes) and never mixed with the built-in suite.

use crate::case::{CaseSpec, ClassSpec, Runtime, Suite};

/// Classes in the default benchmark suite.
pub const CLASSES: u32 = 20;
/// Cases in the default benchmark suite.
pub const CASES: u32 = 2000;

/// The default benchmark suite (2000 cases in 20 classes).
pub fn suite() -> Suite {
    sized(CASES, CLASSES)
}

/// `cases` trivial cases in `classes` classes (at least one; the first classes get one case
/// more when they do not divide evenly; a class never gets none).
pub fn sized(cases: u32, classes: u32) -> Suite {
    let classes = classes.clamp(1, cases.max(1));
    let rt = Runtime::new("bench_trivial");
    let (each, extra) = (cases / classes, cases % classes);
    let width = (classes.max(2) - 1).ilog10() as usize + 1;
    (0..classes).fold(Suite::new(), |s, c| {
        let n = each + u32::from(c < extra);
        s.class(
            ClassSpec::pooled(format!("BenchTrivial{c:0width$}"), rt.clone())
                .cases((0..n).map(|k| CaseSpec::trivial(format!("case{k:03}")))),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_thousand_trivial_cases_in_twenty_classes_of_one_runtime() {
        let s = suite();
        s.validate().unwrap();
        assert_eq!(s.len(), 2000);
        assert_eq!(s.classes.len(), 20);
        assert_eq!(s.classes[0].name, "BenchTrivial00");
        assert!(s.classes.iter().all(|c| c.runtime.name == "bench_trivial"));
        assert!(s
            .classes
            .iter()
            .flat_map(|c| &c.cases)
            .all(|k| !k.body.needs_device()));
    }

    #[test]
    fn any_size_spreads_its_cases_over_its_classes() {
        let s = sized(1003, 10);
        s.validate().unwrap();
        assert_eq!(s.len(), 1003);
        assert_eq!(s.classes.len(), 10);
        assert_eq!(s.classes[0].cases.len(), 101);
        assert_eq!(s.classes[9].cases.len(), 100);
        assert_eq!(s.classes[9].name, "BenchTrivial9");
        let big = sized(100_000, 1000);
        assert_eq!((big.len(), big.classes.len()), (100_000, 1000));
        assert_eq!(big.classes[999].name, "BenchTrivial999");
        assert_eq!(sized(3, 10).classes.len(), 3, "never an empty class");
    }
}
