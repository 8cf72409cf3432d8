//! The reporter: the journal appended as the run goes, and every file at the end.

use cardguard_test_support::report_fixture;
use runner::report::{read_journal, read_report, render_summary, Event, FlakyResult, ReportPaths, Reporter};

#[test]
fn reporter_writes_every_file_and_the_journal_as_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a5").join("run-1");
    let mut reporter = Reporter::create(&out, report_fixture::info("run-1", vec![0, 1]), false).unwrap();
    for (id, class, rt) in report_fixture::CASES {
        reporter.add_case(id, class, rt).unwrap();
    }
    let paths = ReportPaths::in_dir(&out);
    let events = report_fixture::events();
    for (i, e) in events.iter().enumerate() {
        reporter.event(e).unwrap();
        // Appended as it happens: the line is on disk before the next event.
        assert_eq!(read_journal(&paths.journal).unwrap().len(), i + 1);
    }
    // An event for a case that was never selected is refused but still journaled.
    let stray = Event::CaseSkipped {
        at_ms: 1,
        id: "Nope::x".into(),
        reason: "r".into(),
    };
    let err = reporter.event(&stray).unwrap_err().to_string();
    assert!(err.contains("Nope::x"), "{err}");
    let report = reporter.finish(FlakyResult::Pass).unwrap();

    let journal = read_journal(&paths.journal).unwrap();
    assert_eq!(journal.len(), events.len() + 2);
    assert!(matches!(journal.last(), Some(Event::RunFinished { summary, .. }) if *summary == report.summary));
    assert_eq!(read_report(&paths.report).unwrap(), report);
    for p in [&paths.junit, &paths.timeline] {
        let text = std::fs::read_to_string(p).unwrap();
        roxmltree::Document::parse(&text).unwrap();
    }
    assert_eq!(report.summary.total, 6);
    assert_eq!(report.exit_code(), 1);
    assert!(render_summary(&report).starts_with("FAIL 6 case(s)"));
}
