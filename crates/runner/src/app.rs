//! The suite binary's `main`: parse the command line, then be a lane or the dispatcher.
//!
//! This module owns turning settings (flags over environment over the config's profile over the
//! built-in defaults, resolved by [`crate::config`]) into a checked [`RunPlan`] (every bad input a
//! one-line error, exit 2; `--rerun-failed` cuts the selection, `--wait-for-cards` waits for the
//! cards), `--list`, the closing summary and the exit status (DESIGN section 3: 0 when every
//! verdict is passed, flaky or skipped; 1 when any is failed, timed out or crashed; 2 for bad usage
//! or input; 110 when the reports cannot be written; 130 / 143 when SIGINT / SIGTERM ended the
//! run, the signal's status winning over 110). It never decides a verdict.

use std::error::Error;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use platform_common::visible::VisibleDevices;
use std::time::SystemTime;

use platform_common::Arch;

use crate::archive::{self, LaunchRequest};
use crate::bench_suite;
use crate::case::Suite;
use crate::cli::{self, Cli, ListFormat, Parsed, SuiteArg};
use crate::cli_reference;
use crate::config;
use crate::dispatch::{self, AutoCount, DispatchStats, RunPlan};
use crate::history::History;
use crate::lane::{self, LaneConfig};
use crate::lane_command::{foreign_command, lane_command};
pub use crate::lane_command::{ForeignLanes, ENV_LANE_ARCH, ENV_LANE_HEALTH_CHECK, ENV_LANE_KERNEL_DIR};
use crate::order;
use crate::output;
use crate::platform::{self, PlatformInfo};
use crate::report::model::Platform;
use crate::report::{render_summary, ReportDir, ReportDirError};
use crate::rerun;
use crate::select::{self, Filter, Selection};

/// The exit status of a run whose report files could not be written, whatever its verdicts (as
/// nextest's): the summary is printed first, then the one-line error.
pub const EXIT_REPORT_WRITE: u8 = 110;

/// Runs the suite binary with the process's arguments; `builtin` gives the built-in suite of an
/// arch.
pub fn main(builtin: fn(Arch) -> Suite) -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    match archive::launch_request(&args) {
        LaunchRequest::NotAsked => {}
        LaunchRequest::Launch { archive, rest } => return archive::launch(&archive, &rest),
        LaunchRequest::Usage(msg) => return usage(&msg),
    }
    let code = run(args, builtin);
    // The archived binary `--archive` exec'd removes its unpack dir (a no-op anywhere else).
    archive::remove_launch_dir();
    code
}

/// The dispatcher of a suite whose lanes are another program (`cardguard pytest`): `args` are
/// the runner's flags (program name first), `suite` the collected cases. Every setting, report
/// file and exit status is the suite binary's; the lanes are `lanes`, on `--platform onboard`
/// only (a foreign lane reaches its card through the C ABI, never the in-process simulator).
pub fn dispatch_foreign(args: Vec<OsString>, suite: &Suite, lanes: &ForeignLanes) -> ExitCode {
    init_tracing("warn,platform_common::health=error,platform_common::sim=error");
    let cli = match cli::parse(args) {
        Parsed::Run(cli) => cli,
        Parsed::Printed => return ExitCode::SUCCESS,
        Parsed::Usage(msg) => return usage(&msg),
    };
    if cli.lane || cli.suite != SuiteArg::Builtin || cli.kernel_files || cli.platform_info {
        return usage("--lane, --suite, --kernel-files and --platform-info are the suite binary's");
    }
    if let Err(e) = check_env() {
        return usage(&e.to_string());
    }
    if let Err(e) = suite.validate() {
        return usage(&format!("the collected suite is invalid: {e}"));
    }
    match dispatch_main(&cli, suite, Some(lanes)) {
        Ok(code) => code,
        Err(msg) => usage(&msg),
    }
}

fn run(args: Vec<OsString>, builtin: fn(Arch) -> Suite) -> ExitCode {
    // Lanes log at warn too: their stderr is the dispatcher's, and their warnings (a poison-sink
    // write that failed, an escalation) must be seen. Health transitions and the simulated card's
    // own faults are not repeated as log lines: they reach people through the report and the
    // summary's card stories (RUST_LOG=warn shows them as they happen).
    init_tracing("warn,platform_common::health=error,platform_common::sim=error");
    if cli_reference::asked(&args) {
        output::out(cli_reference::markdown());
        return ExitCode::SUCCESS;
    }
    let cli = match cli::parse(args) {
        Parsed::Run(cli) => cli,
        Parsed::Printed => return ExitCode::SUCCESS,
        Parsed::Usage(msg) => return usage(&msg),
    };
    if let Err(e) = check_env() {
        return usage(&e.to_string());
    }
    let suite = match cli.suite {
        SuiteArg::Builtin => builtin(cli.arch),
        SuiteArg::Bench => bench_suite::sized(cli.bench_cases, cli.bench_classes),
        SuiteArg::Makespan => bench_suite::makespan(cli.bench_seed, cli.bench_workload),
    };
    if cli.lane {
        // The dispatcher validated this very suite (the same binary, the same flags) before it
        // started the lane.
        return lane_main(&cli, suite);
    }
    if let Err(e) = suite.validate() {
        return usage(&format!("the {} suite is invalid: {e}", cli.suite.name()));
    }
    if cli.kernel_files {
        return print_kernel_files(&suite, cli.arch);
    }
    if cli.platform_info {
        return print_platform_info(&cli);
    }
    match dispatch_main(&cli, &suite, None) {
        Ok(code) => code,
        Err(msg) => usage(&msg),
    }
}

fn usage(msg: &str) -> ExitCode {
    output::err(format_args!("error: {msg}"));
    ExitCode::from(2)
}

/// Every `ONBOARD_*` variable the suite binary or the platform reads: set ones must be UTF-8 (paths
/// excepted) and path ones must not be empty, each error naming the variable
/// ([`platform_common::env`]).
fn check_env() -> Result<(), platform_common::env::EnvError> {
    platform_common::env::check(platform_common::env::PLATFORM_VARS)?;
    platform_common::env::check(&[
        platform::ENV_CARDS,
        "ONBOARD_SIM_ARCH",
        crate::lane::ENV_PAUSE,
        crate::lane::ENV_PAUSE_TIMES,
        crate::lane::ENV_EXIT,
        crate::lane::ENV_NOISE,
        crate::lane::ENV_FLOOD,
        crate::lane::ENV_ORPHAN,
        crate::lane::ENV_CLOCK_STEP,
        crate::protocol::ENV_PROTOCOL_FD,
        crate::protocol::ENV_OUTPUT_MARK,
        crate::protocol::ENV_POISON_SINK,
    ])
}

pub use crate::cli::error_chain;

fn init_tracing(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| crate::report::console::LogWriter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        // A log line that cannot be written (stderr a closed pipe) is dropped, never reported
        // with `eprintln!` (which would panic).
        .log_internal_errors(false)
        .try_init();
}

/// `--kernel-files` (hidden, for `cargo xtask archive`): the blob file of every kernel the suite
/// needs on `arch`, one per line.
fn print_kernel_files(suite: &Suite, arch: Arch) -> ExitCode {
    match archive::kernel_files(suite, arch) {
        Ok(files) => {
            for f in files {
                output::out(f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => usage(&e.to_string()),
    }
}

/// `--platform-info` (hidden, for `cargo xtask cards`): the platform (`--platform`, else the
/// default: onboard when CANN is found), its card count and its lock dir on `--arch`, as one JSON
/// object. The environment's settings apply as in a run; the config file does not.
fn print_platform_info(cli: &Cli) -> ExitCode {
    let platform = cli.platform.map_or_else(platform::default_platform, Into::into);
    match platform::info(platform, cli.arch) {
        Ok(info) => {
            let doc = serde_json::json!({
                "platform": info.platform,
                "cards": info.cards,
                "lock_dir": info.leases.dir,
            });
            output::out(doc);
            ExitCode::SUCCESS
        }
        Err(e) => usage(&error_chain(&e)),
    }
}

fn lane_main(cli: &Cli, suite: Suite) -> ExitCode {
    let Some(device) = cli.device else {
        return usage("--lane needs --device");
    };
    let cfg = LaneConfig {
        arch: cli.arch,
        platform: cli.platform.map_or(Platform::Sim, Into::into),
        device,
        test_hooks: cli.test_hooks,
        preflight: cli.preflight,
        health_check: cli.health_check.unwrap_or_default(),
        keep_sdma_workers: cli.keep_sdma_workers.unwrap_or(false),
        suite_sdma: cli.suite_sdma,
    };
    let code = lane::main(cfg, suite);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The dispatcher: load the config, check everything, take the cards, run, report.
fn dispatch_main(cli: &Cli, suite: &Suite, foreign: Option<&ForeignLanes>) -> Result<ExitCode, String> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let env = |var: &str| std::env::var_os(var);
    let config = config::load(cli, &env, &cwd).map_err(|e| error_chain(&e))?;
    // `--devices` names the cards as this process sees them; every host-wide thing about a card
    // (its lease, lock file, health record, place in the queue) is its physical id's.
    let visible = VisibleDevices::from_env().map_err(|e| e.to_string())?;
    if cli.show_config {
        output::out(config::render_show_config(&config, suite, cli.arch));
        return Ok(ExitCode::SUCCESS);
    }
    let s = &config.settings;
    let history_path = order::history_path(s.report_dir.value.as_deref(), cli, default_report_root());
    let (history, history_warning) = History::load(&history_path);
    if let Some(w) = &history_warning {
        output::err(format_args!(
            "warning: {}; starting a fresh history",
            error_chain(w)
        ));
    }
    let partition = order::effective_partition(cli.partition, history.as_ref(), &history_path);
    let filter = Filter {
        selectors: cli.cases.clone(),
        exclude: cli.exclude.clone(),
        runtime: cli.runtime.clone(),
        partition,
    };
    let selection = select::select(suite, cli.arch, &filter).map_err(|e| error_chain(&e))?;
    let selection = order::cut_duration_share(partition, history.as_ref(), suite, selection);
    let platform_kind = s
        .platform
        .value
        .map_or_else(platform::default_platform, Into::into);
    if foreign.is_some() && platform_kind != Platform::Onboard {
        return Err(
            "these lanes reach their cards through the C ABI: use --platform onboard (with \
             ONBOARD_ACL_LIB naming CANN or libsim_acl.so)"
                .into(),
        );
    }
    let info = platform::info(platform_kind, cli.arch).map_err(|e| error_chain(&e))?;
    let faults = platform::fault_plan(
        s.faults.value.as_deref(),
        &s.faults.source.label("faults"),
        info.cards,
    )?;
    let Some(selection) = rerun_selection(cli, suite, selection)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let registry = crate::kernels::registry(&info, cli.arch, suite);
    let missing_kernels =
        crate::kernels::missing(suite, &selection, &registry).map_err(|e| error_chain(&e))?;
    if cli.list {
        // After every check a run makes before it takes cards: a bad plan or environment value
        // is the same error for `--list` as for a run.
        let defaults = crate::list::Defaults {
            case_timeout: s.case_timeout.value,
            retries: s.retries.value,
        };
        match cli.format {
            ListFormat::Plain => crate::list::plain(suite, &selection, &missing_kernels),
            ListFormat::Json => {
                crate::list::json(suite, &selection, &missing_kernels, defaults, &config.overrides)
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let fail_missing = match s.missing_kernel.value {
        Some(cli::MissingKernelArg::Fail) => true,
        Some(cli::MissingKernelArg::Skip) => false,
        None => info.platform == Platform::Sim,
    };
    // What every lane needs and no card can cause: a mistake here is the run's, not a card's.
    platform::check_kernel_dirs(&registry).map_err(|e| error_chain(&e))?;
    platform::check_setup(&info, cli.arch).map_err(|e| error_chain(&e))?;
    if fail_missing {
        if let Some(msg) = crate::kernels::missing_error(&missing_kernels) {
            return Err(msg);
        }
    }
    let run_id = run_id();
    let report_dir = s
        .report_dir
        .value
        .clone()
        .unwrap_or_else(|| default_report_root().join(cli.arch.name()).join(&run_id));
    // Before any card is taken: a report dir held by another run is bad input (exit 2, naming
    // the holder); one that cannot be written is the reports' failure (exit 110).
    let held_dir = match ReportDir::open(&report_dir, &run_id) {
        Ok(d) => d,
        Err(e @ ReportDirError::Held { .. }) => return Err(error_chain(&e)),
        Err(e) => return Ok(report_write_failed(&e)),
    };
    let estimates = order::estimates(cli.order, history.as_ref(), suite, &selection);
    let default_num = match info.platform {
        Platform::Sim => AutoCount::Exactly(2),
        Platform::Onboard => AutoCount::AllFree,
    };
    // The lock dir itself is held (a shared flock) for the whole run, so temp cleaners that skip
    // a locked directory (systemd-tmpfiles) leave the run's lock files alone.
    let _lock_dir_hold =
        platform_common::lease::LockDirHold::acquire(&info.leases).map_err(|e| error_chain(&e))?;
    // The cards, waiting for busy ones in the host-wide queue under --wait-for-cards.
    let request = dispatch::CardRequest {
        cfg: &info.leases,
        spec: &s.devices.value,
        device_num: s.device_num.value,
        default: default_num,
        cards: info.cards,
        run_id: &run_id,
        wait: s.wait_for_cards.value,
        live: !s.no_progress.value && std::io::stderr().is_terminal(),
        visible: &visible,
    };
    let leases = match dispatch::take_cards(&request) {
        Ok(l) => l,
        Err(e) => {
            output::err(format_args!("error: {}", error_chain(&e)));
            return Ok(ExitCode::from(e.exit_code()));
        }
    };
    let devices: Vec<u32> = leases.iter().map(|l| l.card()).collect();
    if let Some(note) = platform::sim_location_note(&info) {
        output::err(note);
    }
    platform::check_fault_cards(faults.as_ref(), &s.faults.source.label("faults"), &devices)?;
    start_platform_run(cli, &info, &devices, faults.as_ref())?;
    let lane_settings = crate::lane_command::LaneSettings {
        health_check: s.health_check.value,
        keep_sdma_workers: s.keep_sdma_workers.value,
        suite_sdma: select::uses_sdma(suite, &selection),
    };
    let mut command = lane_command(cli, &info, faults.as_ref(), lane_settings)?;
    if let Some(f) = foreign {
        command = foreign_command(f, cli, command, s.health_check.value);
    }
    let plan = RunPlan {
        arch: cli.arch,
        platform: info,
        leases,
        selection,
        retries: s.retries.value,
        flaky_result: s.flaky_result.value.into(),
        case_timeout: s.case_timeout.value,
        init_timeout: s.init_timeout.value,
        overrides: config.overrides.clone(),
        report_dir: held_dir,
        run_id,
        progress: !s.no_progress.value,
        command,
        faults: faults.clone(),
        missing_kernels,
        isolation: s.isolation.value.into(),
        stack_tool_path: dispatch::default_stack_tool_path(),
        estimates,
    };
    let stress = crate::stress::Stress::of(s.stress_count.value, s.stress_duration.value);
    let mut outcome = match crate::stress::run(plan, stress, suite) {
        // Plain data, freed by the process's exit rather than case by case (tens of ms at
        // 100,000 cases).
        Ok(o) => std::mem::ManuallyDrop::new(o),
        Err(e) => return Ok(report_write_failed(&e)),
    };
    drop(std::mem::take(&mut outcome.leases));
    let report = &outcome.report;
    // A stress run's durations and init times are its first iteration's.
    let history_dir = match stress {
        Some(_) => report_dir.join(crate::stress::iteration_dir(1)),
        None => report_dir.clone(),
    };
    order::record_history(history, &history_path, report, &history_dir);
    output::out(render_summary(report).trim_end());
    if let Some(st) = &report.stress {
        output::out(crate::report::model::render_stress(st).trim_end());
    }
    if let Some(path) = &cli.stats_out {
        write_stats(path, &outcome.stats);
    }
    match &outcome.write_error {
        None => {
            output::out(format_args!("reports: {}", report_dir.display()));
            if report.interrupted.is_none() && !outcome.leases_lost.is_empty() {
                // Every case has its verdict, but the cards were not held exclusively to the end.
                for e in &outcome.leases_lost {
                    output::err(format_args!("error: {}", error_chain(e)));
                }
                return Ok(ExitCode::from(2));
            }
            let code = report.exit_code();
            if code == 0 && s.faults_must_fire.value && !report.faults_unfired.is_empty() {
                output::err(format_args!(
                    "error: {} fault rule(s) never fired, and --faults-must-fire is set",
                    report.faults_unfired.len()
                ));
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::from(code))
        }
        // The summary above still tells the verdicts; the status says the reports are missing.
        // An interrupted run keeps the signal's status (130 / 143) even then.
        Some(e) => {
            let failed = report_write_failed(e);
            Ok(report
                .interrupted
                .map_or(failed, |i| ExitCode::from(i.exit_code())))
        }
    }
}

/// `--rerun-failed`: `selection` cut to the cases the named run did not pass (a case the suite no
/// longer has is a warning); `None` when nothing is left to re-run (said on stderr; exit 0).
fn rerun_selection(cli: &Cli, suite: &Suite, selection: Selection) -> Result<Option<Selection>, String> {
    let Some(arg) = &cli.rerun_failed else {
        return Ok(Some(selection));
    };
    let from = rerun::RerunFrom::from_arg(arg);
    let runs = default_report_root().join(cli.arch.name());
    let set = rerun::failed_cases(&from, cli.arch, &runs).map_err(|e| error_chain(&e))?;
    let (cut, gone) = rerun::restrict(suite, &selection, &set);
    for id in gone {
        output::err(format_args!(
            "warning: --rerun-failed: {id} (not passed in run {}) is no case of the suite any more",
            set.run_id
        ));
    }
    if cut.is_empty() {
        let others = if set.ids.is_empty() {
            ""
        } else {
            " that the other filters select"
        };
        output::err(format_args!(
            "--rerun-failed: nothing to re-run: run {} ({}) has no failed, timed_out, crashed or \
             flaky case{others}",
            set.run_id,
            set.report.display()
        ));
        return Ok(None);
    }
    Ok(Some(cut))
}

/// The reports cannot be written: the one-line error, and exit [`EXIT_REPORT_WRITE`].
fn report_write_failed(e: &dyn Error) -> ExitCode {
    output::err(format_args!(
        "error: failed to write the reports: {}",
        error_chain(e)
    ));
    ExitCode::from(EXIT_REPORT_WRITE)
}

/// On sim: install the plan and zero the counters of the run's cards (on onboard, through
/// `libsim_acl.so`).
fn start_platform_run(
    cli: &Cli,
    info: &PlatformInfo,
    devices: &[u32],
    faults: Option<&String>,
) -> Result<(), String> {
    platform::start_run(info, cli.arch, devices, faults)
}

/// `<YYYYMMDD>-<HHMMSS>-<pid>-<8 random hex digits>` in UTC: the random part keeps two CI jobs
/// that start in the same second with the same pid (separate containers) apart.
fn run_id() -> String {
    let t = crate::report::rfc3339_utc(SystemTime::now());
    let digits: String = t.chars().take(19).filter(char::is_ascii_digit).collect();
    let (date, time) = digits.split_at(8.min(digits.len()));
    format!(
        "{date}-{time}-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    )
}

/// Where reports go without `--report-dir`: for a binary of an unpacked archive (or installed
/// outside any cargo target dir) `./cardguard-reports`; else `<target>/onboard`, the target dir
/// being `CARGO_TARGET_DIR` or the nearest ancestor of this executable named `target`.
fn default_report_root() -> PathBuf {
    let outside = PathBuf::from("cardguard-reports");
    if archive::installed_root().is_some() {
        return outside;
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR").filter(|t| !t.is_empty()) {
        return PathBuf::from(t).join("onboard");
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "target"))
                .map(|t| t.join("onboard"))
        })
        .unwrap_or(outside)
}

/// The benchmarks' figures (`--stats-out`): the dispatch window, the dispatcher's peak RSS (read
/// here, after the reports are written), the largest lane's and each report file's write time.
fn write_stats(path: &Path, stats: &DispatchStats) {
    let us = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    let r = &stats.reports;
    let json = serde_json::json!({
        "cases": stats.cases,
        "window_us": us(stats.window),
        "dispatcher_peak_rss_kib": dispatch::peak_rss_kib("self"),
        "lane_peak_rss_kib": stats.lane_peak_rss_kib,
        "reports_write_us": {
            "journal.jsonl": us(r.journal),
            "report.json": us(r.report),
            "junit.xml": us(r.junit),
            "timeline.svg": us(r.timeline),
            "files": us(r.files),
            "total": us(r.total()),
        },
    });
    if let Err(e) = std::fs::write(path, format!("{json}\n")) {
        tracing::warn!(path = %path.display(), "cannot write the dispatch stats: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_carry_time_pid_and_random_bits() {
        let a = run_id();
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(parts.len(), 4, "{a}");
        assert_eq!(parts[0].len(), 8, "{a}");
        assert_eq!(parts[1].len(), 6, "{a}");
        assert_eq!(parts[2], std::process::id().to_string());
        assert_eq!(parts[3].len(), 8, "{a}");
        // Same second, same pid: still distinct (2^-32 odds of a false failure per pair).
        let ids: std::collections::HashSet<String> = (0..16).map(|_| run_id()).collect();
        assert!(ids.len() > 1, "{ids:?}");
    }

    #[test]
    fn error_chains_print_every_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::IsADirectory, "Is a directory");
        let e = crate::report::ReportError::io("write", "/r/report.json", io);
        assert_eq!(error_chain(&e), "write /r/report.json: Is a directory");
    }
}
