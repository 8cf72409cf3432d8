//! The report's data model: what `report.json` holds, the journal's events, and how a case's final
//! outcome and the run's summary are derived from stored attempts.
//!
//! This module owns the schema (issue 4, `report.json`) and the derivation rules. It never renders
//! anything and never touches the file system: the writers in the sibling modules do that.
//!
//! Following nextest, a case stores every attempt and its verdict is *computed* from them
//! ([`verdict`]); the run summary is computed from the cases ([`Summary::from_cases`]). The
//! dispatcher feeds [`RunBuilder`] (directly or through [`Event`]s) and calls [`RunBuilder::finish`].

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use platform_common::driver::{DeviceId, DriverInfo};
use platform_common::{Arch, DriverError, FailureClass};
use serde::{Deserialize, Serialize};

/// Which cards a run used: simulated or real.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// Simulated cards.
    Sim,
    /// Real cards through CANN.
    Onboard,
}

impl Platform {
    /// The name as the CLI and the report spell it.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Sim => "sim",
            Platform::Onboard => "onboard",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a flaky case (passed after a failed attempt) counts as: `--flaky-result pass|fail`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlakyResult {
    /// A flaky case is reported `flaky` and does not fail the run (the default).
    #[default]
    Pass,
    /// A flaky case is reported `failed`.
    Fail,
}

/// A case's final verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The first attempt passed.
    Passed,
    /// The last attempt failed (error or golden mismatch).
    Failed,
    /// The last attempt passed after at least one failed attempt.
    Flaky,
    /// The case was selected but could not run, for a stated reason.
    Skipped,
    /// The last attempt exceeded the case timeout.
    TimedOut,
    /// The last attempt's lane process died.
    Crashed,
}

impl Outcome {
    /// Every outcome, in summary order.
    pub const ALL: [Outcome; 6] = [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Flaky,
        Outcome::Skipped,
        Outcome::TimedOut,
        Outcome::Crashed,
    ];

    /// The name as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Flaky => "flaky",
            Outcome::Skipped => "skipped",
            Outcome::TimedOut => "timed_out",
            Outcome::Crashed => "crashed",
        }
    }

    /// Whether this verdict makes the run exit 1.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::TimedOut | Outcome::Crashed)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The outcome of one attempt of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// The case ran and matched its golden.
    Passed,
    /// The case returned an error or a golden mismatch.
    Failed,
    /// The case exceeded `--case-timeout`; its lane was killed.
    TimedOut,
    /// The lane process died while running the case.
    Crashed,
    /// The lane declined to run the case, for a stated reason (never retried).
    Skipped,
}

impl AttemptOutcome {
    /// The name as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            AttemptOutcome::Passed => "passed",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::TimedOut => "timed_out",
            AttemptOutcome::Crashed => "crashed",
            AttemptOutcome::Skipped => "skipped",
        }
    }

    /// Failed, timed out or crashed.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            AttemptOutcome::Failed | AttemptOutcome::TimedOut | AttemptOutcome::Crashed
        )
    }
}

impl fmt::Display for AttemptOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an attempt failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReport {
    /// `device_runtime`, `result`, `infrastructure` or `usage`.
    pub class: FailureClass,
    /// The driver call that failed (e.g. `aclrtSynchronizeStreamWithTimeout`), when a call failed.
    pub call: Option<String>,
    /// The raw code, when a call failed.
    pub code: Option<i32>,
    /// The code's symbolic name, when known.
    pub name: Option<String>,
    /// A message for people.
    pub message: String,
}

impl ErrorReport {
    /// An error with no driver call behind it (golden mismatch, lane crash, timeout, ...).
    pub fn new(class: FailureClass, message: impl Into<String>) -> Self {
        Self {
            class,
            call: None,
            code: None,
            name: None,
            message: message.into(),
        }
    }

    /// A failed driver call; the class follows from its code.
    pub fn from_driver(err: &DriverError, message: impl Into<String>) -> Self {
        Self {
            class: err.class(),
            call: Some(err.call.name().to_owned()),
            code: Some(err.code.raw),
            name: Some(err.code.name().to_owned()),
            message: message.into(),
        }
    }
}

impl fmt::Display for ErrorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] ", self.class)?;
        if let Some(call) = &self.call {
            write!(f, "{call}: ")?;
        }
        if let Some(code) = self.code {
            match &self.name {
                Some(name) => write!(f, "{code} ({name}): ")?,
                None => write!(f, "{code}: ")?,
            }
        }
        f.write_str(&self.message)
    }
}

/// One attempt of a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// The card it ran on; `null` when the case never reached a card (every card quarantined).
    pub device: Option<DeviceId>,
    /// The lane process that ran it; `null` when it never reached a lane.
    pub pid: Option<u32>,
    /// What happened.
    pub outcome: AttemptOutcome,
    /// Wall time of the attempt.
    pub duration_ms: u64,
    /// When it started, in ms since the run started (for the timeline).
    #[serde(default)]
    pub started_ms: u64,
    /// Why it failed; `null` when it passed.
    pub error: Option<ErrorReport>,
}

/// One selected case and everything that happened to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseReport {
    /// `Class::case`.
    pub id: String,
    /// The class.
    pub class: String,
    /// The runtime it runs under.
    pub runtime: String,
    /// The final verdict, derived from `attempts` and `skip_reason` by [`verdict`].
    pub outcome: Outcome,
    /// Why it was skipped; `null` unless skipped.
    pub skip_reason: Option<String>,
    /// Every attempt, in order.
    pub attempts: Vec<Attempt>,
}

impl CaseReport {
    /// The case's name after `Class::`.
    pub fn name(&self) -> &str {
        self.id
            .strip_prefix(&self.class)
            .and_then(|s| s.strip_prefix("::"))
            .unwrap_or(&self.id)
    }
}

/// The six outcome counts and their total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of cases; the six counts add up to it.
    pub total: u64,
    /// Cases `passed`.
    pub passed: u64,
    /// Cases `failed`.
    pub failed: u64,
    /// Cases `flaky`.
    pub flaky: u64,
    /// Cases `skipped`.
    pub skipped: u64,
    /// Cases `timed_out`.
    pub timed_out: u64,
    /// Cases `crashed`.
    pub crashed: u64,
}

impl Summary {
    /// Counts the cases' outcomes.
    pub fn from_cases(cases: &[CaseReport]) -> Self {
        let mut s = Summary::default();
        for c in cases {
            s.add(c.outcome);
        }
        s
    }

    /// Counts one more case.
    pub fn add(&mut self, outcome: Outcome) {
        self.total += 1;
        *self.count_mut(outcome) += 1;
    }

    /// The count of one outcome.
    pub fn count(&self, outcome: Outcome) -> u64 {
        match outcome {
            Outcome::Passed => self.passed,
            Outcome::Failed => self.failed,
            Outcome::Flaky => self.flaky,
            Outcome::Skipped => self.skipped,
            Outcome::TimedOut => self.timed_out,
            Outcome::Crashed => self.crashed,
        }
    }

    fn count_mut(&mut self, outcome: Outcome) -> &mut u64 {
        match outcome {
            Outcome::Passed => &mut self.passed,
            Outcome::Failed => &mut self.failed,
            Outcome::Flaky => &mut self.flaky,
            Outcome::Skipped => &mut self.skipped,
            Outcome::TimedOut => &mut self.timed_out,
            Outcome::Crashed => &mut self.crashed,
        }
    }

    /// Whether the six counts add up to `total`.
    pub fn is_consistent(&self) -> bool {
        Outcome::ALL.iter().map(|o| self.count(*o)).sum::<u64>() == self.total
    }

    /// Whether any verdict is failed, timed out or crashed (exit status 1).
    pub fn has_failures(&self) -> bool {
        self.failed + self.timed_out + self.crashed > 0
    }
}

/// The kinds of health event of one card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthKind {
    /// A device error poisoned the card's context (code, case).
    Poisoned,
    /// The runner was marked unusable; later admissions are refused.
    MarkedUnusable,
    /// One `aclrtResetDeviceForce` attempt (attempt, rc, duration_ms).
    ForceReset,
    /// The post-reset probe (ok).
    Probe,
    /// The card is healthy again in the same process.
    Recovered,
    /// Every force-reset attempt, or its probe, failed.
    ResetFailed,
    /// A replacement lane process started on the card.
    FreshProcess,
    /// The card was taken out of the run.
    Quarantined,
    /// Initialising the card failed (a card event, not a case attempt).
    InitFailed,
}

impl HealthKind {
    /// The name as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            HealthKind::Poisoned => "poisoned",
            HealthKind::MarkedUnusable => "marked_unusable",
            HealthKind::ForceReset => "force_reset",
            HealthKind::Probe => "probe",
            HealthKind::Recovered => "recovered",
            HealthKind::ResetFailed => "reset_failed",
            HealthKind::FreshProcess => "fresh_process",
            HealthKind::Quarantined => "quarantined",
            HealthKind::InitFailed => "init_failed",
        }
    }
}

impl fmt::Display for HealthKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One health event of a card. Fields beyond `event` and `at_ms` are present when they apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthRecord {
    /// What happened.
    pub event: HealthKind,
    /// When, in ms since the run started.
    pub at_ms: u64,
    /// The raw code involved (poisoned, init_failed, reset_failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// The driver call involved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The case running when it happened (`Class::case`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// The lane process it happened in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Force-reset attempt number, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// Force-reset return code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rc: Option<i32>,
    /// Duration of the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Probe result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// Free text for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl HealthRecord {
    /// A record of `event` at `at_ms` with no other field; chain the `with_*` setters.
    pub fn new(event: HealthKind, at_ms: u64) -> Self {
        Self {
            event,
            at_ms,
            code: None,
            call: None,
            case: None,
            pid: None,
            attempt: None,
            rc: None,
            duration_ms: None,
            ok: None,
            detail: None,
        }
    }

    /// `poisoned` by `code` during `case`.
    pub fn poisoned(at_ms: u64, code: i32, case: Option<&str>) -> Self {
        Self {
            code: Some(code),
            case: case.map(str::to_owned),
            ..Self::new(HealthKind::Poisoned, at_ms)
        }
    }

    /// One `force_reset` attempt.
    pub fn force_reset(at_ms: u64, attempt: u32, rc: i32, duration_ms: u64) -> Self {
        Self {
            attempt: Some(attempt),
            rc: Some(rc),
            duration_ms: Some(duration_ms),
            ..Self::new(HealthKind::ForceReset, at_ms)
        }
    }

    /// The post-reset `probe`.
    pub fn probe(at_ms: u64, ok: bool) -> Self {
        Self {
            ok: Some(ok),
            ..Self::new(HealthKind::Probe, at_ms)
        }
    }

    /// Sets `code`.
    pub fn with_code(mut self, code: i32) -> Self {
        self.code = Some(code);
        self
    }

    /// Sets `call`.
    pub fn with_call(mut self, call: impl Into<String>) -> Self {
        self.call = Some(call.into());
        self
    }

    /// Sets `case`.
    pub fn with_case(mut self, case: impl Into<String>) -> Self {
        self.case = Some(case.into());
        self
    }

    /// Sets `pid`.
    pub fn with_pid(mut self, pid: u32) -> Self {
        self.pid = Some(pid);
        self
    }

    /// Sets `duration_ms`.
    pub fn with_duration_ms(mut self, duration_ms: u64) -> Self {
        self.duration_ms = Some(duration_ms);
        self
    }

    /// Sets `detail`.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// The driver a run used, as the report shows it.
pub type DriverReport = DriverInfo;

/// One partition joined into a merged report (empty for a single run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionReport {
    /// The partition's run id.
    pub run_id: String,
    /// The directory its report was read from.
    pub source: String,
    /// Its cards.
    pub devices: Vec<DeviceId>,
    /// When it started.
    pub started_at: String,
    /// Its wall time.
    pub duration_ms: u64,
    /// Its own summary.
    pub summary: Summary,
}

/// `report.json`: one run (or several merged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunReport {
    /// `a5` or `a2a3`.
    pub arch: Arch,
    /// `sim` or `onboard`.
    pub platform: Platform,
    /// Which driver and which library.
    pub driver: DriverReport,
    /// The cards the run held.
    pub devices: Vec<DeviceId>,
    /// The run's id (also the default report directory's name).
    #[serde(default)]
    pub run_id: String,
    /// Start time, RFC 3339 UTC.
    #[serde(default)]
    pub started_at: String,
    /// Wall time of the whole run.
    #[serde(default)]
    pub duration_ms: u64,
    /// What a flaky case counted as.
    #[serde(default)]
    pub flaky_result: FlakyResult,
    /// The six counts and their total, derived from `cases`.
    pub summary: Summary,
    /// Every selected case, in selection order.
    pub cases: Vec<CaseReport>,
    /// Per card (key: the card number, or `<run_id>/<card>` in a merged report), its health events
    /// in order.
    pub devices_health: BTreeMap<String, Vec<HealthRecord>>,
    /// The partitions a merged report joined; absent for a single run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionReport>,
}

impl RunReport {
    /// Exit status the run's verdicts call for: 0 when every verdict is passed, flaky or skipped,
    /// 1 otherwise. (Usage errors, exit 2, never reach a report.)
    pub fn exit_code(&self) -> u8 {
        u8::from(self.summary.has_failures())
    }

    /// Cases with the given outcome, in order.
    pub fn cases_with(&self, outcome: Outcome) -> impl Iterator<Item = &CaseReport> {
        self.cases.iter().filter(move |c| c.outcome == outcome)
    }

    /// Recomputes every case's outcome from its attempts and the summary from the cases.
    pub fn rederive(&mut self) {
        for c in &mut self.cases {
            c.outcome = verdict(&c.attempts, c.skip_reason.as_deref(), self.flaky_result);
        }
        self.summary = Summary::from_cases(&self.cases);
    }
}

/// Derives a case's final verdict from its attempts (nextest's rule).
///
/// - Skipped attempts are set aside (a lane may decline a case with a reason).
/// - No attempt left: `skipped` when there is a skip reason or a skipped attempt, else `failed`
///   (a selected case never ends without a verdict).
/// - Last attempt passed: `passed` if it was the only one; `flaky` if an earlier one failed (or
///   `failed` under [`FlakyResult::Fail`]).
/// - Last attempt failed, timed out or crashed: that outcome.
pub fn verdict(attempts: &[Attempt], skip_reason: Option<&str>, flaky_result: FlakyResult) -> Outcome {
    let ran: Vec<&Attempt> = attempts
        .iter()
        .filter(|a| a.outcome != AttemptOutcome::Skipped)
        .collect();
    let Some(last) = ran.last() else {
        let any_skipped = attempts.iter().any(|a| a.outcome == AttemptOutcome::Skipped);
        return if skip_reason.is_some() || any_skipped {
            Outcome::Skipped
        } else {
            Outcome::Failed
        };
    };
    match last.outcome {
        AttemptOutcome::Passed => {
            let retried = ran[..ran.len() - 1].iter().any(|a| a.outcome.is_failure());
            match (retried, flaky_result) {
                (false, _) => Outcome::Passed,
                (true, FlakyResult::Pass) => Outcome::Flaky,
                (true, FlakyResult::Fail) => Outcome::Failed,
            }
        }
        AttemptOutcome::Failed => Outcome::Failed,
        AttemptOutcome::TimedOut => Outcome::TimedOut,
        AttemptOutcome::Crashed => Outcome::Crashed,
        AttemptOutcome::Skipped => unreachable!("skipped attempts were filtered out"),
    }
}

/// How a lane process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaneStatus {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signaled(i32),
}

impl LaneStatus {
    /// From a child's exit status.
    pub fn from_exit_status(status: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => LaneStatus::Exited(code),
            (None, Some(sig)) => LaneStatus::Signaled(sig),
            (None, None) => LaneStatus::Exited(-1),
        }
    }
}

impl fmt::Display for LaneStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaneStatus::Exited(c) => write!(f, "exit {c}"),
            LaneStatus::Signaled(s) => write!(f, "signal {s}"),
        }
    }
}

/// A step in a chip worker's life, as a lane reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerAction {
    /// A worker was initialised (pooled, standalone or multi-card).
    Built,
    /// The pooled worker was retired after a device-runtime error (closed = finalize).
    Retired,
    /// A worker was closed for another reason (runtime switch, standalone case, lane end).
    Closed,
}

impl WorkerAction {
    /// The name as the journal spells it.
    pub fn name(self) -> &'static str {
        match self {
            WorkerAction::Built => "built",
            WorkerAction::Retired => "retired",
            WorkerAction::Closed => "closed",
        }
    }
}

/// One line of `journal.jsonl`: everything that happens in a run, as it happens. Serialized as
/// `{"event": "case_started", "at_ms": ..., ...}`; `at_ms` counts from the run's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The dispatcher holds its cards and starts.
    RunStarted {
        /// Always 0.
        at_ms: u64,
        /// The run's id.
        run_id: String,
        /// The arch.
        arch: Arch,
        /// The platform.
        platform: Platform,
        /// The cards held.
        devices: Vec<DeviceId>,
        /// Number of selected cases.
        cases: u64,
    },
    /// A lane process started on a card.
    LaneStarted {
        /// When.
        at_ms: u64,
        /// Its card.
        device: DeviceId,
        /// Its pid.
        pid: u32,
    },
    /// An attempt of a case started.
    CaseStarted {
        /// When.
        at_ms: u64,
        /// `Class::case`.
        id: String,
        /// The card.
        device: DeviceId,
        /// Attempt number, from 1.
        attempt: u32,
    },
    /// An attempt of a case ended.
    CaseFinished {
        /// When.
        at_ms: u64,
        /// `Class::case`.
        id: String,
        /// The card.
        device: DeviceId,
        /// The lane process.
        pid: u32,
        /// Attempt number, from 1.
        attempt: u32,
        /// What happened.
        outcome: AttemptOutcome,
        /// Wall time of the attempt.
        duration_ms: u64,
        /// Why it failed.
        error: Option<ErrorReport>,
    },
    /// A selected case will not run, for a stated reason.
    CaseSkipped {
        /// When.
        at_ms: u64,
        /// `Class::case`.
        id: String,
        /// Why.
        reason: String,
    },
    /// A case could not reach any card (every card quarantined): it ends `failed`, class
    /// infrastructure.
    CaseAbandoned {
        /// When.
        at_ms: u64,
        /// `Class::case`.
        id: String,
        /// Why.
        reason: String,
    },
    /// A case will be attempted again.
    RetryScheduled {
        /// When.
        at_ms: u64,
        /// `Class::case`.
        id: String,
        /// Why.
        reason: String,
    },
    /// A health event of a card.
    Health {
        /// When (same as `record.at_ms`).
        at_ms: u64,
        /// The card.
        device: DeviceId,
        /// What happened.
        record: HealthRecord,
    },
    /// A lane process ended.
    LaneExited {
        /// When.
        at_ms: u64,
        /// Its card.
        device: DeviceId,
        /// Its pid.
        pid: u32,
        /// How it ended.
        status: LaneStatus,
    },
    /// The dispatcher read a lane's poison sink.
    SinkRead {
        /// When.
        at_ms: u64,
        /// The lane's card.
        device: DeviceId,
        /// The selectors it held, deduplicated, in order.
        selectors: Vec<String>,
        /// The 1-based numbers of lines that were not a record and were skipped (with a warning).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        malformed_lines: Vec<usize>,
    },
    /// A chip worker's lifecycle step in a lane (journal only).
    Worker {
        /// When.
        at_ms: u64,
        /// The card.
        device: DeviceId,
        /// The lane process.
        pid: u32,
        /// The worker's runtime.
        runtime: String,
        /// What happened to it.
        action: WorkerAction,
    },
    /// Every case has a verdict.
    RunFinished {
        /// When.
        at_ms: u64,
        /// The final counts.
        summary: Summary,
    },
}

impl Event {
    /// When the event happened, in ms since the run started.
    pub fn at_ms(&self) -> u64 {
        match self {
            Event::RunStarted { at_ms, .. }
            | Event::LaneStarted { at_ms, .. }
            | Event::CaseStarted { at_ms, .. }
            | Event::CaseFinished { at_ms, .. }
            | Event::CaseSkipped { at_ms, .. }
            | Event::CaseAbandoned { at_ms, .. }
            | Event::RetryScheduled { at_ms, .. }
            | Event::Health { at_ms, .. }
            | Event::LaneExited { at_ms, .. }
            | Event::SinkRead { at_ms, .. }
            | Event::Worker { at_ms, .. }
            | Event::RunFinished { at_ms, .. } => *at_ms,
        }
    }
}

/// A report was fed something inconsistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// An attempt, skip or abandon named a case that was never added.
    #[error("unknown case {0:?}: it was not selected for this run")]
    UnknownCase(String),
    /// The same case was added twice.
    #[error("case {0:?} was added twice")]
    DuplicateCase(String),
}

/// The run's identity and setting, known when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// The arch.
    pub arch: Arch,
    /// The platform.
    pub platform: Platform,
    /// The driver.
    pub driver: DriverReport,
    /// The cards held.
    pub devices: Vec<DeviceId>,
    /// The run's id.
    pub run_id: String,
    /// Start time, RFC 3339 UTC (see [`rfc3339_utc`]).
    pub started_at: String,
}

/// Collects a run's cases, attempts and health events, and derives the report at the end.
///
/// Add every selected case first ([`add_case`](Self::add_case)), then push attempts, skips and
/// health events as they happen, either directly or by [`apply`](Self::apply)ing the journal's
/// [`Event`]s. Each `CaseStarted` event's time becomes the following attempt's `started_ms`.
#[derive(Debug)]
pub struct RunBuilder {
    info: RunInfo,
    cases: Vec<Pending>,
    index: HashMap<String, usize>,
    health: BTreeMap<DeviceId, Vec<HealthRecord>>,
    started: HashMap<(String, DeviceId), u64>,
}

#[derive(Debug)]
struct Pending {
    id: String,
    class: String,
    runtime: String,
    skip_reason: Option<String>,
    attempts: Vec<Attempt>,
}

impl RunBuilder {
    /// A run with no cases yet. Every device in `info.devices` gets a (possibly empty) health list.
    pub fn new(info: RunInfo) -> Self {
        let health = info.devices.iter().map(|d| (*d, Vec::new())).collect();
        Self {
            info,
            cases: Vec::new(),
            index: HashMap::new(),
            health,
            started: HashMap::new(),
        }
    }

    /// The run's identity.
    pub fn info(&self) -> &RunInfo {
        &self.info
    }

    /// Adds a selected case (`id` is `Class::case`).
    pub fn add_case(&mut self, id: &str, class: &str, runtime: &str) -> Result<(), ModelError> {
        if self.index.contains_key(id) {
            return Err(ModelError::DuplicateCase(id.to_owned()));
        }
        self.index.insert(id.to_owned(), self.cases.len());
        self.cases.push(Pending {
            id: id.to_owned(),
            class: class.to_owned(),
            runtime: runtime.to_owned(),
            skip_reason: None,
            attempts: Vec::new(),
        });
        Ok(())
    }

    fn case_mut(&mut self, id: &str) -> Result<&mut Pending, ModelError> {
        let i = *self
            .index
            .get(id)
            .ok_or_else(|| ModelError::UnknownCase(id.to_owned()))?;
        Ok(&mut self.cases[i])
    }

    /// Records one attempt of a case.
    pub fn push_attempt(&mut self, id: &str, attempt: Attempt) -> Result<(), ModelError> {
        self.case_mut(id)?.attempts.push(attempt);
        Ok(())
    }

    /// Marks a case skipped, with the reason.
    pub fn skip(&mut self, id: &str, reason: &str) -> Result<(), ModelError> {
        self.case_mut(id)?.skip_reason = Some(reason.to_owned());
        Ok(())
    }

    /// Records that a case could not reach any card: an attempt with no card, failed, class
    /// infrastructure, carrying the reason.
    pub fn abandon(&mut self, id: &str, at_ms: u64, reason: &str) -> Result<(), ModelError> {
        self.push_attempt(
            id,
            Attempt {
                device: None,
                pid: None,
                outcome: AttemptOutcome::Failed,
                duration_ms: 0,
                started_ms: at_ms,
                error: Some(ErrorReport::new(FailureClass::Infrastructure, reason)),
            },
        )
    }

    /// Records a health event of a card.
    pub fn push_health(&mut self, device: DeviceId, record: HealthRecord) {
        self.health.entry(device).or_default().push(record);
    }

    /// Folds one journal event into the report. Events that carry nothing for the report (lane
    /// start and exit, retries, sink reads, run start and finish) are accepted and ignored.
    pub fn apply(&mut self, event: &Event) -> Result<(), ModelError> {
        match event {
            Event::CaseStarted {
                at_ms, id, device, ..
            } => {
                self.case_mut(id)?;
                self.started.insert((id.clone(), *device), *at_ms);
            }
            Event::CaseFinished {
                at_ms,
                id,
                device,
                pid,
                outcome,
                duration_ms,
                error,
                ..
            } => {
                let started_ms = self
                    .started
                    .remove(&(id.clone(), *device))
                    .unwrap_or_else(|| at_ms.saturating_sub(*duration_ms));
                self.push_attempt(
                    id,
                    Attempt {
                        device: Some(*device),
                        pid: Some(*pid),
                        outcome: *outcome,
                        duration_ms: *duration_ms,
                        started_ms,
                        error: error.clone(),
                    },
                )?;
            }
            Event::CaseSkipped { id, reason, .. } => self.skip(id, reason)?,
            Event::CaseAbandoned { at_ms, id, reason } => self.abandon(id, *at_ms, reason)?,
            Event::Health { device, record, .. } => self.push_health(*device, record.clone()),
            Event::RunStarted { .. }
            | Event::LaneStarted { .. }
            | Event::RetryScheduled { .. }
            | Event::LaneExited { .. }
            | Event::SinkRead { .. }
            | Event::Worker { .. }
            | Event::RunFinished { .. } => {}
        }
        Ok(())
    }

    /// Derives every verdict and the summary and returns the report.
    pub fn finish(self, duration_ms: u64, flaky_result: FlakyResult) -> RunReport {
        let cases: Vec<CaseReport> = self
            .cases
            .into_iter()
            .map(|p| CaseReport {
                outcome: verdict(&p.attempts, p.skip_reason.as_deref(), flaky_result),
                id: p.id,
                class: p.class,
                runtime: p.runtime,
                skip_reason: p.skip_reason,
                attempts: p.attempts,
            })
            .collect();
        let summary = Summary::from_cases(&cases);
        RunReport {
            arch: self.info.arch,
            platform: self.info.platform,
            driver: self.info.driver,
            devices: self.info.devices,
            run_id: self.info.run_id,
            started_at: self.info.started_at,
            duration_ms,
            flaky_result,
            summary,
            cases,
            devices_health: self.health.into_iter().map(|(d, h)| (d.to_string(), h)).collect(),
            partitions: Vec::new(),
        }
    }
}

/// Formats a time as RFC 3339 UTC with millisecond precision (`2024-05-01T12:00:00.000Z`).
pub fn rfc3339_utc(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::driver::DriverKind;

    fn att(outcome: AttemptOutcome) -> Attempt {
        Attempt {
            device: Some(0),
            pid: Some(10),
            outcome,
            duration_ms: 5,
            started_ms: 0,
            error: outcome
                .is_failure()
                .then(|| ErrorReport::new(FailureClass::DeviceRuntime, "boom")),
        }
    }

    use AttemptOutcome as A;

    #[test]
    fn verdict_single_pass_is_passed() {
        assert_eq!(
            verdict(&[att(A::Passed)], None, FlakyResult::Pass),
            Outcome::Passed
        );
    }

    #[test]
    fn verdict_pass_after_failures_is_flaky() {
        for first in [A::Failed, A::TimedOut, A::Crashed] {
            let a = [att(first), att(A::Passed)];
            assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Flaky, "{first}");
        }
        let a = [att(A::Crashed), att(A::Failed), att(A::Passed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Flaky);
    }

    #[test]
    fn verdict_flaky_counts_as_failed_under_flaky_result_fail() {
        let a = [att(A::Failed), att(A::Passed)];
        assert_eq!(verdict(&a, None, FlakyResult::Fail), Outcome::Failed);
        assert_eq!(
            verdict(&[att(A::Passed)], None, FlakyResult::Fail),
            Outcome::Passed
        );
    }

    #[test]
    fn verdict_all_failed_takes_the_last_attempts_outcome() {
        let a = [att(A::Failed), att(A::Failed), att(A::Failed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Failed);
        let a = [att(A::Failed), att(A::Crashed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Crashed);
        let a = [att(A::Crashed), att(A::TimedOut)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::TimedOut);
        let a = [att(A::TimedOut), att(A::Failed)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Failed);
    }

    #[test]
    fn verdict_skips() {
        assert_eq!(
            verdict(&[], Some("needs 4 cards"), FlakyResult::Pass),
            Outcome::Skipped
        );
        assert_eq!(
            verdict(&[att(A::Skipped)], None, FlakyResult::Pass),
            Outcome::Skipped
        );
        // A skipped attempt does not hide a real one.
        let a = [att(A::Failed), att(A::Skipped)];
        assert_eq!(verdict(&a, None, FlakyResult::Pass), Outcome::Failed);
    }

    #[test]
    fn verdict_without_attempt_or_reason_is_failed() {
        assert_eq!(verdict(&[], None, FlakyResult::Pass), Outcome::Failed);
    }

    fn info() -> RunInfo {
        RunInfo {
            arch: Arch::A5,
            platform: Platform::Sim,
            driver: DriverInfo {
                kind: DriverKind::Sim,
                library: None,
            },
            devices: vec![0, 1],
            run_id: "r1".into(),
            started_at: "2024-01-01T00:00:00.000Z".into(),
        }
    }

    #[test]
    fn builder_summary_adds_up() {
        let mut b = RunBuilder::new(info());
        for id in ["C::p", "C::f", "C::fl", "C::s", "C::t", "C::c", "C::ab"] {
            b.add_case(id, "C", "rt").unwrap();
        }
        b.push_attempt("C::p", att(A::Passed)).unwrap();
        b.push_attempt("C::f", att(A::Failed)).unwrap();
        b.push_attempt("C::fl", att(A::Crashed)).unwrap();
        b.push_attempt("C::fl", att(A::Passed)).unwrap();
        b.skip("C::s", "needs 4 cards").unwrap();
        b.push_attempt("C::t", att(A::TimedOut)).unwrap();
        b.push_attempt("C::c", att(A::Crashed)).unwrap();
        b.abandon("C::ab", 9, "every card quarantined").unwrap();
        let r = b.finish(100, FlakyResult::Pass);
        let s = r.summary;
        assert_eq!(
            (
                s.total,
                s.passed,
                s.failed,
                s.flaky,
                s.skipped,
                s.timed_out,
                s.crashed
            ),
            (7, 1, 2, 1, 1, 1, 1)
        );
        assert!(s.is_consistent());
        assert_eq!(r.exit_code(), 1);
        let ab = r.cases.iter().find(|c| c.id == "C::ab").unwrap();
        assert_eq!(ab.attempts[0].device, None);
        assert_eq!(
            ab.attempts[0].error.as_ref().unwrap().class,
            FailureClass::Infrastructure
        );
        assert_eq!(r.devices_health.keys().collect::<Vec<_>>(), ["0", "1"]);
    }

    #[test]
    fn builder_rejects_unknown_and_duplicate_cases() {
        let mut b = RunBuilder::new(info());
        b.add_case("C::a", "C", "rt").unwrap();
        assert_eq!(
            b.add_case("C::a", "C", "rt"),
            Err(ModelError::DuplicateCase("C::a".into()))
        );
        assert_eq!(
            b.push_attempt("C::zz", att(A::Passed)),
            Err(ModelError::UnknownCase("C::zz".into()))
        );
    }

    #[test]
    fn builder_applies_events_with_start_times() {
        let mut b = RunBuilder::new(info());
        b.add_case("C::a", "C", "rt").unwrap();
        let events = [
            Event::CaseStarted {
                at_ms: 40,
                id: "C::a".into(),
                device: 1,
                attempt: 1,
            },
            Event::Health {
                at_ms: 50,
                device: 1,
                record: HealthRecord::poisoned(50, 507000, Some("C::a")),
            },
            Event::CaseFinished {
                at_ms: 55,
                id: "C::a".into(),
                device: 1,
                pid: 77,
                attempt: 1,
                outcome: A::Failed,
                duration_ms: 15,
                error: Some(ErrorReport::new(FailureClass::DeviceRuntime, "op timeout")),
            },
            Event::CaseStarted {
                at_ms: 90,
                id: "C::a".into(),
                device: 1,
                attempt: 2,
            },
            Event::CaseFinished {
                at_ms: 99,
                id: "C::a".into(),
                device: 1,
                pid: 78,
                attempt: 2,
                outcome: A::Passed,
                duration_ms: 9,
                error: None,
            },
        ];
        for e in &events {
            b.apply(e).unwrap();
        }
        let r = b.finish(120, FlakyResult::Pass);
        let c = &r.cases[0];
        assert_eq!(c.outcome, Outcome::Flaky);
        assert_eq!(
            c.attempts.iter().map(|a| a.started_ms).collect::<Vec<_>>(),
            [40, 90]
        );
        assert_eq!(
            c.attempts.iter().map(|a| a.pid).collect::<Vec<_>>(),
            [Some(77), Some(78)]
        );
        assert_eq!(r.devices_health["1"][0].event, HealthKind::Poisoned);
        assert_eq!(r.devices_health["1"][0].code, Some(507000));
    }

    #[test]
    fn case_name_strips_the_class() {
        let c = CaseReport {
            id: "Cls::one".into(),
            class: "Cls".into(),
            runtime: "rt".into(),
            outcome: Outcome::Passed,
            skip_reason: None,
            attempts: vec![],
        };
        assert_eq!(c.name(), "one");
    }

    #[test]
    fn rfc3339_formats_known_instants() {
        use std::time::Duration;
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(951_827_696_789); // 2000-02-29T12:34:56.789Z
        assert_eq!(rfc3339_utc(t), "2000-02-29T12:34:56.789Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599); // 2024-12-31T23:59:59Z
        assert_eq!(rfc3339_utc(t), "2024-12-31T23:59:59.000Z");
    }

    #[test]
    fn event_serializes_with_event_tag_and_at_ms() {
        let e = Event::LaneExited {
            at_ms: 12,
            device: 1,
            pid: 3,
            status: LaneStatus::Signaled(9),
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["event"], "lane_exited");
        assert_eq!(v["at_ms"], 12);
        assert_eq!(v["status"]["signaled"], 9);
        assert_eq!(e.at_ms(), 12);
    }
}
