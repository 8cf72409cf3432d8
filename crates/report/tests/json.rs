//! report.json: the schema's keys, the round trip, and the issue's example.

use std::collections::BTreeSet;

use cardguard_report::{read_report, write_report, Outcome, RunReport};
use cardguard_test_support::report_fixture;
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
    // The issue's keys plus run_id, started_at, duration_ms, flaky_result and faults_unfired.
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
            "devices_health",
            "faults_unfired"
        ])
    );
    assert_eq!(v["faults_unfired"], serde_json::json!([]));
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
    assert_eq!(
        b["attempts"][0]["error"]["code"],
        serde_json::json!({ "space": "acl", "raw": 507000 })
    );
    assert_eq!(
        b["attempts"][0]["error"]["call"],
        "aclrtSynchronizeStreamWithTimeout"
    );
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
        serde_json::json!({ "event": "poisoned", "at_ms": 515, "device": 1, "arch": "a5",
                            "call": "aclrtSynchronizeStreamWithTimeout",
                            "code": { "space": "acl", "raw": 507000 }, "case": "Paged::b",
                            "detail": "op timeout", "unix_ms": 1_700_000_000_515_u64 })
    );
    assert_eq!(
        card1[2],
        serde_json::json!({ "event": "force_reset", "at_ms": 520, "device": 1, "arch": "a5", "attempt": 1,
                            "rc": 0, "duration_ms": 41, "detail": "force reset rc=0",
                            "unix_ms": 1_700_000_000_520_u64 })
    );
    assert_eq!(
        card1[3],
        serde_json::json!({ "event": "probe", "at_ms": 561, "device": 1, "arch": "a5", "attempt": 1, "ok": true,
                            "detail": "probe confirmed", "unix_ms": 1_700_000_000_561_u64 })
    );
    // What only the runner knows: no card, arch or Unix time of a device runner; typed codes.
    assert_eq!(
        card1[7],
        serde_json::json!({ "event": "init_failed", "at_ms": 700, "call": "aclrtCreateStream",
                            "code": { "space": "acl", "raw": 507899 }, "detail": "fresh lane could not init" })
    );
    assert_eq!(
        card1[8],
        serde_json::json!({ "event": "quarantined", "at_ms": 701, "detail": "fresh lane could not init" })
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
fn the_documented_schema_parses_with_typed_codes() {
    // The example of docs/reference/report-json.md, its first ```json block.
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/report-json.md"),
    )
    .unwrap();
    let start = page.find("```json\n").expect("the page has a ```json block") + "```json\n".len();
    let example = &page[start..start + page[start..].find("```").expect("the block ends")];
    let r: RunReport = serde_json::from_str(example).unwrap();
    let hal = platform_common::error::codes::HAL_NO_PROCESS;
    assert_eq!(r.cases[0].attempts[0].error.as_ref().unwrap().code, Some(hal));
    assert_eq!(r.devices_health["0"][0].code(), Some(hal));
    assert_eq!(r.devices_health["0"][0].name(), "poisoned");
    assert_eq!(r.devices_health["0"][1].name(), "init_failed");
    assert_eq!(
        r.devices_health["0"][1].code(),
        Some(platform_common::error::codes::RT_DRV_INTERNAL_ERROR)
    );
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
