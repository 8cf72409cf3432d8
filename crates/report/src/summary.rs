//! The closing summary for people: the counts, the flaky cases, the failed cases with their
//! errors, the skipped cases with their reasons, and per card its health events in order (each
//! step as [`health_step`] tells it, the steps of one card as [`health_story`]).
//!
//! This file owns the text. It is plain (no colour, no terminal), so a tool prints it for any
//! report it read as the run printed it. It never writes a file and never derives a verdict.

use std::fmt::Write as _;

use platform_common::driver::DriverCall;
use platform_common::fault_kind;
use platform_common::health::HealthEventKind;
use platform_common::{Arch, Code};

use crate::model::{
    Attempt, AttemptOutcome, CardEvent, CaseReport, FlakyResult, HealthRecord, Outcome, RunReport,
    RunnerEventKind,
};

/// Seconds with one decimal, as the summary shows times.
fn secs(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// A code as the story shows it: an ACL code by its number (`507000`), a code of another space
/// with its space (`HAL rc 62`, `loader error 1`), so the two never look alike.
pub fn short_code(code: Code) -> String {
    fault_kind::short_code(code)
}

/// A failed call's fault in an operator's words on `arch` (`op-timeout (507000 at stream sync)`).
pub fn fault_words(arch: Arch, call: Option<DriverCall>, code: Code) -> String {
    fault_kind::describe(&cardguard_arches::entry(arch).facts, call, code)
}

/// One health event, as a step of a card's story.
pub fn health_step(r: &HealthRecord) -> String {
    let at = secs(r.at_ms);
    match &r.event {
        CardEvent::Device(e) => match &e.kind {
            HealthEventKind::Poisoned => {
                let mut s = "poisoned".to_owned();
                if let Some(code) = e.code {
                    let _ = write!(s, " by {}", fault_words(e.arch, e.call, code));
                }
                if let Some(case) = &r.case {
                    let _ = write!(s, " in {case}");
                }
                let _ = write!(s, " at {at}");
                s
            }
            HealthEventKind::MarkedUnusable { .. } => "marked unusable".to_owned(),
            HealthEventKind::ForceReset {
                attempt,
                rc,
                duration_ms,
            } => {
                let rc = match (rc, e.code) {
                    (Some(rc), _) => format!("rc {rc}"),
                    (None, Some(code)) => short_code(code),
                    (None, None) => "no rc".to_owned(),
                };
                format!("force reset (attempt {attempt}, {rc}, {duration_ms} ms)")
            }
            HealthEventKind::Probe { ok: true, .. } => "probe ok".to_owned(),
            HealthEventKind::Probe { ok: false, .. } => "probe failed".to_owned(),
            HealthEventKind::Recovered { .. } => "recovered".to_owned(),
            HealthEventKind::ResetFailed { .. } => format!("reset failed ({})", e.detail),
            HealthEventKind::SdmaHandoffWait { wait_ms, .. } => format!("SDMA handoff wait {wait_ms} ms"),
        },
        CardEvent::Runner(ev) => {
            let mut s = match ev.kind {
                RunnerEventKind::FreshProcess => match r.pid {
                    Some(pid) => format!("fresh process (pid {pid}) at {at}"),
                    None => format!("fresh process at {at}"),
                },
                RunnerEventKind::InitFailed => match ev.code {
                    Some(code) => format!("init failed with {} at {at}", short_code(code)),
                    None => format!("init failed at {at}"),
                },
                // Any other runner event: its name and time.
                kind => format!("{} at {at}", kind.name().replace('_', " ")),
            };
            let _ = write!(s, " ({})", ev.detail);
            s
        }
    }
}

/// A card's health events as lines: each poisoning starts a new line, the steps that follow it are
/// joined with `->`.
pub fn health_story(records: &[HealthRecord]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for r in records {
        let step = health_step(r);
        match lines.last_mut() {
            Some(line) if !matches!(r.device_kind(), Some(HealthEventKind::Poisoned)) => {
                line.push_str(" -> ");
                line.push_str(&step);
            }
            _ => lines.push(step),
        }
    }
    lines
}

fn attempt_where(case: &CaseReport, a: &Attempt) -> String {
    let n = case
        .attempts
        .iter()
        .position(|x| std::ptr::eq(x, a))
        .map_or(0, |i| i + 1);
    match a.device {
        Some(d) => format!("attempt {n} on card {d}"),
        None => format!("attempt {n} (no card)"),
    }
}

fn attempt_line(arch: Arch, case: &CaseReport, a: &Attempt) -> String {
    let mut s = format!(
        "{} {} after {} ms",
        attempt_where(case, a),
        a.outcome,
        a.duration_ms
    );
    if let Some(e) = &a.error {
        // The fault's kind first, in an operator's words; then the error as recorded.
        if let Some(code) = e.code {
            let _ = write!(s, ": {}", fault_words(arch, e.call, code));
        }
        let _ = write!(s, ": {e}");
    }
    if let Some(d) = &a.output.diagnostics {
        // A timed-out attempt says where it was stuck, on a line of its own.
        let _ = write!(s, "\n        {}", d.summary());
        if d.stacks.is_some() {
            s.push_str(" (native stacks in report.json)");
        }
    }
    s
}

/// Orders `devices_health` keys numerically where they are card numbers.
fn card_keys(report: &RunReport) -> Vec<&String> {
    let mut keys: Vec<&String> = report.devices_health.keys().collect();
    keys.sort_by_key(|k| (k.parse::<u64>().unwrap_or(u64::MAX), (*k).clone()));
    keys
}

/// The closing summary, for people.
pub fn render_summary(report: &RunReport) -> String {
    let s = &report.summary;
    let mut out = String::new();
    let cards: Vec<String> = report.devices.iter().map(|d| d.to_string()).collect();
    let head = match report.interrupted {
        Some(signal) => format!("INTERRUPTED by {signal}:"),
        None if report.exit_code() == 0 => "PASS".to_owned(),
        None => "FAIL".to_owned(),
    };
    let _ = writeln!(
        out,
        "{} {} case(s) on {} card(s) [{}] in {} ({}, {}): {} passed, {} flaky, {} failed, {} skipped, \
         {} timed out, {} crashed",
        head,
        s.total,
        report.devices.len(),
        cards.join(", "),
        secs(report.duration_ms),
        report.arch.name(),
        report.platform,
        s.passed,
        s.flaky,
        s.failed,
        s.skipped,
        s.timed_out,
        s.crashed,
    );
    let flaky: Vec<&CaseReport> = report.cases_with(Outcome::Flaky).collect();
    if !flaky.is_empty() {
        let _ = writeln!(out, "flaky (passed on a retry):");
        for c in flaky {
            let _ = writeln!(out, "  {}", c.id);
            for a in &c.attempts {
                let _ = writeln!(out, "      {}", attempt_line(report.arch, c, a));
            }
        }
    }
    let killed: Vec<&CaseReport> = report
        .cases_with(Outcome::Passed)
        .filter(|c| c.attempts.iter().any(|a| a.outcome.is_failure()))
        .collect();
    if !killed.is_empty() {
        let _ = writeln!(
            out,
            "passed after an infrastructure kill (a lane killed from outside; not the case's fault):"
        );
        for c in killed {
            let _ = writeln!(out, "  {}", c.id);
            for a in &c.attempts {
                let _ = writeln!(out, "      {}", attempt_line(report.arch, c, a));
            }
        }
    }
    let failed: Vec<&CaseReport> = report.cases.iter().filter(|c| c.outcome.is_failure()).collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "failed:");
        for c in failed {
            // A case that passed on a retry fails only by `--flaky-result fail`: say so, or the
            // passing last attempt below reads as a contradiction.
            let flaky_failed = c.outcome == Outcome::Failed
                && report.flaky_result == FlakyResult::Fail
                && c.attempts
                    .last()
                    .is_some_and(|a| a.outcome == AttemptOutcome::Passed);
            let why = if flaky_failed {
                ": flaky (passed on a retry), counted failed by --flaky-result fail"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {} ({}{why}, {} attempt(s))",
                c.id,
                c.outcome,
                c.attempts.len()
            );
            for a in &c.attempts {
                let _ = writeln!(out, "      {}", attempt_line(report.arch, c, a));
            }
        }
    }
    let skipped: Vec<&CaseReport> = report.cases_with(Outcome::Skipped).collect();
    if !skipped.is_empty() {
        let _ = writeln!(out, "skipped:");
        for c in skipped {
            let _ = writeln!(
                out,
                "  {}: {}",
                c.id,
                c.skip_reason.as_deref().unwrap_or("no reason given")
            );
        }
    }
    if !report.faults_unfired.is_empty() {
        let _ = writeln!(
            out,
            "faults that never fired (the plan did not test what it names):"
        );
        for u in &report.faults_unfired {
            let _ = writeln!(out, "  {} on card {}: {}", u.rule, u.card, u.detail);
        }
    }
    let _ = writeln!(out, "cards:");
    for key in card_keys(report) {
        let records = &report.devices_health[key];
        let story = health_story(records);
        let key = &match report.devices_physical.get(key.as_str()) {
            Some(p) => format!("{key} (physical {p})"),
            None => key.to_string(),
        };
        if story.is_empty() {
            let _ = writeln!(out, "  card {key}: no faults");
        }
        for (i, line) in story.iter().enumerate() {
            if i == 0 {
                let _ = writeln!(out, "  card {key}: {line}");
            } else {
                let _ = writeln!(out, "  {:width$}  {line}", "", width = key.len() + 5);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use platform_common::error::{codes, CodeSpace};
    use platform_common::health::HealthEvent;
    use platform_common::{Arch, DriverError};

    fn dev(at_ms: u64, kind: HealthEventKind, detail: &str) -> HealthRecord {
        HealthRecord::device(at_ms, HealthEvent::new(0, Arch::A5, kind, detail))
    }

    fn poisoned(at_ms: u64, code: Code, case: Option<&str>) -> HealthRecord {
        let call = if code.space == CodeSpace::Hal {
            DriverCall::HalResMap
        } else {
            DriverCall::SynchronizeStreamWithTimeout
        };
        let ev = HealthEvent::new(0, Arch::A5, HealthEventKind::Poisoned, "p")
            .with_error(DriverError::new(call, code));
        HealthRecord::device(at_ms, ev).with_case(case.map(str::to_owned))
    }

    fn reset(at_ms: u64, attempt: u32, rc: i32, duration_ms: u64) -> HealthRecord {
        let kind = HealthEventKind::ForceReset {
            attempt,
            rc: Some(rc),
            duration_ms,
        };
        dev(at_ms, kind, "r")
    }

    #[test]
    fn health_steps_read_as_the_seed_tells_them() {
        let p = poisoned(3200, codes::RT_INTERNAL_ERROR, Some("Class::case"));
        assert_eq!(
            health_step(&p),
            "poisoned by op-timeout (507000 at stream sync) in Class::case at 3.2 s"
        );
        let hal = poisoned(3200, codes::HAL_NO_PROCESS, None);
        assert_eq!(
            health_step(&hal),
            "poisoned by sticky context (HAL rc 62 at register mapping) at 3.2 s"
        );
        assert_eq!(
            health_step(&reset(3300, 1, 0, 41)),
            "force reset (attempt 1, rc 0, 41 ms)"
        );
        let probe = |ok| dev(3341, HealthEventKind::Probe { attempt: 1, ok }, "p");
        assert_eq!(health_step(&probe(true)), "probe ok");
        assert_eq!(health_step(&probe(false)), "probe failed");
        let q = HealthRecord::runner(9000, RunnerEventKind::Quarantined, "dead card");
        assert_eq!(health_step(&q), "quarantined at 9.0 s (dead card)");
        let f = HealthRecord::runner(9000, RunnerEventKind::FreshProcess, "why").with_pid(4);
        assert_eq!(health_step(&f), "fresh process (pid 4) at 9.0 s (why)");
        let i = HealthRecord::runner(700, RunnerEventKind::InitFailed, "dead")
            .with_error(Some(DriverCall::SetDevice), Some(codes::RT_DEV_SETUP_ERROR));
        assert_eq!(health_step(&i), "init failed with 507033 at 0.7 s (dead)");
    }

    #[test]
    fn each_poisoning_starts_a_new_line_of_the_story() {
        let records = [
            poisoned(3200, codes::RT_INTERNAL_ERROR, Some("Class::case")),
            reset(3300, 1, 0, 41),
            dev(3341, HealthEventKind::Probe { attempt: 1, ok: true }, "p"),
            dev(3342, HealthEventKind::Recovered { attempts: 1 }, "r"),
            poisoned(5000, codes::RT_MEMORY_ALLOCATION, None),
            dev(5100, HealthEventKind::ResetFailed { attempts: 3 }, "gone"),
        ];
        assert_eq!(
            health_story(&records),
            [
                "poisoned by op-timeout (507000 at stream sync) in Class::case at 3.2 s -> force reset (attempt 1, rc 0, 41 ms) -> probe ok \
                 -> recovered",
                "poisoned by resource exhausted (207001 at stream sync) at 5.0 s -> reset failed (gone)",
            ]
        );
    }
}
