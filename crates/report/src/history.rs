//! The duration history (issue 23 item 1): what each case took when it passed, and what each
//! runtime's chip-worker init took, per suite and arch, kept on the host beside the report root
//! so the next run can plan its hand-out (`--order smart`) and split a fleet by duration
//! (`--partition duration:K/N`).
//!
//! One JSON file per suite and arch (`history-<suite>-<arch>.json`). It is written atomically (a
//! temporary file in the same directory, renamed over the old one), bounded (the last
//! [`SAMPLES`] durations of a case and of a runtime's init, and only the cases seen in the last
//! [`KEEP_RUNS`] runs), and a file that does not parse is a warning and a fresh history, never
//! an error.
//!
//! A case's estimate is the median of its own samples, else the median of its class's cases'
//! estimates, else the median of the suite's; a runtime's init estimate is the median of its
//! samples. This file never orders work (the dispatch policy's planner does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{AttemptOutcome, CaseReport, Event, ReportError, WorkerAction};

/// Samples kept per case and per runtime's init.
pub const SAMPLES: usize = 5;
/// A case not seen in this many runs in a row is dropped (a renamed or deleted case).
pub const KEEP_RUNS: u64 = 20;
/// The file format's version; another version is read as a fresh history.
pub const VERSION: u32 = 1;

/// One case's record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseHistory {
    /// Its class.
    pub class: String,
    /// Its last passing durations (ms), oldest first.
    pub ms: Vec<u64>,
    /// The run (by the history's count) it was last seen in.
    pub seen: u64,
}

/// A suite's history on one arch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The format's version.
    pub version: u32,
    /// Runs recorded.
    pub runs: u64,
    /// Per case id.
    pub cases: BTreeMap<String, CaseHistory>,
    /// Per runtime, its last init times (ms), oldest first.
    pub inits: BTreeMap<String, Vec<u64>>,
}

/// Reading or writing the history failed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The file could not be read (other than not existing).
    #[error("cannot read the duration history {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file does not parse (or has another version).
    #[error("the duration history {path} is not a history (line {line})")]
    Garbled {
        /// The file.
        path: PathBuf,
        /// The line serde stopped at.
        line: usize,
    },
    /// The file could not be written.
    #[error("cannot write the duration history {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<ReportError>,
    },
}

/// The history file of `suite` on `arch` in `dir`.
pub fn path_in(dir: &Path, suite: &str, arch: &str) -> PathBuf {
    dir.join(format!("history-{suite}-{arch}.json"))
}

/// The median of `v` (the lower middle of an even count); `None` when empty.
pub fn median(v: &[u64]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    Some(s[(s.len() - 1) / 2])
}

fn push_bounded(v: &mut Vec<u64>, x: u64) {
    v.push(x);
    if v.len() > SAMPLES {
        let extra = v.len() - SAMPLES;
        v.drain(..extra);
    }
}

impl History {
    /// Reads the history at `path`: `Ok(None)` when there is none yet; a garbled file is
    /// [`HistoryError::Garbled`] (the caller warns and starts a fresh one).
    pub fn read(path: &Path) -> Result<Option<History>, HistoryError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(HistoryError::Read {
                    path: path.to_owned(),
                    source,
                })
            }
        };
        match serde_json::from_str::<History>(&text) {
            Ok(h) if h.version == VERSION => Ok(Some(h)),
            Ok(_) => Err(HistoryError::Garbled {
                path: path.to_owned(),
                line: 1,
            }),
            Err(e) => Err(HistoryError::Garbled {
                path: path.to_owned(),
                line: e.line(),
            }),
        }
    }

    /// Reads the history at `path`, or a fresh one; a file that cannot be read or parsed is a
    /// warning (returned, for the caller to show) and a fresh history.
    pub fn load(path: &Path) -> (Option<History>, Option<HistoryError>) {
        match History::read(path) {
            Ok(h) => (h, None),
            Err(e) => (None, Some(e)),
        }
    }

    /// Writes the history to `path` atomically, as every report file is written
    /// ([`crate::write_atomic_with`]: a temporary file beside it, renamed over it).
    pub fn write(&self, path: &Path) -> Result<(), HistoryError> {
        let err = |source| HistoryError::Write {
            path: path.to_owned(),
            source: Box::new(source),
        };
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| err(ReportError::io("create", dir, e)))?;
        crate::write_atomic_with(path, |w| {
            serde_json::to_writer(&mut *w, self).map_err(std::io::Error::other)
        })
        .map_err(err)
    }

    /// Adds one run: every passing attempt's duration (an attempt that failed or timed out says
    /// nothing of the case's usual time), every built worker's init time, and drops the cases not
    /// seen in the last [`KEEP_RUNS`] runs. An interrupted run adds what it finished.
    pub fn record(&mut self, cases: &[CaseReport], journal: &[Event]) {
        self.version = VERSION;
        self.runs += 1;
        let run = self.runs;
        for c in cases {
            let passed = c
                .attempts
                .iter()
                .filter(|a| a.outcome == AttemptOutcome::Passed)
                .map(|a| a.duration_ms);
            let entry = self.cases.entry(c.id.clone()).or_default();
            entry.class.clone_from(&c.class);
            entry.seen = run;
            for ms in passed {
                push_bounded(&mut entry.ms, ms);
            }
        }
        for e in journal {
            if let Event::Worker {
                runtime,
                action: WorkerAction::Built,
                init_ms: Some(ms),
                ..
            } = e
            {
                push_bounded(self.inits.entry(runtime.clone()).or_default(), *ms);
            }
        }
        self.cases.retain(|_, c| run.saturating_sub(c.seen) < KEEP_RUNS);
    }

    /// The estimates for the cases `ids` (id and class, in the run's order): see the module docs.
    /// A case with no sample anywhere (an empty history) is estimated at 0.
    pub fn estimates<'a>(&self, ids: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<u64> {
        let own: Vec<(&str, Option<u64>)> = ids
            .into_iter()
            .map(|(id, class)| (class, self.cases.get(id).and_then(|c| median(&c.ms))))
            .collect();
        let mut by_class: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
        for c in self.cases.values() {
            if let Some(m) = median(&c.ms) {
                by_class.entry(c.class.as_str()).or_default().push(m);
            }
        }
        let suite: Vec<u64> = by_class.values().flatten().copied().collect();
        let suite_median = median(&suite).unwrap_or(0);
        own.into_iter()
            .map(|(class, ms)| {
                ms.or_else(|| by_class.get(class).and_then(|v| median(v)))
                    .unwrap_or(suite_median)
            })
            .collect()
    }

    /// The init estimate of `runtime` (the median of its samples), else the median of every
    /// runtime's, else 0.
    pub fn init_estimate(&self, runtime: &str) -> u64 {
        self.inits
            .get(runtime)
            .and_then(|v| median(v))
            .or_else(|| {
                let all: Vec<u64> = self.inits.values().filter_map(|v| median(v)).collect();
                median(&all)
            })
            .unwrap_or(0)
    }

    /// Whether it holds any duration (a history a plan can use).
    pub fn has_durations(&self) -> bool {
        self.cases.values().any(|c| !c.ms.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Attempt, Outcome};

    fn attempt(outcome: AttemptOutcome, ms: u64) -> Attempt {
        serde_json::from_value(serde_json::json!({
            "device": null, "pid": null, "outcome": outcome, "duration_ms": ms, "error": null
        }))
        .unwrap()
    }

    fn case(id: &str, class: &str, attempts: Vec<Attempt>) -> CaseReport {
        CaseReport {
            id: id.into(),
            class: class.into(),
            runtime: "rt".into(),
            outcome: Outcome::Passed,
            skip_reason: None,
            attempts,
        }
    }

    fn report(cases: Vec<CaseReport>) -> Vec<CaseReport> {
        cases
    }

    fn built(runtime: &str, ms: u64) -> Event {
        Event::Worker {
            at_ms: 0,
            device: 0,
            pid: 1,
            runtime: runtime.into(),
            action: WorkerAction::Built,
            init_ms: Some(ms),
        }
    }

    #[test]
    fn passing_attempts_and_inits_are_recorded_bounded() {
        let mut h = History::default();
        for i in 0..8 {
            let r = report(vec![case(
                "A::x",
                "A",
                vec![
                    attempt(AttemptOutcome::Failed, 999),
                    attempt(AttemptOutcome::Passed, 10 + i),
                ],
            )]);
            h.record(&r, &[built("rt", 300 + i), built("rt2", 7)]);
        }
        assert_eq!(
            h.cases["A::x"].ms,
            vec![13, 14, 15, 16, 17],
            "the failed attempt is not a sample"
        );
        assert_eq!(h.inits["rt"].len(), SAMPLES);
        assert_eq!(h.init_estimate("rt"), 305);
        assert_eq!(
            h.init_estimate("unknown"),
            7,
            "the lower middle of every runtime's (7, 305)"
        );
        assert_eq!(h.runs, 8);
    }

    #[test]
    fn estimates_fall_back_to_class_then_suite_median() {
        let mut h = History::default();
        let r = report(vec![
            case("A::x", "A", vec![attempt(AttemptOutcome::Passed, 10)]),
            case("A::y", "A", vec![attempt(AttemptOutcome::Passed, 30)]),
            case("A::z", "A", vec![attempt(AttemptOutcome::Passed, 50)]),
            case("B::u", "B", vec![attempt(AttemptOutcome::Passed, 1000)]),
        ]);
        h.record(&r, &[]);
        let est = h.estimates([("A::y", "A"), ("A::new", "A"), ("C::new", "C"), ("B::u", "B")]);
        assert_eq!(
            est,
            vec![30, 30, 30, 1000],
            "own, class median, suite median (lower middle of 10,30,50,1000)"
        );
        assert_eq!(History::default().estimates([("A::x", "A")]), vec![0]);
    }

    #[test]
    fn cases_not_seen_for_keep_runs_are_dropped() {
        let mut h = History::default();
        h.record(
            &report(vec![case(
                "Old::x",
                "Old",
                vec![attempt(AttemptOutcome::Passed, 5)],
            )]),
            &[],
        );
        for _ in 0..KEEP_RUNS - 1 {
            h.record(&report(vec![case("New::x", "New", vec![])]), &[]);
        }
        assert!(h.cases.contains_key("Old::x"), "seen {} runs ago", KEEP_RUNS - 1);
        h.record(&report(vec![]), &[]);
        assert!(!h.cases.contains_key("Old::x"));
        assert!(h.cases.contains_key("New::x"));
        assert!(!h.has_durations(), "New::x never passed");
    }

    #[test]
    fn write_is_atomic_and_a_garbled_file_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path(), "builtin", "a5");
        assert!(matches!(History::load(&path), (None, None)), "none yet");
        let mut h = History::default();
        h.record(
            &report(vec![case("A::x", "A", vec![attempt(AttemptOutcome::Passed, 5)])]),
            &[],
        );
        h.write(&path).unwrap();
        assert_eq!(History::read(&path).unwrap(), Some(h.clone()));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left beside it");
        std::fs::write(&path, "{\"version\": 1, \"runs\": ").unwrap();
        let (h2, warn) = History::load(&path);
        assert!(h2.is_none());
        assert!(matches!(warn, Some(HistoryError::Garbled { .. })), "{warn:?}");
        std::fs::write(
            &path,
            serde_json::to_string(&History { version: 99, ..h }).unwrap(),
        )
        .unwrap();
        assert!(matches!(
            History::load(&path),
            (None, Some(HistoryError::Garbled { .. }))
        ));
    }
}
