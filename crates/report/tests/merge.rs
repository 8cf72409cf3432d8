//! merge: two partitions join into one report; duplicates and mismatches are refused.

use cardguard_report::{
    merge, read_report, read_run_dirs, to_junit_string, write_merged, write_report, MergeSource, Platform,
    ReportError, JUNIT_XML, REPORT_JSON,
};
use cardguard_test_support::report_fixture;

fn partitions() -> (MergeSource, MergeSource) {
    let c = report_fixture::CASES;
    (
        MergeSource {
            source: "p1".into(),
            report: report_fixture::report_with("run-p1", &c[..3]),
        },
        MergeSource {
            source: "p2".into(),
            report: report_fixture::report_with("run-p2", &c[3..]),
        },
    )
}

#[test]
fn merge_joins_two_partitions() {
    let (a, b) = partitions();
    let merged = merge(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(merged.cases.len(), 6);
    let ids: Vec<&str> = merged.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, report_fixture::CASES.map(|c| c.0));
    let s = merged.summary;
    assert_eq!(
        (
            s.total,
            s.passed,
            s.flaky,
            s.failed,
            s.skipped,
            s.timed_out,
            s.crashed
        ),
        (6, 1, 1, 1, 1, 1, 1)
    );
    assert_eq!(s.total, a.report.summary.total + b.report.summary.total);
    assert_eq!(merged.run_id, "run-p1+run-p2");
    assert_eq!(merged.partitions.len(), 2);
    assert_eq!(merged.partitions[1].source, "p2");
    let keys: Vec<&str> = merged.devices_health.keys().map(String::as_str).collect();
    assert_eq!(keys, ["run-p1/0", "run-p1/1", "run-p2/0", "run-p2/1"]);
    assert_eq!(merged.devices, [0, 1]);
    assert_eq!(merged.exit_code(), 1);

    // Merging the merged report with a third partition keeps the partition keys.
    let third = MergeSource {
        source: "p3".into(),
        report: report_fixture::report_with("run-p3", &[("Extra::x", "Extra", "rt")]),
    };
    let again = merge(&[
        MergeSource {
            source: "merged".into(),
            report: merged,
        },
        third,
    ])
    .unwrap();
    assert_eq!(again.partitions.len(), 3);
    assert_eq!(again.summary.total, 7);
    assert!(again.devices_health.contains_key("run-p1/1"));
    assert!(again.devices_health.contains_key("run-p3/0"));
}

#[test]
fn merge_rejects_a_case_in_two_partitions() {
    let (a, _) = partitions();
    let mut b = a.clone();
    b.source = "p2".into();
    b.report.run_id = "run-other".into();
    let err = merge(&[a, b]).unwrap_err();
    assert!(
        matches!(&err, ReportError::DuplicateCase { id, .. } if id == "Paged::a"),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "merge reports: case Paged::a appears in both p1 and p2"
    );
}

#[test]
fn merge_rejects_mismatched_platform_and_repeated_runs() {
    let (a, mut b) = partitions();
    b.report.platform = Platform::Onboard;
    let err = merge(&[a.clone(), b]).unwrap_err().to_string();
    assert_eq!(
        err,
        "merge reports: platform differs: sim in p1 but onboard in p2"
    );

    let (_, mut b) = partitions();
    b.report.run_id = "run-p1".into();
    let err = merge(&[a, b]).unwrap_err().to_string();
    assert!(err.contains("run run-p1 appears in both p1 and p2"), "{err}");
    assert!(matches!(merge(&[]), Err(ReportError::NothingToMerge)));
}

#[test]
fn merge_reads_dirs_and_writes_report_and_junit() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = partitions();
    let (da, db) = (tmp.path().join("a"), tmp.path().join("b"));
    for (d, s) in [(&da, &a), (&db, &b)] {
        std::fs::create_dir_all(d).unwrap();
        write_report(&d.join(REPORT_JSON), &s.report).unwrap();
    }
    let sources = read_run_dirs(&[da.clone(), db.clone()]).unwrap();
    assert_eq!(sources[0].source, da.display().to_string());
    let merged = merge(&sources).unwrap();
    let out = tmp.path().join("out").join("merged");
    write_merged(&out, &merged).unwrap();
    assert_eq!(read_report(&out.join(REPORT_JSON)).unwrap(), merged);
    let junit = std::fs::read_to_string(out.join(JUNIT_XML)).unwrap();
    assert_eq!(junit, to_junit_string(&merged).unwrap());
    let doc = roxmltree::Document::parse(&junit).unwrap();
    assert_eq!(doc.root_element().attribute("tests"), Some("6"));

    let missing = tmp.path().join("nope");
    let err = read_run_dirs(&[da.clone(), missing.clone()])
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!("merge reports: no such directory: {}", missing.display())
    );
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = read_run_dirs(std::slice::from_ref(&empty))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!("merge reports: {} holds no report.json", empty.display())
    );
}

/// A directory whose journal is of another run than its report (a re-run that died, or two runs
/// in one directory before report dirs were locked) is refused, naming the directory and both
/// runs; a journal of the report's own run is fine.
#[test]
fn merge_refuses_a_dir_whose_journal_and_report_are_of_different_runs() {
    use cardguard_report::model::Event;
    use cardguard_report::{Journal, JOURNAL_JSONL};
    let tmp = tempfile::tempdir().unwrap();
    let journal_of = |dir: &std::path::Path, run_id: &str| {
        let j = Journal::create(&dir.join(JOURNAL_JSONL)).unwrap();
        j.append(&Event::RunStarted {
            at_ms: 0,
            run_id: run_id.into(),
            arch: platform_common::Arch::A5,
            platform: Platform::Sim,
            devices: vec![0, 1],
            cases: 3,
        })
        .unwrap();
    };
    let good = tmp.path().join("good");
    std::fs::create_dir(&good).unwrap();
    write_report(
        &good.join(REPORT_JSON),
        &report_fixture::report_with("run-a", &report_fixture::CASES[..3]),
    )
    .unwrap();
    journal_of(&good, "run-a");
    assert!(read_run_dirs(std::slice::from_ref(&good)).is_ok());

    let mixed = tmp.path().join("mixed");
    std::fs::create_dir(&mixed).unwrap();
    write_report(
        &mixed.join(REPORT_JSON),
        &report_fixture::report_with("run-b", &report_fixture::CASES[3..]),
    )
    .unwrap();
    journal_of(&mixed, "run-c");
    let err = read_run_dirs(&[good, mixed.clone()]).unwrap_err();
    assert!(matches!(err, ReportError::MixedRuns { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "merge reports: {} holds the report of run run-b but the journal of run run-c",
            mixed.display()
        )
    );
}
