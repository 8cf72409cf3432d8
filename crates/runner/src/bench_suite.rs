//! The benchmark suite behind `cargo xtask bench dispatch`: 2000 trivial cases (bodies that do no
//! device work) in 20 pooled classes of one runtime, so the figure is the runner's own cost; and,
//! apart, [`COMPUTE_CLASSES`] pooled classes of small `vector_add` compute cases (each touches the
//! device, so the post-case health check runs after it), for the check's cost.
//!
//! This module owns that suite's shape only; it is selected with the suite binary's hidden
//! `--suite bench` flag and never mixed with the built-in suite. The compute classes carry the tag
//! [`COMPUTE_TAG`]: the benchmark selects the trivial classes with `--exclude tag:bench_compute`
//! and the compute ones with `--case tag:bench_compute`.

use crate::case::{CaseSpec, ClassSpec, Runtime, Suite};
use crate::suite::reference::cases::vector_add_case;

/// Classes of trivial cases in the benchmark suite.
pub const CLASSES: usize = 20;
/// Cases per class.
pub const CASES_PER_CLASS: usize = 100;
/// The name every compute class of the benchmark suite starts with.
pub const COMPUTE_PREFIX: &str = "BenchCompute";
/// The tag of the compute classes.
pub const COMPUTE_TAG: &str = "bench_compute";
/// Classes of compute cases.
pub const COMPUTE_CLASSES: usize = 2;
/// Compute cases per class.
pub const COMPUTE_CASES_PER_CLASS: usize = 100;

/// The benchmark suite.
pub fn suite() -> Suite {
    let rt = Runtime::new("bench_trivial");
    let trivial = (0..CLASSES).fold(Suite::new(), |s, c| {
        s.class(
            ClassSpec::pooled(format!("BenchTrivial{c:02}"), rt.clone())
                .cases((0..CASES_PER_CLASS).map(|k| CaseSpec::trivial(format!("case{k:03}")))),
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

    #[test]
    fn two_thousand_trivial_cases_in_twenty_classes_of_one_runtime_and_compute_classes_apart() {
        let s = suite();
        s.validate().unwrap();
        let (compute, trivial): (Vec<_>, Vec<_>) =
            s.classes.iter().partition(|c| c.name.starts_with(COMPUTE_PREFIX));
        assert_eq!(trivial.iter().map(|c| c.cases.len()).sum::<usize>(), 2000);
        assert_eq!(trivial.len(), 20);
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
}
