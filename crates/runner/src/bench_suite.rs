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

/// The makespan benchmark's workloads (`cargo xtask bench makespan`, issue 23): host-code cases
/// that sleep their duration, log-normal around [`MAKESPAN_MEDIAN_MS`] (sigma 1), drawn from
/// `seed`. Workload 1: 240 cases in 24 classes over 3 runtimes (for 4 cards); workload 2: 480
/// cases in 48 classes over 3 runtimes, one case in ten needing two cards (for 8 cards).
pub fn makespan(seed: u64, workload: u32) -> Suite {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (classes, per_class, multi_every) = match workload {
        2 => (48, 10, Some(10)),
        _ => (24, 10, None),
    };
    let runtimes: Vec<Runtime> = (0..3).map(|r| Runtime::new(format!("makespan_rt{r}"))).collect();
    let mut n = 0usize;
    (0..classes).fold(Suite::new(), |s, c| {
        let cases: Vec<CaseSpec> = (0..per_class)
            .map(|k| {
                // Box-Muller: one normal draw.
                let u1: f64 = rng.gen_range(1e-9..1.0);
                let u2: f64 = rng.gen_range(0.0..1.0);
                let z: f64 = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let ms = (MAKESPAN_MEDIAN_MS * z.exp()).round().max(1.0) as u64;
                let sleep = std::time::Duration::from_millis(ms);
                let case = CaseSpec::host(format!("case{k:02}"), &[], move |_| {
                    std::thread::sleep(sleep);
                    Ok(())
                });
                n += 1;
                match multi_every {
                    Some(every) if n % every == 0 => case.devices(2),
                    _ => case,
                }
            })
            .collect();
        s.class(ClassSpec::pooled(format!("Makespan{c:02}"), runtimes[c % 3].clone()).cases(cases))
    })
}

/// The median case duration of [`makespan`]'s workloads (ms).
pub const MAKESPAN_MEDIAN_MS: f64 = 40.0;

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
    fn the_makespan_workloads_are_their_size_and_the_same_for_a_seed() {
        let one = makespan(1, 1);
        one.validate().unwrap();
        assert_eq!(one.classes.len(), 24);
        assert_eq!(one.classes.iter().map(|c| c.cases.len()).sum::<usize>(), 240);
        let two = makespan(1, 2);
        let multi = two
            .classes
            .iter()
            .flat_map(|c| &c.cases)
            .filter(|c| c.device_count == 2)
            .count();
        assert_eq!(multi, 48, "one case in ten needs two cards");
        let names = |s: &Suite| {
            s.classes
                .iter()
                .map(|c| c.runtime.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&one), names(&makespan(1, 1)));
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
