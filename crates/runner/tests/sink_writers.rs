//! The poison sink under concurrent writers from several processes: every record is one whole
//! line (never interleaved), none is lost, and malformed lines are skipped when read, each
//! reported by its line number.

use std::io::Write;
use std::process::Command;

use runner::sink::{Sink, SinkRecord, SinkWriter};

const WRITERS: usize = 6;
const RECORDS: usize = 150;

/// Run by the test below in child processes (ignored in normal runs): appends RECORDS records.
#[test]
#[ignore = "helper: run as a child process by concurrent_writers_never_interleave_a_record"]
fn sink_writer_child() {
    let path = std::env::var("SINK_TEST_PATH").expect("run by the parent test");
    let who: usize = std::env::var("SINK_TEST_WRITER").unwrap().parse().unwrap();
    let mut w = SinkWriter::new(path.into());
    for i in 0..RECORDS {
        let r = SinkRecord {
            selector: format!("W{who}::c{i}"),
            case: format!("W{who}::c{i}"),
            runtime: "rt".into(),
            device: who as u32,
            code: Some(platform_common::error::codes::RT_DRV_INTERNAL_ERROR),
            // Long records: several kilobytes each, well past any small-write atomicity.
            reason: format!("{who}-{i}-").repeat(900),
        };
        assert!(w.append(&r));
    }
}

#[test]
fn concurrent_writers_never_interleave_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::create(dir.path(), 0).unwrap();
    let me = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..WRITERS)
        .map(|who| {
            Command::new(&me)
                .args([
                    "--exact",
                    "sink_writer_child",
                    "--ignored",
                    "--quiet",
                    "--test-threads",
                    "1",
                ])
                .env("SINK_TEST_PATH", sink.path())
                .env("SINK_TEST_WRITER", who.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let raw = std::fs::read_to_string(sink.path()).unwrap();
    let lines: Vec<&str> = raw.lines().collect();
    assert_eq!(lines.len(), WRITERS * RECORDS);
    for line in &lines {
        let r: SinkRecord = serde_json::from_str(line).expect("every line is one whole record");
        assert!(
            r.reason.starts_with(&format!("{}-", r.device)),
            "record mixed with another"
        );
    }
    let got = sink.take();
    assert_eq!(
        got.records.len(),
        WRITERS * RECORDS,
        "distinct selectors, none lost"
    );
    assert!(got.malformed_lines.is_empty());
}

#[test]
fn malformed_lines_are_skipped_and_the_rest_deduplicated_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::create(dir.path(), 3).unwrap();
    let rec = |s: &str| SinkRecord {
        selector: s.into(),
        case: format!("{s}x"),
        runtime: "rt".into(),
        device: 3,
        code: None,
        reason: "r".into(),
    };
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(sink.path())
        .unwrap();
    let line = |r: &SinkRecord| format!("{}\n", serde_json::to_string(r).unwrap());
    write!(
        f,
        "{}not json\n{}{{\"selector\":1}}\n{}\u{0}\u{1}\n{}",
        line(&rec("B::")),
        line(&rec("A::")),
        line(&rec("B::")),
        line(&rec("C::"))
    )
    .unwrap();
    write!(f, "{{\"selector\":\"torn").unwrap();
    let path = sink.path().to_owned();
    let got = sink.take();
    let selectors: Vec<String> = got.records.into_iter().map(|r| r.selector).collect();
    assert_eq!(selectors, ["B::", "A::", "C::"]);
    // Every skipped line is reported (the dispatcher warns and journals them), none silently.
    assert_eq!(got.malformed_lines, [2, 4, 6, 8]);
    assert!(!path.exists(), "the dispatcher deletes the sink after reading it");
}
