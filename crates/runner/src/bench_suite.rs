//! The benchmark suite behind `cargo xtask bench dispatch`: 2000 trivial cases (bodies that do no
//! device work) in 20 pooled classes of one runtime, so the figure is the runner's own cost.
//!
//! This module owns that suite's shape only; it is selected with the suite binary's hidden
//! `--suite bench` flag and never mixed with the built-in suite.

use crate::case::{CaseSpec, ClassSpec, Runtime, Suite};

/// Classes in the benchmark suite.
pub const CLASSES: usize = 20;
/// Cases per class.
pub const CASES_PER_CLASS: usize = 100;

/// The benchmark suite.
pub fn suite() -> Suite {
    let rt = Runtime::new("bench_trivial");
    (0..CLASSES).fold(Suite::new(), |s, c| {
        s.class(
            ClassSpec::pooled(format!("BenchTrivial{c:02}"), rt.clone())
                .cases((0..CASES_PER_CLASS).map(|k| CaseSpec::trivial(format!("case{k:03}")))),
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
        assert!(s.classes.iter().all(|c| c.runtime.name == "bench_trivial"));
        assert!(s
            .classes
            .iter()
            .flat_map(|c| &c.cases)
            .all(|k| !k.body.needs_device()));
    }
}
