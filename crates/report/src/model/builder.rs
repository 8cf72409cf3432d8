//! The run builder: collects a run's cases, attempts, skips and health events as they happen (or
//! from the journal's events) and derives the finished report.
//!
//! This file owns the fold from events to [`RunReport`]. It never decides a verdict's inputs (the
//! dispatcher does) and never touches the file system.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use platform_common::driver::DeviceId;
use platform_common::FailureClass;

use super::attempt::{Attempt, CaseReport, ErrorReport};
use super::event::Event;
use super::health::HealthRecord;
use super::outcome::{AttemptOutcome, FlakyResult};
use super::output::AttemptOutput;
use super::run::{Interruption, RunInfo, RunReport, Summary, UnfiredFault};
use super::verdict::verdict;

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

/// Collects a run's cases, attempts and health events, and derives the report at the end.
///
/// Add every selected case first ([`add_case`](Self::add_case)), then push attempts, skips and
/// health events as they happen, either directly or by [`apply`](Self::apply)ing the journal's
/// [`Event`]s. Each `CaseStarted` event's time becomes the following attempt's `started_ms`.
#[derive(Debug)]
pub struct RunBuilder {
    info: RunInfo,
    cases: Vec<Pending>,
    index: FxHashMap<String, usize>,
    health: BTreeMap<DeviceId, Vec<HealthRecord>>,
    /// When each running attempt started: by case (its index in `cases`) and card.
    started: FxHashMap<(usize, DeviceId), u64>,
    /// The case that last started on each card: the one its next `CaseFinished` nearly always
    /// names (a comparison instead of a lookup in the index).
    last_started: FxHashMap<DeviceId, usize>,
    interrupted: Option<Interruption>,
    faults_unfired: Vec<UnfiredFault>,
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
            index: FxHashMap::default(),
            health,
            started: FxHashMap::default(),
            last_started: FxHashMap::default(),
            interrupted: None,
            faults_unfired: Vec::new(),
        }
    }

    /// The run's identity.
    pub fn info(&self) -> &RunInfo {
        &self.info
    }

    /// Makes room for `n` more cases.
    pub fn reserve(&mut self, n: usize) {
        self.cases.reserve(n);
        self.index.reserve(n);
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

    fn index_of(&self, id: &str) -> Result<usize, ModelError> {
        self.index
            .get(id)
            .copied()
            .ok_or_else(|| ModelError::UnknownCase(id.to_owned()))
    }

    fn case_mut(&mut self, id: &str) -> Result<&mut Pending, ModelError> {
        let i = self.index_of(id)?;
        Ok(&mut self.cases[i])
    }

    /// Records one attempt of a case.
    pub fn push_attempt(&mut self, id: &str, attempt: Attempt) -> Result<(), ModelError> {
        let i = self.index_of(id)?;
        self.push_attempt_at(i, attempt);
        Ok(())
    }

    fn push_attempt_at(&mut self, i: usize, attempt: Attempt) {
        let attempts = &mut self.cases[i].attempts;
        // Most cases have one attempt: room for exactly that one, not the four a first push
        // reserves (at 100,000 cases that is most of the dispatcher's memory).
        if attempts.capacity() == 0 {
            attempts.reserve_exact(1);
        }
        attempts.push(attempt);
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
                output: AttemptOutput::default(),
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
                let i = self.index_of(id)?;
                self.started.insert((i, *device), *at_ms);
                self.last_started.insert(*device, i);
            }
            Event::CaseFinished {
                at_ms,
                id,
                device,
                pid,
                outcome,
                duration_ms,
                error,
                output,
                ..
            } => {
                let i = match self.last_started.get(device) {
                    Some(&i) if self.cases[i].id == *id => i,
                    _ => self.index_of(id)?,
                };
                let started_ms = self
                    .started
                    .remove(&(i, *device))
                    .unwrap_or_else(|| at_ms.saturating_sub(*duration_ms));
                self.push_attempt_at(
                    i,
                    Attempt {
                        device: Some(*device),
                        pid: Some(*pid),
                        outcome: *outcome,
                        duration_ms: *duration_ms,
                        started_ms,
                        error: error.clone(),
                        output: output.clone(),
                    },
                );
            }
            Event::CaseSkipped { id, reason, .. } => self.skip(id, reason)?,
            Event::CaseAbandoned { at_ms, id, reason } => self.abandon(id, *at_ms, reason)?,
            Event::Health { device, record, .. } => self.push_health(*device, record.clone()),
            Event::RunInterrupted { signal, .. } => self.interrupted = Some(*signal),
            Event::FaultsUnfired { unfired, .. } => self.faults_unfired.clone_from(unfired),
            Event::RunStarted { .. }
            | Event::LaneStarted { .. }
            | Event::RetryScheduled { .. }
            | Event::LaneExited { .. }
            | Event::SinkRead { .. }
            | Event::Worker { .. }
            | Event::Fixture { .. }
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
            devices_physical: self.info.devices_physical,
            run_id: self.info.run_id,
            started_at: self.info.started_at,
            duration_ms,
            flaky_result,
            summary,
            cases,
            devices_health: self.health.into_iter().map(|(d, h)| (d.to_string(), h)).collect(),
            partitions: Vec::new(),
            interrupted: self.interrupted,
            faults_unfired: self.faults_unfired,
            stress: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::outcome::Outcome;
    use crate::model::run::Platform;
    use platform_common::driver::{DriverCall, DriverInfo, DriverKind};
    use platform_common::error::codes;
    use platform_common::health::{HealthEvent, HealthEventKind};
    use platform_common::{Arch, DriverError};

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
            output: AttemptOutput::default(),
        }
    }

    use AttemptOutcome as A;

    fn info() -> RunInfo {
        RunInfo {
            devices_physical: BTreeMap::new(),
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
                record: HealthRecord::device(
                    50,
                    HealthEvent::new(1, Arch::A5, HealthEventKind::Poisoned, "op timeout").with_error(
                        DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR),
                    ),
                )
                .with_case(Some("C::a".into())),
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
                output: AttemptOutput {
                    stderr: Some("kernel said: bad".into()),
                    ..AttemptOutput::default()
                },
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
                output: AttemptOutput::default(),
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
        assert_eq!(
            c.attempts[0].output.stderr.as_deref(),
            Some("kernel said: bad"),
            "the failed attempt keeps its output"
        );
        assert!(c.attempts[1].output.is_empty());
        assert_eq!(r.devices_health["1"][0].name(), "poisoned");
        assert_eq!(r.devices_health["1"][0].code(), Some(codes::RT_INTERNAL_ERROR));
    }
}
