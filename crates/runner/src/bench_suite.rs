//! The benchmark suite behind `cargo xtask bench dispatch` and `bench scale`: trivial cases
//! (bodies that do no device work) spread evenly over pooled classes of one runtime, so the
//! figure is the runner's own cost (by default 2000 cases in 20 classes); and, apart,
//! [`COMPUTE_CLASSES`] pooled classes of small `vector_add` compute cases (each touches the
//! device, so the post-case health check runs after it), for the check's cost.
//!
//! This module owns that suite's shape only; it is selected with the suite binary's hidden
//! `--suite bench` flag (the trivial part sized by `--bench-cases` and `--bench-classes`, which
//! the dispatcher passes on to its lanes) and never mixed with the built-in suite. The compute
//! classes carry the tag [`COMPUTE_TAG`]: the benchmarks select the trivial classes with
//! `--exclude tag:bench_compute` and the compute ones with `--case tag:bench_compute`.

use crate::case::{CaseSpec, ClassSpec, Runtime, Suite};
use cardguard_reference::vector_add_case;

/// Classes of trivial cases in the default benchmark suite.
pub const CLASSES: u32 = 20;
/// Trivial cases in the default benchmark suite.
pub const CASES: u32 = 2000;
/// The name every compute class of the benchmark suite starts with.
pub const COMPUTE_PREFIX: &str = "BenchCompute";
/// The tag of the compute classes.
pub const COMPUTE_TAG: &str = "bench_compute";
/// Classes of compute cases.
pub const COMPUTE_CLASSES: usize = 2;
/// Compute cases per class.
pub const COMPUTE_CASES_PER_CLASS: usize = 100;

/// The default benchmark suite (2000 trivial cases in 20 classes, and the compute classes).
pub fn suite() -> Suite {
    sized(CASES, CLASSES)
}

/// `cases` trivial cases in `classes` classes (at least one; the first classes get one case
/// more when they do not divide evenly; a class never gets none), then the compute classes.
pub fn sized(cases: u32, classes: u32) -> Suite {
    let classes = classes.clamp(1, cases.max(1));
    let rt = Runtime::new("bench_trivial");
    let (each, extra) = (cases / classes, cases % classes);
    let width = (classes.max(2) - 1).ilog10() as usize + 1;
    let trivial = (0..classes).fold(Suite::new(), |s, c| {
        let n = each + u32::from(c < extra);
        s.class(
            ClassSpec::pooled(format!("BenchTrivial{c:0width$}"), rt.clone())
                .cases((0..n).map(|k| CaseSpec::trivial(format!("case{k:03}")))),
        )
    });
    let compute_rt = Runtime::new("bench_compute");
    (0..COMPUTE_CLASSES).fold(trivial, |s, c| {
        s.class(
            ClassSpec::pooled(format!("{COMPUTE_PREFIX}{c:02}"), compute_rt.clone())
                .tags([COMPUTE_TAG])
                .cases((0..COMPUTE_CASES_PER_CLASS).map(|k| {
                    CaseSpec::compute(format!("case{k:03}"), &["vector_add"], |_, seed| {
                        vector_add_case(64, 4, seed)
                    })
                })),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trivial(s: &Suite) -> Vec<&ClassSpec> {
        s.classes
            .iter()
            .filter(|c| !c.name.starts_with(COMPUTE_PREFIX))
            .collect()
    }

    #[test]
    fn two_thousand_trivial_cases_in_twenty_classes_of_one_runtime_and_compute_classes_apart() {
        let s = suite();
        s.validate().unwrap();
        let (compute, trivial): (Vec<_>, Vec<_>) =
            s.classes.iter().partition(|c| c.name.starts_with(COMPUTE_PREFIX));
        assert_eq!(trivial.iter().map(|c| c.cases.len()).sum::<usize>(), 2000);
        assert_eq!(trivial.len(), 20);
        assert_eq!(trivial[0].name, "BenchTrivial00");
        assert!(trivial.iter().all(|c| c.runtime.name == "bench_trivial"));
        assert!(trivial
            .iter()
            .flat_map(|c| &c.cases)
            .all(|k| !k.body.needs_device()));
        assert_eq!(compute.len(), COMPUTE_CLASSES);
        assert!(compute
            .iter()
            .flat_map(|c| &c.cases)
            .all(|k| k.body.needs_device()));
    }

    #[test]
    fn any_size_spreads_its_trivial_cases_over_its_classes() {
        let s = sized(1003, 10);
        s.validate().unwrap();
        let t = trivial(&s);
        assert_eq!(t.iter().map(|c| c.cases.len()).sum::<usize>(), 1003);
        assert_eq!(t.len(), 10);
        assert_eq!(t[0].cases.len(), 101);
        assert_eq!(t[9].cases.len(), 100);
        assert_eq!(t[9].name, "BenchTrivial9");
        let big = sized(100_000, 1000);
        let bt = trivial(&big);
        assert_eq!(
            (bt.iter().map(|c| c.cases.len()).sum::<usize>(), bt.len()),
            (100_000, 1000)
        );
        assert_eq!(bt[999].name, "BenchTrivial999");
        assert_eq!(trivial(&sized(3, 10)).len(), 3, "never an empty class");
    }
}
