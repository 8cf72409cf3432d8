//! journal.jsonl: events appended one line each, read back as they were.

use std::sync::Arc;

use cardguard_report::{read_journal, Event, Journal};
use cardguard_test_support::report_fixture;

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
