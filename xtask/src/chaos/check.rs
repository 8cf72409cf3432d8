//! The invariants a chaos run's `report.json` and exit status must hold.
//!
//! This module owns the checks, as one pure function over the parsed report and what the run
//! knows ([`Facts`]): the counts add up and match the cases; no selected case is lost; every case
//! has an attempt unless skipped for a reason the plan explains; no attempt fails with a
//! sticky-context code or is an `Unusable` refusal (either would be a cascade); no `result`
//! failure is retried; a final `failed` only for a wrong result (and no more of those than the
//! plan's `corrupt` faults) or for a multi-card case after a quarantine; no final `timed_out` or
//! `crashed`; the exit status is the verdicts'; and, for the lane `--kill` SIGKILLs from outside
//! (issue 9: an infrastructure kill is not a test failure), every `infrastructure` crash is that
//! lane's and is retried, and that lane's death is never a `device_runtime` crash of its case
//! (unless the plan has a fault that kills lanes itself, which the kill may have raced). A card's
//! `quarantined_at_start` counts as a quarantine. The report is read as JSON values, not through the
//! runner's types, so a report of any version of the schema is checked by the same rules. It never
//! runs anything.
//!
//! How an `Unusable` refusal shows in a report: the lane's attempt error comes from
//! `runner::exec::run_error_report`, which for `RunError::Unusable` reports the refusal's *first
//! cause* (its call and code) with class `device_runtime`; the refusal made no driver call, so the
//! card got no `poisoned` event for it. Every attempt that failed with a driver code must therefore
//! be matched by a `poisoned` event of its own (same lane pid, same case, same code); one left over
//! is a refusal.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use platform_common::sim::CardCounters;

use super::faults::Effect;
use super::plan::Plan;
use super::unfired;

/// The numbering a code belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Space {
    /// ACL / runtime codes.
    Acl,
    /// HAL return codes.
    Hal,
    /// Any other space (cardguard's loader).
    Other,
}

/// A code as a report writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReportedCode {
    /// Its space.
    pub space: Space,
    /// Its raw value.
    pub raw: i64,
}

/// The HAL call whose rc 62 is the sticky-context refusal.
const HAL_RES_MAP: &str = "halResMap";

/// Reads an error's (or a health record's) `code`: the integer form `507899` or the typed form
/// `{"space": "acl", "raw": 507899}`. The integer form cannot tell HAL from ACL: 62 from
/// `halResMap` is taken as HAL rc 62, every other integer as ACL.
pub fn reported_code(code: &Value, call: Option<&str>) -> Option<ReportedCode> {
    match code {
        Value::Number(n) => {
            let raw = n.as_i64()?;
            let space = if raw == 62 && call == Some(HAL_RES_MAP) {
                Space::Hal
            } else {
                Space::Acl
            };
            Some(ReportedCode { space, raw })
        }
        Value::Object(o) => {
            let raw = o.get("raw")?.as_i64()?;
            let space = match o.get("space")?.as_str()? {
                "acl" => Space::Acl,
                "hal" => Space::Hal,
                _ => Space::Other,
            };
            Some(ReportedCode { space, raw })
        }
        _ => None,
    }
}

/// A sticky-context code: ACL 507899 (device memory, stream creation) or HAL rc 62 (`halResMap`).
pub fn is_sticky(code: ReportedCode) -> bool {
    matches!((code.space, code.raw), (Space::Acl, 507_899) | (Space::Hal, 62))
}

/// What the checks know besides the report.
#[derive(Debug)]
pub struct Facts<'a> {
    /// The plan the run ran.
    pub plan: &'a Plan,
    /// The run's exit code (`None`: killed by a signal).
    pub exit: Option<i32>,
    /// The cases the suite binary lists for the plan's arch: every one must be in the report.
    pub listed: &'a BTreeSet<String>,
    /// The cases that need more than one card, with the number they need.
    pub multi_card: &'a BTreeMap<String, u32>,
    /// The cases with retries of their own, which win over the plan's `--retries`.
    pub own_retries: &'a BTreeMap<String, u32>,
    /// The pid of the lane `--kill` SIGKILLed, if it killed one.
    pub killed: Option<u64>,
    /// The sim's counters of each card after the run (`None`: its card files were unreadable),
    /// which `faults_unfired` is checked against ([`super::unfired`]).
    pub counters: Option<&'a [CardCounters]>,
}

/// One broken invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The invariant's short name (for grouping).
    pub invariant: &'static str,
    /// What broke it.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.invariant, self.detail)
    }
}

fn v(invariant: &'static str, detail: impl Into<String>) -> Violation {
    Violation {
        invariant,
        detail: detail.into(),
    }
}

const OUTCOMES: [&str; 6] = ["passed", "failed", "flaky", "skipped", "timed_out", "crashed"];

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Checks every invariant; an empty list means the run held them all.
pub fn check(report: &Value, facts: &Facts<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    let cases = arr(report, "cases");
    counts(report, cases, &mut out);
    lost(cases, facts, &mut out);
    let health: Vec<&Value> = report
        .get("devices_health")
        .and_then(Value::as_object)
        .map(|m| {
            m.values()
                .flat_map(|l| l.as_array().into_iter().flatten())
                .collect()
        })
        .unwrap_or_default();
    let quarantined = health
        .iter()
        .filter(|r| matches!(s(r, "event"), Some("quarantined" | "quarantined_at_start")))
        .count();
    let healthy = (facts.plan.cards as usize).saturating_sub(quarantined);
    let mut results = 0;
    for c in cases {
        let id = s(c, "id").unwrap_or("?");
        let outcome = s(c, "outcome").unwrap_or("?");
        let attempts = arr(c, "attempts");
        let class = |a: &Value| a.get("error").and_then(|e| s(e, "class")).map(str::to_owned);
        if outcome == "skipped" {
            let reason = s(c, "skip_reason").unwrap_or("");
            let explained = facts
                .multi_card
                .get(id)
                .is_some_and(|&need| (need as usize) > healthy);
            if reason.is_empty() || !explained {
                out.push(v(
                    "skip without a reason the plan explains",
                    format!("{id} skipped ({reason:?}) with {healthy} healthy card(s)"),
                ));
            }
        } else if attempts.is_empty() {
            out.push(v(
                "case without an attempt",
                format!("{id} is {outcome} with no attempt"),
            ));
        }
        for (i, a) in attempts.iter().enumerate() {
            if class(a).as_deref() == Some("result") {
                results += 1;
                if i + 1 < attempts.len() {
                    out.push(v(
                        "result failure retried",
                        format!("{id}: attempt {} failed with class result and was retried", i + 1),
                    ));
                }
            }
            if let Some(e) = a.get("error") {
                let call = s(e, "call");
                if let Some(code) = e.get("code").and_then(|c| reported_code(c, call)) {
                    if is_sticky(code) {
                        out.push(v(
                            "sticky-context code (cascade)",
                            format!(
                                "{id} attempt {} failed at {} with {:?} {}",
                                i + 1,
                                call.unwrap_or("?"),
                                code.space,
                                code.raw
                            ),
                        ));
                    }
                }
            }
        }
        match outcome {
            "timed_out" | "crashed" => out.push(v(
                "final timed_out or crashed",
                format!("{id} ended {outcome} after {} attempt(s)", attempts.len()),
            )),
            "failed" => {
                let last = attempts.last().and_then(class);
                let multi_after_quarantine = facts.multi_card.contains_key(id) && quarantined > 0;
                // A case whose own retries are fewer than the plan's can spend them all on the
                // plan's faults: it fails honestly once they are spent.
                let own_spent = facts
                    .own_retries
                    .get(id)
                    .is_some_and(|&r| r < facts.plan.retries() && attempts.len() == r as usize + 1);
                if last.as_deref() != Some("result") && !multi_after_quarantine && !own_spent {
                    out.push(v(
                        "final failed without a wrong result",
                        format!(
                            "{id} failed, last attempt's class {}",
                            last.as_deref().unwrap_or("none")
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    let corrupt = facts.plan.count(Effect::WrongResult);
    if results > corrupt {
        out.push(v(
            "wrong results the plan does not explain",
            format!("{results} attempt(s) failed with class result, the plan has {corrupt} corrupt fault(s)"),
        ));
    }
    refusals(cases, &health, &mut out);
    kills(cases, facts, &mut out);
    handoff_waits(&health, &mut out);
    let unfired = match unfired::reported(report) {
        Ok(u) => u,
        Err(e) => {
            out.push(v("faults_unfired matches the sim's counters", e));
            BTreeSet::new()
        }
    };
    if let Some(counters) = facts.counters {
        let want = unfired::expected(facts.plan, counters);
        if unfired != want {
            out.push(v(
                "faults_unfired matches the sim's counters",
                format!("the report lists {unfired:?}, the counters say {want:?}"),
            ));
        }
    }
    exit_status(report, cases, facts.exit, !unfired.is_empty(), &mut out);
    out
}

/// The handoff wait before an SDMA card's force reset is the card's, bounded by the formula
/// (`max(10 s, op-execute + 5 s)` on real cards, less on the sim) and reported with both terms.
fn handoff_waits(health: &[&Value], out: &mut Vec<Violation>) {
    for r in health
        .iter()
        .filter(|r| s(r, "event") == Some("sdma_handoff_wait"))
    {
        let wait = r.get("wait_ms").and_then(Value::as_u64);
        let op = r.get("op_execute_ms").and_then(Value::as_u64);
        let bounded = match (wait, op) {
            (Some(w), Some(op)) => w <= (op + 5_000).max(10_000),
            _ => false,
        };
        if !bounded {
            out.push(v("the SDMA handoff wait is bounded and reported", format!("{r}")));
        }
    }
}

/// The lane killed from outside: an `infrastructure` crash is only ever its, and always retried;
/// its death is no `device_runtime` crash of its case (a plan fault that kills lanes may have
/// raced the kill: then either is right).
fn kills(cases: &[Value], facts: &Facts<'_>, out: &mut Vec<Violation>) {
    let lane_faults = facts.plan.count(Effect::KillsLane) > 0;
    for c in cases {
        let id = s(c, "id").unwrap_or("?");
        let attempts = arr(c, "attempts");
        for (i, a) in attempts.iter().enumerate() {
            if s(a, "outcome") != Some("crashed") {
                continue;
            }
            let pid = a.get("pid").and_then(Value::as_u64);
            let class = a.get("error").and_then(|e| s(e, "class"));
            let from_kill = pid.is_some() && pid == facts.killed;
            let shown = || pid.map_or_else(|| "?".to_owned(), |p| p.to_string());
            match class {
                Some("infrastructure") => {
                    if !from_kill {
                        out.push(v(
                            "infrastructure kill nobody sent",
                            format!(
                                "{id} attempt {} is an infrastructure crash of lane pid {}, the kill was of {:?}",
                                i + 1,
                                shown(),
                                facts.killed
                            ),
                        ));
                    }
                    if i + 1 == attempts.len() {
                        out.push(v(
                            "infrastructure kill not retried",
                            format!("{id} attempt {} (lane pid {}) was its last", i + 1, shown()),
                        ));
                    }
                }
                Some("device_runtime") if from_kill && !lane_faults => out.push(v(
                    "kill from outside blamed on the case",
                    format!(
                        "{id} attempt {} crashed with class device_runtime in the lane chaos killed (pid {})",
                        i + 1,
                        shown()
                    ),
                )),
                _ => {}
            }
        }
    }
}

fn counts(report: &Value, cases: &[Value], out: &mut Vec<Violation>) {
    let summary = report.get("summary").unwrap_or(&Value::Null);
    let n = |k: &str| summary.get(k).and_then(Value::as_u64);
    let Some(total) = n("total") else {
        out.push(v("counts add up", "the summary has no total"));
        return;
    };
    let sum: u64 = OUTCOMES.iter().map(|k| n(k).unwrap_or(0)).sum();
    if sum != total {
        out.push(v(
            "counts add up",
            format!("the six counts add up to {sum}, total is {total}"),
        ));
    }
    if total != cases.len() as u64 {
        out.push(v(
            "counts add up",
            format!("total is {total}, the report has {} cases", cases.len()),
        ));
    }
    for k in OUTCOMES {
        let seen = cases.iter().filter(|c| s(c, "outcome") == Some(k)).count() as u64;
        if n(k) != Some(seen) {
            out.push(v(
                "counts add up",
                format!("summary {k} is {:?}, {seen} case(s) are {k}", n(k)),
            ));
        }
    }
}

fn lost(cases: &[Value], facts: &Facts<'_>, out: &mut Vec<Violation>) {
    let reported: BTreeSet<String> = cases
        .iter()
        .filter_map(|c| s(c, "id"))
        .map(str::to_owned)
        .collect();
    let missing: Vec<&String> = facts.listed.difference(&reported).collect();
    let extra: Vec<&String> = reported.difference(facts.listed).collect();
    if !missing.is_empty() || !extra.is_empty() || reported.len() != cases.len() {
        out.push(v(
            "every selected case has one verdict",
            format!(
                "missing {missing:?}, not selected {extra:?}, {} case entries for {} ids",
                cases.len(),
                reported.len()
            ),
        ));
    }
}

/// Every attempt that failed with a driver code needs a `poisoned` event of its own.
fn refusals(cases: &[Value], health: &[&Value], out: &mut Vec<Violation>) {
    type Key = (Option<u64>, Option<String>, ReportedCode);
    let mut poisoned: Vec<Key> = health
        .iter()
        .filter(|r| s(r, "event") == Some("poisoned"))
        .filter_map(|r| {
            let code = reported_code(r.get("code")?, s(r, "call"))?;
            Some((
                r.get("pid").and_then(Value::as_u64),
                s(r, "case").map(str::to_owned),
                code,
            ))
        })
        .collect();
    let mut unmatched: Vec<(String, usize, Key)> = Vec::new();
    for c in cases {
        let id = s(c, "id").unwrap_or("?");
        for (i, a) in arr(c, "attempts").iter().enumerate() {
            let Some(e) = a.get("error") else { continue };
            if s(e, "class") != Some("device_runtime") {
                continue;
            }
            let Some(code) = e.get("code").and_then(|x| reported_code(x, s(e, "call"))) else {
                continue;
            };
            let key = (a.get("pid").and_then(Value::as_u64), Some(id.to_owned()), code);
            if let Some(p) = poisoned.iter().position(|k| *k == key) {
                poisoned.swap_remove(p);
            } else {
                unmatched.push((id.to_owned(), i + 1, key));
            }
        }
    }
    // A poisoned event that names no case can still be an attempt's own (same lane, same code).
    for (id, attempt, (pid, _, code)) in unmatched {
        if let Some(p) = poisoned
            .iter()
            .position(|k| k.0 == pid && k.1.is_none() && k.2 == code)
        {
            poisoned.swap_remove(p);
            continue;
        }
        out.push(v(
            "Unusable refusal (cascade)",
            format!(
                "{id} attempt {attempt} failed with {:?} {} in lane pid {} with no poisoning of its own",
                code.space,
                code.raw,
                pid.map_or_else(|| "?".to_owned(), |p| p.to_string())
            ),
        ));
    }
}

/// The verdicts' exit status, and under `--faults-must-fire` (every chaos run has it) 1 for a
/// run whose verdicts pass but whose report lists an unfired rule (`any_unfired`).
fn exit_status(
    report: &Value,
    cases: &[Value],
    exit: Option<i32>,
    any_unfired: bool,
    out: &mut Vec<Violation>,
) {
    let flaky_fails = s(report, "flaky_result") == Some("fail");
    let failing = cases.iter().any(|c| match s(c, "outcome") {
        Some("failed" | "timed_out" | "crashed") => true,
        Some("flaky") => flaky_fails,
        _ => false,
    });
    let want = i32::from(failing || any_unfired);
    if exit != Some(want) {
        out.push(v(
            "exit status matches the verdicts",
            format!(
                "exit {}, the verdicts (and faults_unfired under --faults-must-fire) say {want}",
                exit.map_or_else(|| "by a signal".to_owned(), |c| c.to_string())
            ),
        ));
    }
}
