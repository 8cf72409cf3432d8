//! The console: one live progress bar per lane while the run goes, and log lines written around
//! them.
//!
//! This module owns what a person sees on the terminal during a run. The bars draw on stderr and
//! are hidden under `--no-progress` or when stderr is not a terminal (they still track their
//! state, so nothing else changes). The closing summary is the report crate's
//! ([`render_summary`](cardguard_report::render_summary)). It never writes a file and never
//! derives a verdict.

use std::collections::{BTreeMap, HashSet};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use cardguard_report::health_step;
use cardguard_report::model::{AttemptOutcome, Event};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use platform_common::driver::DeviceId;

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
            | Event::FaultsUnfired { .. }
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
