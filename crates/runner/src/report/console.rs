//! The console: one live progress bar per lane while the run goes, and the closing summary for
//! people when it ends.
//!
//! This module owns what a person sees on the terminal. The bars draw on stderr and are hidden under
//! `--no-progress` or when stderr is not a terminal (they still track their state, so nothing else
//! changes). The summary is plain text: the counts, the flaky cases, the failed cases with their
//! errors, the skipped cases with their reasons, and per card its health events in order. It never
//! writes a file and never derives a verdict.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use platform_common::driver::DeviceId;
use platform_common::error::CodeSpace;
use platform_common::health::HealthEventKind;
use platform_common::Code;

use super::model::{
    Attempt, AttemptOutcome, CardEvent, CaseReport, Event, HealthRecord, Outcome, RunReport, RunnerEventKind,
};

/// The bars being drawn, if any: log lines are written around them ([`LogWriter`]).
static DRAWN: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Standard error for log lines that keeps drawn progress bars intact: while bars are on screen
/// a line is written with the bars suspended, so it never lands inside them.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let drawn = DRAWN.lock().ok().and_then(|g| g.clone());
        match drawn {
            Some(multi) => multi
                .suspend(|| std::io::stderr().write_all(buf))
                .map(|()| buf.len()),
            None => std::io::stderr().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Live progress: an overall bar over the selected cases and one bar per lane (card).
#[derive(Debug)]
pub struct Progress {
    multi: MultiProgress,
    overall: ProgressBar,
    lanes: BTreeMap<DeviceId, ProgressBar>,
    settled: HashSet<String>,
    failed_attempts: u64,
}

impl Progress {
    /// Bars for `devices` over `total_cases` cases. Drawn on stderr only when `show` is true and
    /// stderr is a terminal; hidden otherwise.
    pub fn new(devices: &[DeviceId], total_cases: u64, show: bool) -> Self {
        if !(show && std::io::stderr().is_terminal()) {
            return Self::hidden(devices, total_cases);
        }
        let progress = Self::with_target(devices, total_cases, ProgressDrawTarget::stderr());
        if let Ok(mut drawn) = DRAWN.lock() {
            *drawn = Some(progress.multi.clone());
        }
        progress
    }

    /// Bars that never draw (for tests and `--no-progress`).
    pub fn hidden(devices: &[DeviceId], total_cases: u64) -> Self {
        Self::with_target(devices, total_cases, ProgressDrawTarget::hidden())
    }

    fn with_target(devices: &[DeviceId], total_cases: u64, target: ProgressDrawTarget) -> Self {
        let multi = MultiProgress::with_draw_target(target);
        let overall = multi.add(ProgressBar::new(total_cases).with_style(style(
            "{prefix:>8} [{bar:30}] {pos}/{len} cases {elapsed:>4} {wide_msg}",
        )));
        overall.set_prefix("run");
        let mut lanes = BTreeMap::new();
        for d in devices {
            let bar = multi.add(
                ProgressBar::new_spinner()
                    .with_style(style("{prefix:>8} {spinner} {pos:>5} attempts  {wide_msg}")),
            );
            bar.set_prefix(format!("card {d}"));
            bar.set_message("waiting for its lane");
            lanes.insert(*d, bar);
        }
        if !multi.is_hidden() {
            overall.enable_steady_tick(Duration::from_millis(100));
        }
        Self {
            multi,
            overall,
            lanes,
            settled: HashSet::new(),
            failed_attempts: 0,
        }
    }

    /// Adds `n` cases to the overall bar's length.
    pub fn grow(&self, n: u64) {
        self.overall.inc_length(n);
    }

    /// Whether the bars are drawn.
    pub fn is_hidden(&self) -> bool {
        self.multi.is_hidden()
    }

    /// The current message of a lane's bar (what the lane is doing).
    pub fn lane_message(&self, device: DeviceId) -> Option<String> {
        self.lanes.get(&device).map(ProgressBar::message)
    }

    /// Attempts a lane has finished.
    pub fn lane_attempts(&self, device: DeviceId) -> Option<u64> {
        self.lanes.get(&device).map(ProgressBar::position)
    }

    /// Cases that have finished an attempt, been skipped or abandoned.
    pub fn cases_seen(&self) -> u64 {
        self.overall.position()
    }

    fn lane(&mut self, device: DeviceId) -> &ProgressBar {
        let multi = &self.multi;
        self.lanes.entry(device).or_insert_with(|| {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_prefix(format!("card {device}"));
            bar
        })
    }

    fn settle(&mut self, id: &str) {
        if self.settled.insert(id.to_owned()) {
            self.overall.inc(1);
        }
    }

    /// Updates the bars for one event.
    pub fn on_event(&mut self, event: &Event) {
        match event {
            Event::LaneStarted { device, pid, .. } => {
                self.lane(*device).set_message(format!("lane pid {pid} started"));
            }
            Event::CaseStarted {
                id, device, attempt, ..
            } => {
                let msg = if *attempt > 1 {
                    format!("{id} (attempt {attempt})")
                } else {
                    id.clone()
                };
                self.lane(*device).set_message(msg);
            }
            Event::CaseFinished {
                id, device, outcome, ..
            } => {
                let bar = self.lane(*device).clone();
                bar.inc(1);
                if *outcome != AttemptOutcome::Passed {
                    bar.set_message(format!("{id}: {outcome}"));
                }
                if outcome.is_failure() {
                    self.failed_attempts += 1;
                    self.overall
                        .set_message(format!("{} failed attempt(s)", self.failed_attempts));
                }
                self.settle(id);
            }
            Event::CaseSkipped { id, .. } | Event::CaseAbandoned { id, .. } => self.settle(id),
            Event::Health { device, record, .. } => {
                let text = health_step(record);
                let bar = self.lane(*device);
                if record.is_quarantine() {
                    bar.abandon_with_message(text);
                } else {
                    bar.set_message(text);
                }
            }
            Event::LaneExited {
                device, pid, status, ..
            } => {
                self.lane(*device)
                    .set_message(format!("lane pid {pid} ended ({status})"));
            }
            Event::SinkRead {
                device, selectors, ..
            } => {
                let n = selectors.len();
                self.lane(*device)
                    .set_message(format!("{n} selector(s) from the poison sink"));
            }
            Event::RunInterrupted { signal, .. } => {
                self.overall
                    .set_message(format!("{signal}: ending every lane, then the reports"));
            }
            Event::RunStarted { .. }
            | Event::RetryScheduled { .. }
            | Event::Worker { .. }
            | Event::Fixture { .. }
            | Event::RunFinished { .. } => {}
        }
    }

    /// Clears the bars (before the summary is printed).
    pub fn finish(&self) {
        // Erase what is on screen first, then stop drawing: finishing bar by bar redraws the rest
        // and can leave stale lines above the summary.
        if let Ok(mut drawn) = DRAWN.lock() {
            *drawn = None;
        }
        let _ = self.multi.clear();
        self.multi.set_draw_target(ProgressDrawTarget::hidden());
        for bar in self.lanes.values() {
            bar.finish_and_clear();
        }
        self.overall.finish_and_clear();
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// Seconds with one decimal, as the summary shows times.
fn secs(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// A code as the story shows it: an ACL code by its number (`507000`), a code of another space
/// with its space (`HAL rc 62`, `loader error 1`), so the two never look alike.
pub fn short_code(code: Code) -> String {
    match code.space {
        CodeSpace::Acl => code.raw.to_string(),
        CodeSpace::Hal => format!("HAL rc {}", code.raw),
        CodeSpace::Loader => format!("loader error {}", code.raw),
    }
}

/// One health event, as a step of a card's story.
pub fn health_step(r: &HealthRecord) -> String {
    let at = secs(r.at_ms);
    match &r.event {
        CardEvent::Device(e) => match &e.kind {
            HealthEventKind::Poisoned => {
                let mut s = "poisoned".to_owned();
                if let Some(code) = e.code {
                    let _ = write!(s, " by {}", short_code(code));
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

fn attempt_line(case: &CaseReport, a: &Attempt) -> String {
    let mut s = format!(
        "{} {} after {} ms",
        attempt_where(case, a),
        a.outcome,
        a.duration_ms
    );
    if let Some(e) = &a.error {
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
                let _ = writeln!(out, "      {}", attempt_line(c, a));
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
                let _ = writeln!(out, "      {}", attempt_line(c, a));
            }
        }
    }
    let failed: Vec<&CaseReport> = report.cases.iter().filter(|c| c.outcome.is_failure()).collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "failed:");
        for c in failed {
            let _ = writeln!(out, "  {} ({}, {} attempt(s))", c.id, c.outcome, c.attempts.len());
            for a in &c.attempts {
                let _ = writeln!(out, "      {}", attempt_line(c, a));
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
    let _ = writeln!(out, "cards:");
    for key in card_keys(report) {
        let records = &report.devices_health[key];
        let story = health_story(records);
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

    use platform_common::driver::DriverCall;
    use platform_common::error::codes;
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
        assert_eq!(health_step(&p), "poisoned by 507000 in Class::case at 3.2 s");
        let hal = poisoned(3200, codes::HAL_RES_MAP_REFUSED, None);
        assert_eq!(health_step(&hal), "poisoned by HAL rc 62 at 3.2 s");
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
                "poisoned by 507000 in Class::case at 3.2 s -> force reset (attempt 1, rc 0, 41 ms) -> probe ok \
                 -> recovered",
                "poisoned by 207001 at 5.0 s -> reset failed (gone)",
            ]
        );
    }
}
