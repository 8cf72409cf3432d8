//! The boxes of `timeline.svg`'s rows: which attempts are drawn on their own and which are merged,
//! so the picture stays readable and bounded however many cases a run has.
//!
//! A box narrower than a pixel says nothing on its own; thousands of them side by side are only
//! a band of colour. So in each card's row, attempts narrower than a pixel that follow each other
//! within a pixel and share a colour are merged into one run (one shape, its tooltip naming the
//! first and last case and the count). A failed, timed-out or crashed attempt, and every attempt
//! of a flaky case, is never merged away: it is drawn on its own, at least a pixel wide. A row
//! therefore holds at most about one run per pixel of plot width plus the attempts that matter.
//!
//! This file owns that choice as a pure function of the finished report and the plot's scale. It
//! never draws (`timeline` does) and never reads a file.

use std::collections::BTreeMap;

use platform_common::driver::DeviceId;

use super::model::{AttemptOutcome, CaseReport, Outcome, RunReport};

/// One shape of a card's row.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape<'a> {
    /// Attempt `attempt` (its index) of `case`, drawn on its own.
    One {
        /// The case.
        case: &'a CaseReport,
        /// The attempt's index in `case.attempts`.
        attempt: usize,
    },
    /// Attempts narrower than a pixel, one after the other, of one outcome: one box.
    Run {
        /// Their outcome (never a failure).
        outcome: AttemptOutcome,
        /// When the first started (ms since the run began).
        start_ms: u64,
        /// When the last ended.
        end_ms: u64,
        /// How many.
        count: usize,
        /// The first one's case id.
        first: &'a str,
        /// The last one's case id.
        last: &'a str,
    },
}

/// Whether an attempt is always drawn on its own: a failure, or any attempt of a flaky case.
fn kept(case: &CaseReport, outcome: AttemptOutcome) -> bool {
    outcome.is_failure() || case.outcome == Outcome::Flaky
}

/// The shapes of every card's row, for a plot of `px_per_ms` pixels per millisecond.
pub fn rows(report: &RunReport, px_per_ms: f64) -> BTreeMap<DeviceId, Vec<Shape<'_>>> {
    let mut by_card: BTreeMap<DeviceId, Vec<(&CaseReport, usize)>> = BTreeMap::new();
    for case in &report.cases {
        for (k, a) in case.attempts.iter().enumerate() {
            if let Some(d) = a.device {
                by_card.entry(d).or_default().push((case, k));
            }
        }
    }
    by_card
        .into_iter()
        .map(|(card, mut attempts)| {
            attempts.sort_by_key(|(c, k)| c.attempts[*k].started_ms);
            (card, row(&attempts, px_per_ms))
        })
        .collect()
}

/// A run being gathered.
struct Gathering<'a> {
    outcome: AttemptOutcome,
    start_ms: u64,
    end_ms: u64,
    count: usize,
    first: (&'a CaseReport, usize),
    last: &'a str,
}

impl<'a> Gathering<'a> {
    fn into_shape(self) -> Shape<'a> {
        if self.count == 1 {
            let (case, attempt) = self.first;
            return Shape::One { case, attempt };
        }
        Shape::Run {
            outcome: self.outcome,
            start_ms: self.start_ms,
            end_ms: self.end_ms,
            count: self.count,
            first: &self.first.0.id,
            last: self.last,
        }
    }
}

/// One row's shapes from its attempts in start order.
fn row<'a>(attempts: &[(&'a CaseReport, usize)], px_per_ms: f64) -> Vec<Shape<'a>> {
    let mut shapes = Vec::new();
    let mut run: Option<Gathering<'a>> = None;
    for &(case, k) in attempts {
        let a = &case.attempts[k];
        let end_ms = a.started_ms + a.duration_ms;
        let narrow = (a.duration_ms as f64) * px_per_ms < 1.0;
        if !narrow || kept(case, a.outcome) {
            shapes.extend(run.take().map(Gathering::into_shape));
            shapes.push(Shape::One { case, attempt: k });
            continue;
        }
        if let Some(r) = &mut run {
            let gap_px = (a.started_ms.saturating_sub(r.end_ms)) as f64 * px_per_ms;
            if r.outcome == a.outcome && gap_px < 1.0 {
                r.end_ms = r.end_ms.max(end_ms);
                r.count += 1;
                r.last = &case.id;
                continue;
            }
        }
        shapes.extend(run.take().map(Gathering::into_shape));
        run = Some(Gathering {
            outcome: a.outcome,
            start_ms: a.started_ms,
            end_ms,
            count: 1,
            first: (case, k),
            last: &case.id,
        });
    }
    shapes.extend(run.map(Gathering::into_shape));
    shapes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Attempt, AttemptOutput};
    use AttemptOutcome as A;

    fn case(id: &str, outcome: Outcome, attempts: &[(A, u64, u64)]) -> CaseReport {
        CaseReport {
            id: id.to_owned(),
            class: "C".into(),
            runtime: "rt".into(),
            outcome,
            skip_reason: None,
            attempts: attempts
                .iter()
                .map(|&(o, start, dur)| Attempt {
                    device: Some(0),
                    pid: Some(1),
                    outcome: o,
                    duration_ms: dur,
                    started_ms: start,
                    error: None,
                    output: AttemptOutput::default(),
                })
                .collect(),
        }
    }

    fn short(s: &Shape<'_>) -> String {
        match s {
            Shape::One { case, attempt } => format!("{}#{attempt}", case.id),
            Shape::Run {
                count, first, last, ..
            } => format!("{count}:{first}..{last}"),
        }
    }

    #[test]
    fn narrow_neighbours_merge_and_failures_never_do() {
        // 0.1 px per ms: boxes of 1 ms are a tenth of a pixel, 20 ms are two pixels.
        let cases = [
            case("C::a", Outcome::Passed, &[(A::Passed, 0, 1)]),
            case("C::b", Outcome::Passed, &[(A::Passed, 1, 1)]),
            case("C::c", Outcome::Passed, &[(A::Passed, 3, 1)]),
            case("C::f", Outcome::Failed, &[(A::Failed, 4, 1)]),
            case("C::d", Outcome::Passed, &[(A::Passed, 5, 1)]),
            case("C::e", Outcome::Passed, &[(A::Passed, 6, 1)]),
            case("C::fl", Outcome::Flaky, &[(A::Crashed, 7, 1), (A::Passed, 8, 1)]),
            case("C::w", Outcome::Passed, &[(A::Passed, 9, 20)]),
            case("C::g", Outcome::Passed, &[(A::Passed, 30, 1)]),
            // More than a pixel later (10 ms = 1 px): a run of its own.
            case("C::h", Outcome::Passed, &[(A::Passed, 45, 1)]),
            case("C::i", Outcome::Passed, &[(A::Passed, 46, 1)]),
        ];
        let mut attempts: Vec<(&CaseReport, usize)> = Vec::new();
        for c in &cases {
            for k in 0..c.attempts.len() {
                attempts.push((c, k));
            }
        }
        attempts.sort_by_key(|(c, k)| c.attempts[*k].started_ms);
        let shapes: Vec<String> = row(&attempts, 0.1).iter().map(short).collect();
        assert_eq!(
            shapes,
            [
                "3:C::a..C::c",
                "C::f#0",
                "2:C::d..C::e",
                "C::fl#0",
                "C::fl#1",
                "C::w#0",
                "C::g#0",
                "2:C::h..C::i"
            ]
        );
    }

    #[test]
    fn a_hundred_thousand_boxes_become_a_bounded_row() {
        let cases: Vec<CaseReport> = (0..100_000u64)
            .map(|i| {
                let o = if i % 25_000 == 7 { A::Failed } else { A::Passed };
                let verdict = if o == A::Failed {
                    Outcome::Failed
                } else {
                    Outcome::Passed
                };
                case(&format!("C::k{i}"), verdict, &[(o, i / 50, 0)])
            })
            .collect();
        let report_ms = 100_000 / 50;
        let px_per_ms = 900.0 / report_ms as f64;
        let attempts: Vec<(&CaseReport, usize)> = cases.iter().map(|c| (c, 0)).collect();
        let shapes = row(&attempts, px_per_ms);
        let failed = shapes
            .iter()
            .filter(|s| matches!(s, Shape::One { case, .. } if case.outcome == Outcome::Failed))
            .count();
        assert_eq!(failed, 4, "every failure is drawn on its own");
        assert!(shapes.len() <= 9, "{} shapes", shapes.len());
        let merged: usize = shapes
            .iter()
            .map(|s| match s {
                Shape::Run { count, .. } => *count,
                Shape::One { .. } => 1,
            })
            .sum();
        assert_eq!(merged, 100_000, "every attempt is in a shape");
    }
}
