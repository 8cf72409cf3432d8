//! The public vocabulary of a run's events: one line of `journal.jsonl` each, as it happens, and
//! the lane and worker facts they carry.
//!
//! This file owns the journal's event names and fields (nextest's `reporter/events.rs` shape:
//! every reporter is fed the same events). It never decides anything: the dispatcher emits the
//! events, the builder folds them into the report.

use std::fmt;

use platform_common::driver::DeviceId;
use platform_common::Arch;
use serde::{Deserialize, Serialize};

use super::attempt::ErrorReport;
use super::health::HealthRecord;
use super::outcome::AttemptOutcome;
use super::output::AttemptOutput;
use super::run::{Interruption, Platform, Summary, UnfiredFault};

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

/// Which part of a class fixture a journal `fixture` event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FixturePart {
    /// The host data (built once per lane).
    Host,
    /// The device resources (built once per worker: again after a worker is rebuilt).
    Device,
}

impl FixturePart {
    /// The name as the journal spells it.
    pub fn name(self) -> &'static str {
        match self {
            FixturePart::Host => "host",
            FixturePart::Device => "device",
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
        /// What the lane wrote during a failed attempt (flat: `stdout`, `stderr`, ...).
        #[serde(flatten)]
        output: AttemptOutput,
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
        /// For `built`: how long the init took, from the lane's `init_started` to its
        /// `init_done` as the dispatcher read them (switching runtimes includes closing the
        /// previous worker).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        init_ms: Option<u64>,
    },
    /// A class fixture's setup ran in a lane (journal only): built, or failed with `error`.
    Fixture {
        /// When.
        at_ms: u64,
        /// The card.
        device: DeviceId,
        /// The lane process.
        pid: u32,
        /// The class.
        class: String,
        /// Host data or device resources.
        part: FixturePart,
        /// The case it ran for.
        case: String,
        /// Why it failed; absent when it was built.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A signal interrupted the run: no more work is handed out, every lane is ended, and every
    /// case without a verdict is skipped.
    RunInterrupted {
        /// When.
        at_ms: u64,
        /// Which signal.
        signal: Interruption,
    },
    /// The fault plan's rules that did not fire by the end of the run (written once, before
    /// `run_finished`, when any did not).
    FaultsUnfired {
        /// When.
        at_ms: u64,
        /// The rules, per card.
        unfired: Vec<UnfiredFault>,
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
            | Event::Fixture { at_ms, .. }
            | Event::RunInterrupted { at_ms, .. }
            | Event::FaultsUnfired { at_ms, .. }
            | Event::RunFinished { at_ms, .. } => *at_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_finished_attempt_carries_its_output_flat_and_reads_back() {
        let e = Event::CaseFinished {
            at_ms: 5,
            id: "A::x".into(),
            device: 0,
            pid: 9,
            attempt: 1,
            outcome: AttemptOutcome::Crashed,
            duration_ms: 4,
            error: None,
            output: AttemptOutput {
                stdout: Some("out".into()),
                stderr_dropped_bytes: 3,
                stderr: Some("err".into()),
                ..AttemptOutput::default()
            },
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["event"], "case_finished");
        assert_eq!(v["stdout"], "out");
        assert_eq!(v["stderr_dropped_bytes"], 3);
        assert!(v.get("stdout_dropped_bytes").is_none());
        assert_eq!(serde_json::from_value::<Event>(v).unwrap(), e);
        // A journal line from before the capture reads back with no output.
        let old = r#"{"event":"case_finished","at_ms":1,"id":"A::x","device":0,"pid":2,"attempt":1,
                      "outcome":"passed","duration_ms":1,"error":null}"#;
        let Event::CaseFinished { output, .. } = serde_json::from_str(old).unwrap() else {
            panic!("case_finished");
        };
        assert!(output.is_empty());
    }
}
