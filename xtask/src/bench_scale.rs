//! `cargo xtask bench scale`: a large suite on a full host. `--cases` trivial cases (default
//! 100,000) in `--classes` classes (1,000) on `--cards` simulated cards (8), `--runs` times (the
//! median run by wall time is reported): the whole process's wall time and its cost per case, the
//! dispatcher's peak RSS (its own `VmHWM`, read after its reports are written) and the largest
//! lane's (read as the dispatcher closes it), each report file's size and the time it took to
//! write (the journal's lines added up over the run), as the suite's `--stats-out` records them.
//!
//! This file owns those figures; the runs are `bench_sandbox`'s.

use std::path::Path;
use std::time::Duration;

use crate::bench_sandbox::{load_average, median_index, mib, ms, RunSpec, Sandbox};

/// The size of the run.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Trivial cases.
    pub cases: u32,
    /// Classes they are spread over.
    pub classes: u32,
    /// Simulated cards.
    pub cards: u32,
    /// Runs (the median is reported).
    pub runs: u32,
}

/// Runs the benchmark and prints its lines to `out` (per-run lines to `log`); returns the
/// microseconds per case.
pub fn scale(
    exe: &Path,
    s: Settings,
    out: &mut dyn std::io::Write,
    log: &mut dyn std::io::Write,
) -> Result<f64, String> {
    let mut sandbox = Sandbox::new("scale")?;
    let devices = format!("0-{}", s.cards.max(1) - 1);
    let spec = RunSpec {
        args: [
            "--arch",
            "a5",
            "--devices",
            &devices,
            "--suite",
            "bench",
            "--bench-cases",
            &s.cases.to_string(),
            "--bench-classes",
            &s.classes.to_string(),
            // The trivial cases only: the suite's compute classes are the health check's bench.
            "--exclude",
            "tag:bench_compute",
        ]
        .map(str::to_owned)
        .to_vec(),
        cards: s.cards.max(1),
        timeouts_ms: None,
    };
    let mut runs = Vec::new();
    for round in 0..s.runs.max(1) {
        let run = sandbox.run(exe, &spec)?;
        if run.report.summary.passed != u64::from(s.cases) {
            return Err(format!("not every case passed: {:?}", run.report.summary));
        }
        let _ = writeln!(
            log,
            "bench: scale run {}: {:.2} s (load {})",
            round + 1,
            run.wall.as_secs_f64(),
            load_average().map_or_else(|| "?".to_owned(), |l| format!("{l:.2}"))
        );
        runs.push(run);
    }
    let walls: Vec<Duration> = runs.iter().map(|r| r.wall).collect();
    let run = &runs[median_index(&walls).unwrap_or(0)];
    let kib = |key: &str| {
        run.stats[key]
            .as_u64()
            .map(|k| k as f64 / 1024.0)
            .ok_or_else(|| format!("the stats have no {key}"))
    };
    let written_us = |name: &str| {
        run.stats["reports_write_us"][name]
            .as_u64()
            .ok_or_else(|| format!("the stats have no write time of {name}"))
    };
    let mut timeline = 0.0;
    for (name, bytes) in &run.sizes {
        if *name == "timeline.svg" {
            timeline = mib(*bytes);
        }
        let how = if *name == "journal.jsonl" {
            " (line by line during the run)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "scale: {name} {:.1} MiB, written in {:.0} ms{how}",
            mib(*bytes),
            written_us(name)? as f64 / 1000.0
        );
    }
    let us_per_case = ms(run.wall) * 1000.0 / f64::from(s.cases.max(1));
    let _ = writeln!(
        out,
        "scale: {} cases on {} cards, {:.2} s, {us_per_case:.1} us/case; dispatcher peak RSS {:.0} MiB; \
         lane peak RSS {:.0} MiB; timeline.svg {timeline:.1} MiB; reports written in {:.0} ms",
        s.cases,
        s.cards,
        run.wall.as_secs_f64(),
        kib("dispatcher_peak_rss_kib")?,
        kib("lane_peak_rss_kib")?,
        written_us("total")? as f64 / 1000.0
    );
    Ok(us_per_case)
}
