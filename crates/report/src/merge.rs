//! Joining partitioned runs (`--partition hash:K/N` on several machines) into one report.
//!
//! This module owns the merge rules: a directory's journal, when it has one, must be of the run
//! its report is; the runs must agree on arch, platform and `--flaky-result`;
//! their cases are concatenated (a case in two partitions is an error naming it and both sources);
//! every verdict and the summary are derived again; each run's card health is kept under
//! `<run_id>/<card>` since card numbers repeat across machines; each run is listed in `partitions`.
//! The merged `junit.xml` is regenerated from the merged report. It never runs anything and never
//! alters the source directories.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::error::ReportError;
use super::journal::{journal_run_id, JOURNAL_JSONL};
use super::json::{read_report, write_report, REPORT_JSON};
use super::junit::{write_junit, JUNIT_XML};
use super::model::{PartitionReport, RunReport, Summary};

/// One run to merge: where it came from (for messages) and its report.
#[derive(Debug, Clone)]
pub struct MergeSource {
    /// The directory (or any name) the report came from.
    pub source: String,
    /// The report.
    pub report: RunReport,
}

/// Reads `DIR/report.json` from each directory, in order.
pub fn read_run_dirs(dirs: &[PathBuf]) -> Result<Vec<MergeSource>, ReportError> {
    dirs.iter().map(|d| read_run_dir(d)).collect()
}

/// Reads `dir/report.json`; a missing directory or report is its own error, and so is a journal
/// beside it of another run (a re-run that did not finish, or two runs in one directory).
pub fn read_run_dir(dir: &Path) -> Result<MergeSource, ReportError> {
    if !dir.is_dir() {
        return Err(ReportError::NoSuchDir(dir.to_owned()));
    }
    let path = dir.join(REPORT_JSON);
    if !path.is_file() {
        return Err(ReportError::MissingReport(dir.to_owned()));
    }
    let report = read_report(&path)?;
    let journal = dir.join(JOURNAL_JSONL);
    if journal.exists() {
        if let Some(journal_run) = journal_run_id(&journal)? {
            if journal_run != report.run_id {
                return Err(ReportError::MixedRuns {
                    dir: dir.to_owned(),
                    report_run: report.run_id,
                    journal_run,
                });
            }
        }
    }
    Ok(MergeSource {
        source: dir.display().to_string(),
        report,
    })
}

fn same<T: PartialEq + std::fmt::Debug>(
    field: &'static str,
    first: &MergeSource,
    a: &T,
    other: &MergeSource,
    b: &T,
    show: impl Fn(&T) -> String,
) -> Result<(), ReportError> {
    if a == b {
        return Ok(());
    }
    Err(ReportError::Mismatch {
        field,
        first: first.source.clone(),
        first_value: show(a),
        second: other.source.clone(),
        second_value: show(b),
    })
}

/// Merges several runs into one report.
pub fn merge(sources: &[MergeSource]) -> Result<RunReport, ReportError> {
    let first = sources.first().ok_or(ReportError::NothingToMerge)?;
    for other in &sources[1..] {
        let (a, b) = (&first.report, &other.report);
        same("arch", first, &a.arch, other, &b.arch, |x| x.name().to_owned())?;
        same("platform", first, &a.platform, other, &b.platform, |x| {
            x.name().to_owned()
        })?;
        same(
            "flaky_result",
            first,
            &a.flaky_result,
            other,
            &b.flaky_result,
            |x| format!("{x:?}").to_lowercase(),
        )?;
    }

    let mut cases = Vec::new();
    let mut case_source: HashMap<String, &str> = HashMap::new();
    let mut partitions: Vec<PartitionReport> = Vec::new();
    let mut run_source: HashMap<String, String> = HashMap::new();
    let mut devices = BTreeSet::new();
    let mut devices_health = std::collections::BTreeMap::new();
    for src in sources {
        let r = &src.report;
        for c in &r.cases {
            if let Some(prev) = case_source.insert(c.id.clone(), &src.source) {
                return Err(ReportError::DuplicateCase {
                    id: c.id.clone(),
                    first: prev.to_owned(),
                    second: src.source.clone(),
                });
            }
            cases.push(c.clone());
        }
        let own = if r.partitions.is_empty() {
            vec![PartitionReport {
                run_id: r.run_id.clone(),
                source: src.source.clone(),
                devices: r.devices.clone(),
                started_at: r.started_at.clone(),
                duration_ms: r.duration_ms,
                summary: r.summary,
            }]
        } else {
            r.partitions.clone()
        };
        for p in own {
            if let Some(prev) = run_source.insert(p.run_id.clone(), src.source.clone()) {
                return Err(ReportError::DuplicateRun {
                    run_id: p.run_id,
                    first: prev,
                    second: src.source.clone(),
                });
            }
            partitions.push(p);
        }
        devices.extend(r.devices.iter().copied());
        for (key, records) in &r.devices_health {
            let key = if r.partitions.is_empty() {
                format!("{}/{key}", r.run_id)
            } else {
                key.clone()
            };
            devices_health.insert(key, records.clone());
        }
    }

    let mut merged = RunReport {
        arch: first.report.arch,
        platform: first.report.platform,
        driver: first.report.driver.clone(),
        devices: devices.into_iter().collect(),
        devices_physical: sources
            .iter()
            .flat_map(|s| {
                s.report
                    .devices_physical
                    .iter()
                    .map(|(k, v)| (format!("{}/{k}", s.report.run_id), *v))
            })
            .collect(),
        run_id: partitions
            .iter()
            .map(|p| p.run_id.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        started_at: partitions
            .iter()
            .map(|p| p.started_at.clone())
            .min()
            .unwrap_or_default(),
        duration_ms: partitions.iter().map(|p| p.duration_ms).max().unwrap_or(0),
        flaky_result: first.report.flaky_result,
        summary: Summary::default(),
        cases,
        devices_health,
        partitions,
        // A merged report is interrupted when a partition was (the first one's signal).
        interrupted: sources.iter().find_map(|s| s.report.interrupted),
        faults_unfired: sources
            .iter()
            .flat_map(|s| s.report.faults_unfired.iter().cloned())
            .collect(),
        // Iterations of a stress run are not partitions: a merge keeps each case's verdict only.
        stress: None,
    };
    merged.rederive();
    Ok(merged)
}

/// Writes the merged `report.json` and `junit.xml` into `out` (created if missing).
pub fn write_merged(out: &Path, merged: &RunReport) -> Result<(), ReportError> {
    std::fs::create_dir_all(out).map_err(|e| ReportError::io("create", out, e))?;
    write_report(&out.join(REPORT_JSON), merged)?;
    write_junit(&out.join(JUNIT_XML), merged)
}
