//! One run, from its checked plan to its report: the reports started, the cases added, the
//! legitimate skips recorded, the event loop run over the leased cards, the report finished.
//!
//! This file owns the order of a run's phases and the run's figures ([`DispatchStats`]). It never
//! decides a retry, a blame or a quarantine (the policy does, applied by the state machine) and
//! never parses flags (the app does).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use platform_common::{Arch, DeviceLease};

use super::event_loop::{Dispatcher, LoopEnd, ProcSettings};
use super::lane_proc::LaneCommand;
use super::signals::SignalWatch;
use crate::case::Suite;
use crate::config::Overrides;
use crate::dispatch::policy::{skip_reason, Isolation, SkipFacts};
use crate::dispatch::state::{self, Estimates, Work};
use crate::kernels::MissingKernels;
use crate::platform::PlatformInfo;
use crate::report::model::{Event, FlakyResult, RunInfo, RunReport};
use crate::report::{ReportDir, ReportDirError, ReportError, Reporter, WriteTimes};
use crate::select::Selection;
use crate::sink::SinkDir;

/// Everything a run needs, checked.
#[derive(Debug)]
pub struct RunPlan {
    /// The arch.
    pub arch: Arch,
    /// The platform and its settings.
    pub platform: PlatformInfo,
    /// The cards, leased.
    pub leases: Vec<DeviceLease>,
    /// The selected cases.
    pub selection: Selection,
    /// Extra attempts after a device-class failure.
    pub retries: u32,
    /// What a flaky case counts as.
    pub flaky_result: FlakyResult,
    /// Per-case timeout.
    pub case_timeout: Duration,
    /// Bound on one init (building a worker).
    pub init_timeout: Duration,
    /// The config's per-case overrides (over a case's own timeout and retries).
    pub overrides: Overrides,
    /// The report directory, held for the run and cleared of an earlier run's files.
    pub report_dir: ReportDir,
    /// The run's id.
    pub run_id: String,
    /// Whether to draw progress bars.
    pub progress: bool,
    /// How lanes are started.
    pub command: LaneCommand,
    /// The fault plan's text, checked (`None` without one): which of its rules did not fire is
    /// read from the cards at the end.
    pub faults: Option<String>,
    /// The selected cases (by id) with a kernel that has no binary for the platform: skipped.
    pub missing_kernels: BTreeMap<String, MissingKernels>,
    /// How much a lane process runs before a fresh one replaces it (`--isolation`).
    pub isolation: Isolation,
    /// Where a hung case's stack tool (`eu-stack`, else `gdb`) is looked for (a `PATH`-like
    /// list; default [`super::default_stack_tool_path`]). Empty: no stacks, the breadcrumb alone.
    pub stack_tool_path: std::ffi::OsString,
    /// `--order smart`: the estimates the hand-out is planned from; `None`: suite order.
    pub estimates: Option<Estimates>,
}

/// What the benchmarks read (`--stats-out`): the window from the first assignment to the last
/// verdict, the largest lane's peak RSS and the time the report files took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Cases with a verdict.
    pub cases: usize,
    /// From the first assignment to the last verdict.
    pub window: Duration,
    /// The largest peak RSS (KiB) of the lanes the dispatcher closed, read as each was closed
    /// (all its cases done); `None` when no lane was read.
    pub lane_peak_rss_kib: Option<u64>,
    /// How long writing each report file took.
    pub reports: WriteTimes,
}

/// A run that could not be started.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// The report directory or its journal could not be created or written before the run.
    #[error("failed to start the reports")]
    Report(#[from] ReportError),
    /// An earlier run's files could not be cleared from the report directory.
    #[error(transparent)]
    ReportDir(#[from] ReportDirError),
}

/// What a run gave: the report (its verdicts stand even when a report file could not be
/// written), the benchmark's figures, and the failure to write the report files, if any.
#[derive(Debug)]
pub struct RunOutcome {
    /// The merged verdicts and health events.
    pub report: RunReport,
    /// The benchmark's figures.
    pub stats: DispatchStats,
    /// Writing `report.json`, `junit.xml`, `timeline.svg` or the journal's end failed.
    pub write_error: Option<ReportError>,
    /// Leases whose lock file was deleted or replaced during the run: exclusion of those cards
    /// was lost (exit 2, naming the lock dir).
    pub leases_lost: Vec<platform_common::lease::LeaseError>,
    /// The run's leases, still held: released when dropped (a stress run's next iteration runs
    /// on them).
    pub leases: Vec<DeviceLease>,
}

/// Runs the plan to its report.
pub fn run(plan: RunPlan, suite: &Suite) -> Result<RunOutcome, DispatchError> {
    let devices: Vec<u32> = plan.leases.iter().map(DeviceLease::card).collect();
    let info = RunInfo {
        arch: plan.arch,
        platform: plan.platform.platform,
        driver: plan.platform.driver.clone(),
        devices: devices.clone(),
        devices_physical: plan
            .leases
            .iter()
            .filter(|l| l.physical() != l.card())
            .map(|l| (l.card().to_string(), l.physical()))
            .collect(),
        run_id: plan.run_id.clone(),
        started_at: crate::report::rfc3339_utc(SystemTime::now()),
    };
    plan.report_dir.clear()?;
    let mut reporter = Reporter::create(plan.report_dir.path(), info, plan.progress)?;
    // The poison sinks live in a private directory of the run, removed with it.
    let sinks = match SinkDir::create() {
        Ok(d) => Some(d),
        Err(e) => {
            tracing::warn!("cannot create the run's poison-sink directory ({e}); lanes run without sinks");
            None
        }
    };
    reporter.event(&Event::RunStarted {
        at_ms: 0,
        run_id: plan.run_id.clone(),
        arch: plan.arch,
        platform: plan.platform.platform,
        devices: devices.clone(),
        cases: plan.selection.len() as u64,
    })?;
    // The dispatcher's and the report's view of the cases, each built on its own core (each
    // takes tens of ms at 100,000 cases); both list the selection's cases in its order.
    let (mut work, added) = std::thread::scope(|s| {
        let added = s.spawn(|| {
            let cases = plan.selection.classes.iter().flat_map(|sc| {
                let class = &suite.classes[sc.class];
                sc.cases.iter().map(move |&ci| {
                    let id = class.case_id(&class.cases[ci]);
                    (id, class.name.as_str(), class.runtime.name.as_str())
                })
            });
            reporter.add_cases(plan.selection.len(), cases)
        });
        let work = Work::new(suite, &plan.selection, &plan.overrides);
        (work, added.join())
    });
    added.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
    let run = crate::case::RunInfo {
        arch: plan.arch,
        platform: plan.platform.platform,
        devices: devices.clone(),
    };
    for i in 0..work.cases().len() {
        let c = work.case(i);
        // The case by its indices: a search by name, in the suite or in the class, would cost a
        // pass over them per case.
        let class = &suite.classes[c.class];
        let spec = &class.cases[c.case];
        let settings = class.settings_of(spec);
        let facts = SkipFacts {
            needs: spec.device_count,
            run_cards: devices.len(),
            skip_if: settings.skip_reason(&run),
            missing_kernel: plan.missing_kernels.get(&c.id).map(|m| m.reason.as_str()),
        };
        if let Some(reason) = skip_reason(&facts) {
            let id = c.id.clone();
            let at_ms = reporter.elapsed_ms();
            reporter.event(&Event::CaseSkipped { at_ms, id, reason })?;
            work.withdraw(i);
        }
    }
    if let Some(est) = &plan.estimates {
        let planned = work.plan_hand_out(suite, est, devices.len());
        tracing::info!(
            makespan_ms = planned.makespan_ms,
            inits = planned.inits,
            "planned the hand-out (--order smart)"
        );
    }
    let stack_tool = super::stacks::find(&plan.stack_tool_path);
    let state_settings = state::Settings {
        retries: plan.retries,
        case_timeout: plan.case_timeout,
        init_timeout: plan.init_timeout,
        close_timeout: close_timeout(&plan.platform),
        isolation: plan.isolation,
        run_id: plan.run_id.clone(),
        stack_tool: stack_tool.as_ref().map(|t| t.name),
        clock_start_ns: reporter.clock_start_ns(),
    };
    let settings = ProcSettings {
        command: plan.command,
        sink_dir: sinks.as_ref().map(|d| d.path().to_owned()),
        stack_tool,
        run_id: plan.run_id.clone(),
    };
    let dispatcher = Dispatcher::new(settings, state_settings, work, plan.leases, reporter);
    let watch = match SignalWatch::start(
        dispatcher.sender(),
        dispatcher.live_lanes(),
        sinks.as_ref().map(|d| d.path().to_owned()),
    ) {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::warn!("cannot watch SIGINT and SIGTERM ({e}); a signal ends the run without reports");
            None
        }
    };
    let LoopEnd {
        reporter,
        cases,
        window,
        lane_peak_rss_kib,
        leases_lost,
        leases,
    } = dispatcher.run();
    let mut stats = DispatchStats {
        cases,
        window,
        lane_peak_rss_kib,
        reports: WriteTimes::default(),
    };
    let unfired = crate::platform::unfired_faults(&plan.platform, plan.faults.as_deref(), &devices);
    let mut reporter = reporter;
    if !unfired.is_empty() {
        let at_ms = reporter.elapsed_ms();
        // A journal that cannot take it fails with the report files below.
        if let Err(e) = reporter.event(&Event::FaultsUnfired { at_ms, unfired }) {
            tracing::warn!("cannot journal the faults that never fired: {e}");
        }
    }
    let (report, written, times) = reporter.finish_timed(plan.flaky_result);
    stats.reports = times;
    drop(watch);
    drop(sinks);
    drop(plan.report_dir);
    Ok(RunOutcome {
        report,
        stats,
        write_error: written.err(),
        leases_lost,
        leases,
    })
}

/// How long lanes may take to close their pools at the end: generous (a finalize may force-reset).
fn close_timeout(p: &PlatformInfo) -> Duration {
    (p.timeouts.stream_sync * 2 + p.timeouts.op_execute) * 3 + Duration::from_secs(10)
}
