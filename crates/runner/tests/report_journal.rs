//! journal.jsonl: events appended one line each, read back as they were; the reporter's files.

mod report_fixture;

use std::sync::Arc;

use runner::report::{
    read_journal, read_report, render_summary, Event, FlakyResult, Journal, ReportPaths, Reporter,
};

#[test]
fn journal_lines_parse_back_to_the_same_events() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let journal = Journal::create(&path).unwrap();
    let events = report_fixture::events();
    for e in &events {
        journal.append(e).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), events.len());
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["event"].is_string(), "{line}");
        assert!(v["at_ms"].is_u64(), "{line}");
    }
    assert_eq!(read_journal(&path).unwrap(), events);
}

#[test]
fn concurrent_appends_never_interleave_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let journal = Arc::new(Journal::create(&path).unwrap());
    let long = "x".repeat(5000);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let journal = Arc::clone(&journal);
            let long = long.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    journal
                        .append(&Event::RetryScheduled {
                            at_ms: i,
                            id: format!("T{t}::c{i}"),
                            reason: long.clone(),
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let events = read_journal(&path).unwrap();
    assert_eq!(events.len(), 200);
}

#[test]
fn a_garbled_journal_line_is_an_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    std::fs::write(&path, "{\"event\":\"run_finished\",\"at_ms\":1,\"summary\":{\"total\":0,\"passed\":0,\"failed\":0,\"flaky\":0,\"skipped\":0,\"timed_out\":0,\"crashed\":0}}\n{oops\n").unwrap();
    let err = read_journal(&path).unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
}

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
