//! `cargo xtask bench dispatch|recovery|scale`: the runner's benchmarks, each on the suite binary
//! built in release mode, each run in a sandbox of its own (`bench_sandbox`).
//!
//! - `dispatch`: the runner's own overhead: its benchmark suite (2000 trivial cases in 20 classes
//!   of one runtime, bodies that do no device work, so no post-case health check runs) on 2
//!   simulated cards: `dispatch: <N> cases/s, <M> us/case`, M being the wall time from the first
//!   assignment to the last verdict divided by the number of cases; then its 200 small compute
//!   cases (`vector_add` of 64 elements) with `--health-check each` and with `off`:
//!   `dispatch (health check each, compute cases): ...` and `dispatch (health check off, compute
//!   cases): ...` (the difference of the two M is the check's cost per case).
//! - `recovery`: what a fault costs beyond its floor, and what process isolation costs
//!   (`bench_recovery`).
//! - `makespan`: wall time against its lower bound with `--order suite` and `smart`
//!   (`bench_makespan`).
//! - `scale`: 100,000 trivial cases in 1,000 classes on 8 cards (`bench_scale`).
//!
//! Speed is measured here, never asserted in tests: the tests run each command on a small size
//! and check its lines.

use std::path::Path;
use std::process::ExitCode;

use crate::bench_sandbox::{RunSpec, Sandbox};
use crate::onboard::build_suite;
use crate::{bench_makespan, bench_recovery, bench_scale};

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The benchmark.
    #[command(subcommand)]
    which: Which,
}

/// What to benchmark.
#[derive(Debug, clap::Subcommand)]
enum Which {
    /// The dispatcher and lanes on trivial cases.
    Dispatch,
    /// What each fault costs beyond its floor, and what each isolation mode costs.
    Recovery {
        /// Runs of each configuration (the median is reported).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
        /// Every init's delay on the simulated cards, standing for CANN's device init.
        #[arg(long, value_name = "MS", default_value_t = 300)]
        init_delay_ms: u64,
        /// The sim's op-execute timeout.
        #[arg(long, value_name = "MS", default_value_t = 500,
              value_parser = clap::value_parser!(u64).range(2..))]
        op_timeout_ms: u64,
    },
    /// Wall time against its lower bound, --order suite and smart (issue 23).
    Makespan {
        /// Runs of each configuration (the median is reported).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
        /// Every init's delay on the simulated cards, standing for a chip worker's init.
        #[arg(long, value_name = "MS", default_value_t = 300)]
        init_delay_ms: u64,
        /// The seed of the case durations.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Trivial cases at a large host's size.
    Scale {
        /// Trivial cases.
        #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..))]
        cases: u32,
        /// Classes they are spread over.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
        classes: u32,
        /// Simulated cards.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
        cards: u32,
        /// Runs (the median is reported).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
    },
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    let name = match &args.which {
        Which::Dispatch => "dispatch",
        Which::Recovery { .. } => "recovery",
        Which::Scale { .. } => "scale",
        Which::Makespan { .. } => "makespan",
    };
    let result = build_suite(true).and_then(|exe| {
        let mut out = std::io::stdout().lock();
        let mut log = std::io::stderr().lock();
        match args.which {
            Which::Dispatch => dispatch(&exe, &mut out),
            Which::Recovery {
                runs,
                init_delay_ms,
                op_timeout_ms,
            } => {
                let s = bench_recovery::Settings {
                    runs,
                    init_delay_ms,
                    op_timeout_ms,
                };
                bench_recovery::recovery(&exe, s, &mut out, &mut log).map(|_| ())
            }
            Which::Makespan {
                runs,
                init_delay_ms,
                seed,
            } => {
                let s = bench_makespan::Settings {
                    runs,
                    init_delay_ms,
                    seed,
                };
                bench_makespan::makespan(&exe, s, &mut out, &mut log).map(|_| ())
            }
            Which::Scale {
                cases,
                classes,
                cards,
                runs,
            } => {
                let s = bench_scale::Settings {
                    cases,
                    classes,
                    cards,
                    runs,
                };
                bench_scale::scale(&exe, s, &mut out, &mut log).map(|_| ())
            }
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: bench {name}: {e}");
            ExitCode::from(1)
        }
    }
}

/// The compute classes of the benchmark suite (their tag, `runner::bench_suite::COMPUTE_TAG`).
const COMPUTE: &str = "tag:bench_compute";

/// The dispatch benchmark; prints its lines to `out`: the trivial cases, then the compute cases
/// with the post-case health check `each` and `off`.
pub fn dispatch(exe: &Path, out: &mut dyn std::io::Write) -> Result<(), String> {
    let runs: [(&str, &[&str]); 3] = [
        ("dispatch", &["--exclude", COMPUTE]),
        (
            "dispatch (health check each, compute cases)",
            &["--case", COMPUTE, "--health-check", "each"],
        ),
        (
            "dispatch (health check off, compute cases)",
            &["--case", COMPUTE, "--health-check", "off"],
        ),
    ];
    for (label, extra) in runs {
        let mut sandbox = Sandbox::new("dispatch")?;
        let mut args: Vec<String> = ["--arch", "a5", "--devices", "0,1", "--suite", "bench"]
            .map(str::to_owned)
            .to_vec();
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        let spec = RunSpec {
            args,
            cards: 2,
            timeouts_ms: None,
        };
        let run = sandbox.run(exe, &spec)?;
        let v = &run.stats;
        let cases = v["cases"]
            .as_u64()
            .filter(|c| *c > 0)
            .ok_or("stats name no case")?;
        let window_us = v["window_us"]
            .as_u64()
            .filter(|w| *w > 0)
            .ok_or("stats have no window")?;
        let per_case = window_us as f64 / cases as f64;
        let per_sec = cases as f64 * 1e6 / window_us as f64;
        let _ = writeln!(out, "{label}: {per_sec:.0} cases/s, {per_case:.1} us/case");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(bytes: &[u8]) -> Vec<String> {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Each bench command runs on a small size and prints its lines (speed is never asserted).
    #[test]
    fn every_bench_runs_on_a_small_size_and_prints_its_lines() {
        let exe = build_suite(false).expect("the suite binary builds");
        let mut out = Vec::new();
        dispatch(&exe, &mut out).unwrap();
        let l = lines(&out);
        assert_eq!(l.len(), 3, "{l:?}");
        for (line, start) in l.iter().zip([
            "dispatch: ",
            "dispatch (health check each, compute cases): ",
            "dispatch (health check off, compute cases): ",
        ]) {
            assert!(line.starts_with(start) && line.ends_with(" us/case"), "{line}");
        }

        let mut out = Vec::new();
        let s = bench_scale::Settings {
            cases: 2000,
            classes: 20,
            cards: 2,
            runs: 1,
        };
        bench_scale::scale(&exe, s, &mut out, &mut std::io::sink()).unwrap();
        let l = lines(&out);
        assert_eq!(l.len(), 5, "{l:?}");
        for (line, file) in l.iter().zip(crate::bench_sandbox::REPORT_FILES) {
            assert!(line.starts_with(&format!("scale: {file} ")), "{line}");
            assert!(line.contains(" MiB, written in "), "{line}");
        }
        let last = &l[4];
        assert!(last.starts_with("scale: 2000 cases on 2 cards, "), "{last}");
        for part in [
            "us/case; dispatcher peak RSS ",
            " MiB; lane peak RSS ",
            " MiB; timeline.svg ",
        ] {
            assert!(last.contains(part), "{last}");
        }
        assert!(
            last.contains(" MiB; reports written in ") && last.ends_with(" ms"),
            "{last}"
        );

        let mut out = Vec::new();
        let s = bench_recovery::Settings {
            runs: 1,
            init_delay_ms: 20,
            op_timeout_ms: 100,
        };
        let worst = bench_recovery::recovery(&exe, s, &mut out, &mut std::io::sink()).unwrap();
        assert!(worst.is_finite(), "{worst}");
        let l = lines(&out);
        let want = [
            "fault op_timeout: overhead ",
            "fault launch_fail: overhead ",
            "fault crash: overhead ",
            "fault fresh_process: overhead ",
            "fault sdma: overhead ",
            "isolation pool: ",
            "isolation class: ",
            "isolation case: ",
            "recovery: worst fault ratio ",
        ];
        assert_eq!(l.len(), want.len(), "{l:?}");
        for (line, start) in l.iter().zip(want) {
            assert!(line.starts_with(start), "{line}");
        }
        for line in &l[..5] {
            assert!(
                line.contains(" ms, floor ")
                    && line.contains(" ms, ratio ")
                    && line.contains(" (worst of 1 runs; median "),
                "{line}"
            );
        }
        for line in &l[5..8] {
            assert!(line.ends_with("x of pool"), "{line}");
        }
        assert!(
            l[8].contains(" x floor + 50 ms")
                && l[8].contains("; case isolation ")
                && l[8].ends_with("x slower than pool"),
            "{}",
            l[8]
        );
    }
}
