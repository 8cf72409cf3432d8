//! report.json: the schema's keys, the round trip, and the issue's example.

mod report_fixture;

use std::collections::BTreeSet;

use runner::report::{read_report, write_report, Outcome, RunReport};
use serde_json::Value;

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn set<'a>(k: &[&'a str]) -> BTreeSet<&'a str> {
    k.iter().copied().collect()
}

#[test]
fn report_has_exactly_the_schema_keys() {
    let v = serde_json::to_value(report_fixture::report()).unwrap();
    // The issue's keys plus run_id, started_at, duration_ms and flaky_result.
    assert_eq!(
        keys(&v),
        set(&[
            "arch",
            "platform",
            "driver",
            "devices",
            "run_id",
            "started_at",
            "duration_ms",
            "flaky_result",
            "summary",
            "cases",
            "devices_health"
        ])
    );
    assert_eq!(v["arch"], "a5");
    assert_eq!(v["platform"], "sim");
    assert_eq!(v["driver"], serde_json::json!({ "kind": "sim", "library": null }));
    assert_eq!(v["devices"], serde_json::json!([0, 1]));
    assert_eq!(
        keys(&v["summary"]),
        set(&[
            "total",
            "passed",
            "failed",
            "flaky",
            "skipped",
            "timed_out",
            "crashed"
        ])
    );
    assert_eq!(
        v["summary"],
        serde_json::json!({ "total": 6, "passed": 1, "failed": 1, "flaky": 1, "skipped": 1,
                            "timed_out": 1, "crashed": 1 })
    );
    for case in v["cases"].as_array().unwrap() {
        assert_eq!(
            keys(case),
            set(&["id", "class", "runtime", "outcome", "skip_reason", "attempts"])
        );
        for a in case["attempts"].as_array().unwrap() {
            assert_eq!(
                keys(a),
                set(&["device", "pid", "outcome", "duration_ms", "started_ms", "error"])
            );
            if !a["error"].is_null() {
                assert_eq!(
                    keys(&a["error"]),
                    set(&["class", "call", "code", "name", "message"])
                );
            }
        }
    }
    let b = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "Paged::b")
        .unwrap();
    assert_eq!(b["outcome"], "flaky");
    assert_eq!(b["attempts"][0]["error"]["class"], "device_runtime");
    assert_eq!(b["attempts"][0]["error"]["code"], 507000);
    let skipped = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "Multi::four")
        .unwrap();
    assert_eq!(skipped["skip_reason"], "needs 4 cards, the run has 2");
    assert_eq!(skipped["attempts"], serde_json::json!([]));

    let card1 = v["devices_health"]["1"].as_array().unwrap();
    let events: Vec<&str> = card1.iter().map(|h| h["event"].as_str().unwrap()).collect();
    assert_eq!(
        events,
        [
            "poisoned",
            "marked_unusable",
            "force_reset",
            "probe",
            "recovered",
            "fresh_process",
            "fresh_process",
            "init_failed",
            "quarantined"
        ]
    );
    assert_eq!(
        card1[0],
        serde_json::json!({ "event": "poisoned", "at_ms": 515, "code": 507000, "case": "Paged::b",
                            "detail": "op timeout" })
    );
    assert_eq!(
        card1[2],
        serde_json::json!({ "event": "force_reset", "at_ms": 520, "attempt": 1, "rc": 0, "duration_ms": 41 })
    );
    assert_eq!(
        card1[3],
        serde_json::json!({ "event": "probe", "at_ms": 561, "ok": true })
    );
}

#[test]
fn report_round_trips_through_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let report = report_fixture::report();
    write_report(&path, &report).unwrap();
    let back = read_report(&path).unwrap();
    assert_eq!(back, report);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["report.json"]);
}

#[test]
fn issue_example_parses() {
    let example = r#"
{ "arch": "a5", "platform": "sim", "driver": { "kind": "sim", "library": null }, "devices": [0, 1],
  "summary": { "total": 0, "passed": 0, "failed": 0, "flaky": 0, "skipped": 0,
               "timed_out": 0, "crashed": 0 },
  "cases": [ { "id": "Class::case", "class": "Class", "runtime": "…", "outcome": "passed",
               "skip_reason": null,
               "attempts": [ { "device": 0, "pid": 1, "outcome": "failed", "duration_ms": 0,
                               "error": { "class": "device_runtime", "call": "…", "code": 507046,
                                          "name": "…", "message": "…" } } ] } ],
  "devices_health": { "0": [ { "event": "poisoned", "at_ms": 0, "code": 507046, "detail": "…" } ] } }"#;
    let r: RunReport = serde_json::from_str(example).unwrap();
    assert_eq!(r.cases[0].attempts[0].error.as_ref().unwrap().code, Some(507046));
    assert_eq!(r.devices_health["0"][0].code, Some(507046));
    assert_eq!(r.cases[0].outcome, Outcome::Passed);
}

#[test]
fn a_bad_report_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    std::fs::write(&path, "{ not json").unwrap();
    let err = read_report(&path).unwrap_err().to_string();
    assert!(err.contains("report.json"), "{err}");
}
