//! Table tests of the chaos invariants (`check`): each invariant broken once by a small report.

use std::collections::{BTreeMap, BTreeSet};

use platform_common::Arch;
use serde_json::{json, Value};

use super::check::{check, is_sticky, reported_code, Facts, ReportedCode, Space};
use super::faults::by_name;
use super::plan::{Plan, Rule, BUILTIN_LAUNCHES};

fn plan(faults: &[(&str, u64)]) -> Plan {
    Plan {
        index: 1,
        arch: Arch::A5,
        cards: 2,
        anchor: 0,
        rules: faults
            .iter()
            .map(|&(name, value)| Rule {
                card: 1,
                kind: by_name(name).unwrap(),
                value,
                text: format!("{name}@{value}"),
            })
            .collect(),
        kill_at: 0.5,
        kill_pick: 0,
        launches: BUILTIN_LAUNCHES,
    }
}

fn passed(id: &str) -> Value {
    json!({"id": id, "outcome": "passed", "skip_reason": null,
           "attempts": [{"device": 0, "pid": 10, "outcome": "passed", "error": null}]})
}

fn failed_attempt(pid: u64, class: &str, call: Option<&str>, code: Value) -> Value {
    json!({"device": 1, "pid": pid, "outcome": "failed",
           "error": {"class": class, "call": call, "code": code, "message": "m"}})
}

fn report(cases: Vec<Value>, health: Value) -> Value {
    let mut summary = json!({"total": cases.len()});
    for k in ["passed", "failed", "flaky", "skipped", "timed_out", "crashed"] {
        let n = cases.iter().filter(|c| c["outcome"] == k).count();
        summary[k] = json!(n);
    }
    json!({"flaky_result": "pass", "summary": summary, "cases": cases, "devices_health": health})
}

struct Case {
    report: Value,
    plan: Plan,
    exit: i32,
    /// The invariants the report must break (empty: it holds).
    broken: &'static [&'static str],
}

/// The pid of the lane every row's `--kill` killed.
const KILLED: u64 = 99;

fn crashed_attempt(pid: u64, class: &str) -> Value {
    json!({"device": 1, "pid": pid, "outcome": "crashed",
           "error": {"class": class, "call": null, "code": null, "message": "m"}})
}

fn after(first: Value, outcome: &str) -> Value {
    json!({"id": "A::x", "outcome": outcome, "skip_reason": null, "attempts": [
        first, {"device": 0, "pid": 11, "outcome": "passed", "error": null}]})
}

fn run(c: &Case) -> Vec<&'static str> {
    let listed: BTreeSet<String> = arr_ids(&c.report);
    let multi: BTreeMap<String, u32> = [("M::two".to_owned(), 2)].into();
    let own: BTreeMap<String, u32> = [("O::own".to_owned(), 1)].into();
    let facts = Facts {
        plan: &c.plan,
        exit: Some(c.exit),
        listed: &listed,
        multi_card: &multi,
        own_retries: &own,
        killed: Some(KILLED),
        counters: None,
    };
    let mut got: Vec<&'static str> = check(&c.report, &facts).iter().map(|v| v.invariant).collect();
    got.dedup();
    got
}

fn arr_ids(r: &Value) -> BTreeSet<String> {
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

fn flaky_after(first: Value) -> Value {
    json!({"id": "A::x", "outcome": "flaky", "skip_reason": null, "attempts": [
        first, {"device": 0, "pid": 11, "outcome": "passed", "error": null}]})
}

fn poisoned(pid: u64, case: Option<&str>, code: Value) -> Value {
    let mut r = json!({"event": "poisoned", "at_ms": 5, "code": code, "call": "rtKernelLaunchWithHandleV2", "pid": pid});
    if let Some(c) = case {
        r["case"] = json!(c);
    }
    r
}

#[test]
fn each_invariant_is_broken_by_its_report() {
    let launch = Some("rtKernelLaunchWithHandleV2");
    let table = vec![
        // A clean run holds.
        Case {
            report: report(vec![passed("A::x"), passed("M::two")], json!({})),
            plan: plan(&[]),
            exit: 0,
            broken: &[],
        },
        // A launch failure with its own poisoning, retried to a pass: holds (integer code form).
        Case {
            report: report(
                vec![flaky_after(failed_attempt(
                    10,
                    "device_runtime",
                    launch,
                    json!(207001),
                ))],
                json!({"1": [poisoned(10, Some("A::x"), json!(207001))]}),
            ),
            plan: plan(&[("launch_fail", 3)]),
            exit: 0,
            broken: &[],
        },
        // The same in the typed code form, with a poisoned event naming no case.
        Case {
            report: report(
                vec![flaky_after(failed_attempt(
                    10,
                    "device_runtime",
                    launch,
                    json!({"space": "acl", "raw": 207001}),
                ))],
                json!({"1": [poisoned(10, None, json!({"space": "acl", "raw": 207001}))]}),
            ),
            plan: plan(&[("launch_fail", 3)]),
            exit: 0,
            broken: &[],
        },
        // The refusal: the first cause's code again, in a later case, with no poisoning of its own.
        Case {
            report: report(
                vec![
                    flaky_after(failed_attempt(10, "device_runtime", launch, json!(207001))),
                    json!({"id": "B::y", "outcome": "flaky", "skip_reason": null, "attempts": [
                        failed_attempt(10, "device_runtime", launch, json!(207001)),
                        {"device": 0, "pid": 12, "outcome": "passed", "error": null}]}),
                ],
                json!({"1": [poisoned(10, Some("A::x"), json!(207001))]}),
            ),
            plan: plan(&[("launch_fail", 3)]),
            exit: 0,
            broken: &["Unusable refusal (cascade)"],
        },
        // Sticky codes: 507899 (integer), HAL rc 62 (typed), 62 from halResMap (integer).
        Case {
            report: report(
                vec![flaky_after(failed_attempt(
                    10,
                    "device_runtime",
                    Some("aclrtMalloc"),
                    json!(507899),
                ))],
                json!({"1": [poisoned(10, Some("A::x"), json!(507899))]}),
            ),
            plan: plan(&[]),
            exit: 0,
            broken: &["sticky-context code (cascade)"],
        },
        Case {
            report: report(
                vec![flaky_after(failed_attempt(
                    10,
                    "device_runtime",
                    Some("halResMap"),
                    json!({"space": "hal", "raw": 62}),
                ))],
                json!({"1": [{"event": "poisoned", "code": {"space": "hal", "raw": 62}, "call": "halResMap", "case": "A::x", "pid": 10}]}),
            ),
            plan: plan(&[]),
            exit: 0,
            broken: &["sticky-context code (cascade)"],
        },
        // A wrong result retried, and more wrong results than corrupt faults.
        Case {
            report: report(
                vec![
                    json!({"id": "A::x", "outcome": "passed", "skip_reason": null, "attempts": [
                    failed_attempt(10, "result", None, Value::Null),
                    {"device": 0, "pid": 10, "outcome": "passed", "error": null}]}),
                ],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 0,
            broken: &[
                "result failure retried",
                "wrong results the plan does not explain",
            ],
        },
        // A final failed from a corrupt fault holds; exit 1 as the verdict says.
        Case {
            report: report(
                vec![json!({"id": "A::x", "outcome": "failed", "skip_reason": null,
                            "attempts": [failed_attempt(10, "result", None, Value::Null)]})],
                json!({}),
            ),
            plan: plan(&[("corrupt", 4)]),
            exit: 1,
            broken: &[],
        },
        // ... but not with exit 0.
        Case {
            report: report(
                vec![json!({"id": "A::x", "outcome": "failed", "skip_reason": null,
                            "attempts": [failed_attempt(10, "result", None, Value::Null)]})],
                json!({}),
            ),
            plan: plan(&[("corrupt", 4)]),
            exit: 0,
            broken: &["exit status matches the verdicts"],
        },
        // A final failed of a device class, and a final timed_out.
        Case {
            report: report(
                vec![
                    json!({"id": "A::x", "outcome": "failed", "skip_reason": null,
                           "attempts": [failed_attempt(10, "infrastructure", None, Value::Null)]}),
                    json!({"id": "B::y", "outcome": "timed_out", "skip_reason": null,
                           "attempts": [{"device": 0, "pid": 3, "outcome": "timed_out", "error": {"class": "device_runtime", "message": "t"}}]}),
                ],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 1,
            broken: &[
                "final failed without a wrong result",
                "final timed_out or crashed",
            ],
        },
        // A case with one retry of its own (the plan gives 2) may fail once it spent it on the
        // plan's faults; before, it may not.
        Case {
            report: report(
                vec![
                    json!({"id": "O::own", "outcome": "failed", "skip_reason": null, "attempts": [
                    failed_attempt(10, "device_runtime", None, Value::Null),
                    failed_attempt(11, "device_runtime", None, Value::Null)]}),
                ],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 1,
            broken: &[],
        },
        Case {
            report: report(
                vec![
                    json!({"id": "O::own", "outcome": "failed", "skip_reason": null, "attempts": [
                    failed_attempt(10, "device_runtime", None, Value::Null)]}),
                ],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 1,
            broken: &["final failed without a wrong result"],
        },
        // The multi-card case may fail after a quarantine; without one it may not.
        Case {
            report: report(
                vec![json!({"id": "M::two", "outcome": "failed", "skip_reason": null,
                            "attempts": [{"device": null, "pid": null, "outcome": "failed", "error": {"class": "infrastructure", "message": "q"}}]})],
                json!({"1": [{"event": "quarantined", "at_ms": 9}]}),
            ),
            plan: plan(&[("dead", 0)]),
            exit: 1,
            broken: &[],
        },
        Case {
            report: report(
                vec![json!({"id": "M::two", "outcome": "failed", "skip_reason": null,
                            "attempts": [{"device": null, "pid": null, "outcome": "failed", "error": {"class": "infrastructure", "message": "q"}}]})],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 1,
            broken: &["final failed without a wrong result"],
        },
        // Skips: the multi-card case with too few healthy cards holds; any other skip does not;
        // a case with no attempt that is not skipped does not.
        Case {
            report: report(
                vec![
                    json!({"id": "M::two", "outcome": "skipped", "skip_reason": "needs 2 cards", "attempts": []}),
                ],
                json!({"1": [{"event": "quarantined", "at_ms": 9}]}),
            ),
            plan: plan(&[("dead", 0)]),
            exit: 0,
            broken: &[],
        },
        Case {
            report: report(
                vec![
                    json!({"id": "A::x", "outcome": "skipped", "skip_reason": "why not", "attempts": []}),
                    json!({"id": "B::y", "outcome": "passed", "skip_reason": null, "attempts": []}),
                ],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 0,
            broken: &[
                "skip without a reason the plan explains",
                "case without an attempt",
            ],
        },
        // The killed lane's case: an infrastructure crash, retried to a pass (passed, not flaky).
        Case {
            report: report(
                vec![after(crashed_attempt(KILLED, "infrastructure"), "passed")],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 0,
            broken: &[],
        },
        // An infrastructure crash of a lane nobody killed.
        Case {
            report: report(
                vec![after(crashed_attempt(12, "infrastructure"), "passed")],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 0,
            broken: &["infrastructure kill nobody sent"],
        },
        // The kill was not retried: the case ends crashed.
        Case {
            report: report(
                vec![json!({"id": "A::x", "outcome": "crashed", "skip_reason": null,
                            "attempts": [crashed_attempt(KILLED, "infrastructure")]})],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 1,
            broken: &["final timed_out or crashed", "infrastructure kill not retried"],
        },
        // The kill blamed on the case as a device crash ...
        Case {
            report: report(
                vec![after(crashed_attempt(KILLED, "device_runtime"), "flaky")],
                json!({}),
            ),
            plan: plan(&[]),
            exit: 0,
            broken: &["kill from outside blamed on the case"],
        },
        // ... unless a crash fault of the plan may have killed that lane first.
        Case {
            report: report(
                vec![after(crashed_attempt(KILLED, "device_runtime"), "flaky")],
                json!({}),
            ),
            plan: plan(&[("crash", 2)]),
            exit: 0,
            broken: &[],
        },
        // A card quarantined at the start counts as quarantined: a multi-card case skipped for it.
        Case {
            report: report(
                vec![
                    passed("A::x"),
                    json!({"id": "M::two", "outcome": "skipped", "skip_reason": "needs 2 cards",
                           "attempts": []}),
                ],
                json!({"1": [{"event": "quarantined_at_start", "at_ms": 1, "detail": "preflight failed"}]}),
            ),
            plan: plan(&[]),
            exit: 0,
            broken: &[],
        },
    ];
    for (i, c) in table.iter().enumerate() {
        let mut want: Vec<&str> = c.broken.to_vec();
        let mut got = run(c);
        want.sort_unstable();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got, want, "row {i}: {}", c.report);
    }
}

#[test]
fn lost_cases_and_bad_counts_are_violations() {
    let mut r = report(vec![passed("A::x")], json!({}));
    r["summary"]["passed"] = json!(2);
    let listed: BTreeSet<String> = ["A::x".to_owned(), "B::lost".to_owned()].into();
    let multi = BTreeMap::new();
    let p = plan(&[]);
    let facts = Facts {
        plan: &p,
        exit: Some(0),
        listed: &listed,
        multi_card: &multi,
        own_retries: &BTreeMap::new(),
        killed: Some(KILLED),
        counters: None,
    };
    let got: Vec<String> = check(&r, &facts).iter().map(ToString::to_string).collect();
    assert!(
        got.iter().any(|v| v.contains("add up to 2, total is 1")),
        "{got:?}"
    );
    assert!(got.iter().any(|v| v.contains("missing [\"B::lost\"]")), "{got:?}");
    let facts = Facts { exit: None, ..facts };
    let got: Vec<String> = check(&json!({}), &facts)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(got.iter().any(|v| v.contains("no total")), "{got:?}");
    assert!(got.iter().any(|v| v.contains("exit by a signal")), "{got:?}");
}

#[test]
fn codes_are_read_in_both_forms() {
    let acl = |raw| ReportedCode {
        space: Space::Acl,
        raw,
    };
    let hal = |raw| ReportedCode {
        space: Space::Hal,
        raw,
    };
    assert_eq!(
        reported_code(&json!(507899), Some("aclrtMalloc")),
        Some(acl(507_899))
    );
    assert_eq!(
        reported_code(&json!({"space": "acl", "raw": 507899}), None),
        Some(acl(507_899))
    );
    assert_eq!(
        reported_code(&json!({"space": "hal", "raw": 62}), None),
        Some(hal(62))
    );
    // The integer form: 62 is HAL only from halResMap.
    assert_eq!(reported_code(&json!(62), Some("halResMap")), Some(hal(62)));
    assert_eq!(reported_code(&json!(62), Some("aclrtMalloc")), Some(acl(62)));
    assert_eq!(
        reported_code(&json!({"space": "loader", "raw": 1}), None).map(|c| c.space),
        Some(Space::Other)
    );
    assert_eq!(reported_code(&Value::Null, None), None);
    assert!(is_sticky(acl(507_899)) && is_sticky(hal(62)));
    assert!(!is_sticky(acl(62)) && !is_sticky(hal(507_899)) && !is_sticky(acl(207_001)));
}

/// `--faults-must-fire` (every chaos run has it): an unfired rule makes a passing run exit 1;
/// `faults_unfired` must be what the sim's counters say; an SDMA handoff wait is bounded.
#[test]
fn unfired_rules_and_the_handoff_wait_are_held_to_the_counters_and_the_bound() {
    use platform_common::sim::CardCounters;
    let listed: BTreeSet<String> = ["A::x".to_owned()].into();
    let multi = BTreeMap::new();
    let p = plan(&[("op_timeout", 9)]);
    let few = [
        CardCounters::default(),
        CardCounters {
            case_launches: 3,
            ..CardCounters::default()
        },
    ];
    let enough = [
        CardCounters::default(),
        CardCounters {
            case_launches: 9,
            ..CardCounters::default()
        },
    ];
    let unfired =
        json!([{"rule": "dev=1:op_timeout@9", "card": 1, "detail": "the card made 3 case launch(es)"}]);
    let got = |r: &Value, exit: i32, counters: &[CardCounters]| -> Vec<&'static str> {
        let facts = Facts {
            plan: &p,
            exit: Some(exit),
            listed: &listed,
            multi_card: &multi,
            own_retries: &BTreeMap::new(),
            killed: None,
            counters: Some(counters),
        };
        check(r, &facts).iter().map(|v| v.invariant).collect()
    };
    let mut r = report(vec![passed("A::x")], json!({}));
    r["faults_unfired"] = unfired.clone();
    assert_eq!(
        got(&r, 1, &few),
        Vec::<&str>::new(),
        "listed, unfired by the counters, exit 1"
    );
    assert_eq!(got(&r, 0, &few), ["exit status matches the verdicts"]);
    assert_eq!(
        got(&r, 1, &enough),
        ["faults_unfired matches the sim's counters"],
        "9 launches fire op_timeout@9"
    );
    let clean = report(vec![passed("A::x")], json!({}));
    assert_eq!(
        got(&clean, 0, &few),
        ["faults_unfired matches the sim's counters"],
        "an unfired rule the report leaves out"
    );

    let wait = |ms: u64| {
        let h = json!({"1": [{"event": "sdma_handoff_wait", "at_ms": 1, "detail": "d",
                              "wait_ms": ms, "op_execute_ms": 500}]});
        report(vec![passed("A::x")], h)
    };
    let none = plan(&[]);
    let facts = Facts {
        plan: &none,
        exit: Some(0),
        listed: &listed,
        multi_card: &multi,
        own_retries: &BTreeMap::new(),
        killed: None,
        counters: None,
    };
    assert!(check(&wait(550), &facts).is_empty());
    let broken: Vec<&str> = check(&wait(60_000), &facts).iter().map(|v| v.invariant).collect();
    assert_eq!(broken, ["the SDMA handoff wait is bounded and reported"]);
}
