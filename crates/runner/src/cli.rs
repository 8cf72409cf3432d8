//! The suite binary's command line (DESIGN section 3), parsed with clap.
//!
//! This module owns the flags and their one-line errors: every bad value is a usage error that
//! names the bad part (exit 2). Hidden flags start a lane (`--lane --device N`), choose the
//! benchmark suite (`--suite bench`), write the benchmark's figures (`--stats-out FILE`), print the
//! cards and lock dir (`--platform-info`, for `cargo xtask cards`), print this reference as
//! Markdown (`--cli-reference`, for `cargo xtask docs`: `crate::cli_reference`) and let tests' lane
//! hooks work (`--test-hooks`). `--kernel-files` (what `cargo xtask archive` packs) is documented.
//! `--archive FILE` is taken out before this parser sees the line
//! (`crate::archive::launch_request`: the rest is the archived binary's). A run setting's flag is
//! an `Option` with no clap default: an absent flag leaves the setting to its environment
//! variable, the config file's profile or the built-in default (`crate::config`, whose table lists
//! every such flag); the flags' value parsers here are the settings' one parser each, shared with
//! the config. It never starts a run.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use platform_common::{Arch, DeviceId};

pub use platform_common::message::{error_chain, one_line};

use crate::report::model::{FlakyResult, Platform};
use crate::select::{Partition, Selector};
use crate::settings::{
    parse_count, parse_iterations, parse_secs, parse_wait, DeviceSpec, HealthCheck, Isolation,
};

/// `--platform`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlatformArg {
    /// Simulated cards.
    Sim,
    /// Real cards through CANN.
    Onboard,
}

impl From<PlatformArg> for Platform {
    fn from(p: PlatformArg) -> Self {
        match p {
            PlatformArg::Sim => Platform::Sim,
            PlatformArg::Onboard => Platform::Onboard,
        }
    }
}

/// `--flaky-result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FlakyArg {
    /// A flaky case does not fail the run.
    Pass,
    /// A flaky case counts as failed.
    Fail,
}

impl From<FlakyArg> for FlakyResult {
    fn from(f: FlakyArg) -> Self {
        match f {
            FlakyArg::Pass => FlakyResult::Pass,
            FlakyArg::Fail => FlakyResult::Fail,
        }
    }
}

/// `--missing-kernel`: what a selected case does whose kernel has no binary for the platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MissingKernelArg {
    /// The case is `skipped` with the lookup as its reason (the default on real cards).
    Skip,
    /// The run stops before it takes cards, exit 2 naming the kernel, the case and the dirs
    /// searched (the default on simulated cards, where a build makes every blob).
    Fail,
}

/// `--format` (of `--list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// One line per case: `Class::case  (runtime, kind)`.
    Plain,
    /// One JSON object per line per case (JSON Lines), for tools.
    Json,
}

/// `--isolation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IsolationArg {
    /// One lane process per card for the whole run (containment keeps it healthy).
    Pool,
    /// Every class in a fresh lane process.
    Class,
    /// Every case in a fresh lane process.
    Case,
}

impl From<IsolationArg> for Isolation {
    fn from(i: IsolationArg) -> Self {
        match i {
            IsolationArg::Pool => Isolation::Pool,
            IsolationArg::Class => Isolation::Class,
            IsolationArg::Case => Isolation::Case,
        }
    }
}

/// `--order`: how work is handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    /// Planned from the duration history: longest work first, a runtime's classes kept on one
    /// card, a card that runs ahead steals (the default when a history exists).
    Smart,
    /// Suite order, a class to whichever lane asks (the default without a history).
    Suite,
}

/// `--suite` (hidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SuiteArg {
    /// The built-in suite.
    Builtin,
    /// Trivial cases in classes of one runtime (`cargo xtask bench dispatch`, `bench scale`;
    /// sized by `--bench-cases` and `--bench-classes`), and 200 compute cases apart (tagged
    /// `bench_compute`).
    Bench,
    /// The makespan benchmark's sleeping cases over 3 runtimes (`cargo xtask bench makespan`;
    /// `--bench-seed`, `--bench-workload`).
    Makespan,
}

impl SuiteArg {
    /// The name as the flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            SuiteArg::Builtin => "builtin",
            SuiteArg::Bench => "bench",
            SuiteArg::Makespan => "makespan",
        }
    }
}

/// The onboard matrix: cardguard's test cases on simulated or real NPU cards.
#[derive(Debug, Parser)]
#[command(name = "cardguard-suite", version)]
pub struct Cli {
    /// The arch: a5 or a2a3.
    #[arg(long)]
    pub arch: Arch,

    /// sim or onboard (default: onboard when CANN is found, else sim).
    #[arg(long, value_enum)]
    pub platform: Option<PlatformArg>,

    /// Cards to use: a list (0-3, 0,2,5) or auto (the first free ones; default).
    #[arg(long)]
    pub devices: Option<DeviceSpec>,

    /// With --devices auto: how many cards (default 2 on sim, all free cards on real ones).
    ///
    /// On real cards every free card is taken; the run is refused, naming the holders, only when
    /// none is free.
    #[arg(long, value_parser = parse_count)]
    pub device_num: Option<u32>,

    /// Select cases: Class, Class::, Class::case or tag:NAME (repeatable).
    ///
    /// `tag:NAME` takes every case with that tag, its own or its class's. A selector that matches
    /// no case of the suite is an error (exit 2).
    #[arg(long = "case", value_name = "SELECTOR")]
    pub cases: Vec<Selector>,

    /// Leave out cases: Class, Class::, Class::case or tag:NAME (repeatable).
    ///
    /// A case any of them takes is not part of the run (`--exclude tag:sdma` is pytest's
    /// `-m "not sdma"`). A selector that matches no case of the suite is an error (exit 2).
    #[arg(long = "exclude", value_name = "SELECTOR")]
    pub exclude: Vec<Selector>,

    /// Only classes of this runtime.
    #[arg(long)]
    pub runtime: Option<String>,

    /// Extra attempts of a case after a device-class failure, crash or timeout (default 2).
    ///
    /// A config override's retries, or the case's or its class's own, win over it. Wrong results
    /// and usage errors are never retried.
    #[arg(long, value_parser = parse_count)]
    pub retries: Option<u32>,

    /// What a case that passes on a retry counts as (default pass).
    #[arg(long, value_enum)]
    pub flaky_result: Option<FlakyArg>,

    /// Per-case timeout in seconds (default 300).
    ///
    /// A config override's timeout, or the case's or its class's own, wins (its `timed_out`
    /// attempt then says `exceeded its own timeout of N s`). At the timeout the hung case is
    /// diagnosed first (where it is stuck: at most 1 s for the lane's answer, 5 s for native
    /// stacks), then its lane gets SIGTERM, 2 s grace, and SIGKILL of its process group. A lane
    /// with work outstanding that sends nothing for as long outside a case and outside an init
    /// is ended the same way, and the case it was about to run gets the `timed_out` attempt.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub case_timeout: Option<Duration>,

    /// Bound on building a chip worker (a card's init) in seconds (default 120); past it the
    /// card's lane is ended and the card, not a case, pays.
    ///
    /// Switching runtimes includes closing the previous worker. Past the bound the lane is ended
    /// (SIGTERM, 2 s grace, SIGKILL), the card gets the health event `init_timed_out`, no case
    /// gets an attempt for it and the lane's cases go back to the queue; the card's next lane is
    /// a fresh process, and when that one times out in init too the card is quarantined, as for
    /// a failed init. A case that started keeps its `timed_out` attempt under --case-timeout.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub init_timeout: Option<Duration>,

    /// How much a lane process runs before a fresh one replaces it: pool (one per card for the
    /// run; the default), class (every class in a fresh process) or case (every case in a fresh
    /// process).
    ///
    /// Containment, retries, the poison sink, fresh processes, quarantine, leases and reports
    /// are the same in every mode, and a card still has one process at a time. A lane closed
    /// after its unit by design exits 0: never a lane death and never a `fresh_process`. A retry
    /// is a unit of its own (a fresh lane for it in `class` and `case`); the multi-card phase runs
    /// its cases in one lane (`pool`), one lane per class (`class`) or per case (`case`). What
    /// each mode costs is in docs/benchmarks.md.
    #[arg(long, value_enum)]
    pub isolation: Option<IsolationArg>,

    /// Wait up to SECS for cards other runs hold, in the host-wide queue (default 0: exit 2
    /// naming the holder).
    #[arg(long, value_name = "SECS", value_parser = parse_wait)]
    pub wait_for_cards: Option<Duration>,

    /// Run the cases that ended failed, timed_out, crashed or flaky in the report of DIR, or of
    /// the newest run of the arch (latest); the other selectors filter further.
    #[arg(long, value_name = "DIR|latest")]
    pub rerun_failed: Option<PathBuf>,

    /// When a worker's card is checked after a case: each (after every case that touched the
    /// device; the default), on-failure (only after a failed attempt), off.
    ///
    /// A failed check is the fault of the case that just ran (class `device_runtime`); in every
    /// mode a device error of a case's own calls retires and force-resets its worker. See "The
    /// post-case health check" in docs/guide/running.md.
    #[arg(long, value_enum)]
    pub health_check: Option<HealthCheck>,

    /// A selected case whose kernel has no binary for the platform: fail (exit 2 naming the
    /// kernel, the case and the dirs searched; the default on sim) or skip (the case is skipped
    /// with that reason; the default on onboard).
    #[arg(long, value_enum)]
    pub missing_kernel: Option<MissingKernelArg>,

    /// Fault plan for simulated cards (rules separated by ';', e.g. 'dev=1:op_timeout@3').
    ///
    /// The grammar and every fault: docs/reference/fault-plans.md. A malformed plan is an error
    /// quoting the bad rule (exit 2); with a real CANN library it is a usage error.
    #[arg(long, value_name = "PLAN")]
    pub faults: Option<String>,

    /// A fault rule that did not fire by the end of the run (listed in the summary and in
    /// report.json's `faults_unfired`) makes the run exit 1.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub faults_must_fire: Option<bool>,

    /// Keep a pooled worker created with SDMA for the next case of its runtime after a passing
    /// case (default false: it is retired after every case, pass or not, as upstream drops a
    /// worker that touched SDMA).
    ///
    /// A worker that provisioned SDMA holds streams a card cannot release quickly; retiring it
    /// after each case keeps a fault of one SDMA case from reaching the next one. See
    /// docs/guide/sdma.md.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub keep_sdma_workers: Option<bool>,

    /// Where the reports go (default target/onboard/<arch>/<run-id>, or
    /// ./cardguard-reports/<arch>/<run-id> outside a cargo target dir).
    ///
    /// The cargo target dir is `CARGO_TARGET_DIR`, else the nearest ancestor of the binary
    /// named `target`; a binary of an unpacked archive, or one outside any target dir, writes
    /// under the current directory.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,

    /// How work is handed out: smart (planned from the duration history; the default when one
    /// exists) or suite (suite order).
    #[arg(long, value_enum)]
    pub order: Option<OrderArg>,

    /// Run the K-th of N shares of the classes: hash:K/N or duration:K/N (K from 1).
    ///
    /// The shares are deterministic: N runs with K = 1..N run every class exactly once;
    /// `cargo xtask merge-reports` joins their reports. duration makes shares of equal
    /// estimated duration from the duration history (--history: give every share the same
    /// file); without a history it falls back to hash and says so.
    #[arg(long, value_name = "hash:K/N|duration:K/N")]
    pub partition: Option<Partition>,

    /// Run the selection N times on the same cards, to hunt an intermittent fault.
    ///
    /// Each iteration is a full run with its reports in iteration-K/ of the report dir; the
    /// report dir's report.json joins them (each case with its worst iteration's verdict, and
    /// `stress`: every case's verdict per iteration, how often it failed and on which cards).
    /// The run exits 1 if any iteration failed a case. With --stress-duration too, it stops at
    /// whichever comes first.
    #[arg(long, value_name = "N", value_parser = parse_iterations)]
    pub stress_count: Option<u32>,

    /// Run the selection again and again for SECS seconds, as --stress-count does: a new
    /// iteration starts while less than SECS have passed since the first one started.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub stress_duration: Option<Duration>,

    /// No progress bars.
    ///
    /// They are also off when stderr is not a terminal.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub no_progress: Option<bool>,

    /// The config file (default: CARDGUARD_CONFIG, else the first .config/cardguard.toml from
    /// the current directory upward).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Read no config file (and ignore CARDGUARD_CONFIG): flags, environment and built-in
    /// defaults only.
    ///
    /// CARDGUARD_PROFILE is ignored too; the settings' own variables still apply. Not with
    /// --config or --profile.
    #[arg(long, conflicts_with_all = ["config", "profile"])]
    pub no_config: bool,

    /// The config file's profile (default: CARDGUARD_PROFILE, else default).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Print the resolved settings, each with where it came from, and exit.
    ///
    /// Each run setting's value and its source (flag, env, profile at FILE:LINE, default), then
    /// the per-case overrides with how many cases of the suite each takes; exit 0. Nothing is
    /// checked beyond the config, and no card is taken.
    #[arg(long)]
    pub show_config: bool,

    /// List the selected cases and exit.
    ///
    /// It makes the checks a run makes before it takes cards (a bad config file, fault plan,
    /// environment value or kernel manifest is the same error). Plain: one line per case,
    /// `Class::case  (runtime, kind)`, followed by `  [no binary: KERNEL, ...]` when a kernel of
    /// the case has no binary for the platform.
    #[arg(long)]
    pub list: bool,

    /// The format of --list: plain (one line per case) or json (one JSON object per line).
    ///
    /// json prints one JSON object per line (JSON Lines) per selected case, in hand-out order:
    /// `id`, `class`, `runtime`, `kind` (`pooled`/`standalone`), `body`
    /// (`host`/`compute`/`trivial`), `tags`, `arch` (the arches its filter admits), `devices`,
    /// `timeout_s` and `retries` (what applies to it with these flags and this config),
    /// `expect_failure` (`null` or `{reason, expected}`, `expected` being `class:NAME`,
    /// `code:CODE` or `op_timeout`), `skip_if` (its skip conditions' reasons), `kernels`,
    /// `missing_kernels`.
    #[arg(long, value_enum, default_value = "plain", requires = "list")]
    pub format: ListFormat,

    /// Run as a lane (started by the dispatcher).
    #[arg(long, hide = true, requires = "device")]
    pub lane: bool,

    /// The lane's card.
    #[arg(long, hide = true, value_parser = parse_count)]
    pub device: Option<DeviceId>,

    /// Run as a preflight lane: probe the card and exit (started by the dispatcher).
    #[arg(long, hide = true, requires = "lane")]
    pub preflight: bool,

    /// The run's selected cases use SDMA: a preflight lane runs the SDMA probe too (passed to
    /// lanes by the dispatcher).
    #[arg(long, hide = true, requires = "lane")]
    pub suite_sdma: bool,

    /// Which suite to run.
    #[arg(long, hide = true, value_enum, default_value = "builtin")]
    pub suite: SuiteArg,

    /// With --suite bench: the number of trivial cases.
    #[arg(long, hide = true, default_value_t = crate::bench_suite::CASES, value_parser = parse_count)]
    pub bench_cases: u32,

    /// With --suite bench: the number of classes they are spread over.
    #[arg(long, hide = true, default_value_t = crate::bench_suite::CLASSES, value_parser = parse_count)]
    pub bench_classes: u32,

    /// With --suite makespan: the seed its durations are drawn from.
    #[arg(long, hide = true, default_value_t = 1)]
    pub bench_seed: u64,

    /// With --suite makespan: the workload (1: 4 cards' worth; 2: 8 cards', two-card cases).
    #[arg(long, hide = true, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub bench_workload: u32,

    /// The duration history file (default: history-SUITE-ARCH.json in the report root, or beside
    /// an explicit --report-dir).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,

    /// Honour the test-only lane hooks (ONBOARD_TEST_LANE_PAUSE, ONBOARD_TEST_LANE_EXIT); the
    /// dispatcher passes it on to its lanes. Tests only.
    #[arg(long, hide = true)]
    pub test_hooks: bool,

    /// Print the kernel blob files an archive of this suite needs on --arch, one per line, and
    /// exit: the probe kernel (noop) and every kernel its cases declare for the arch, as its lanes
    /// would load them. A kernel without a blob is exit 2 naming it and the case that declares it.
    /// This is what `cargo xtask archive` packs; it refuses to build an archive that would lack
    /// one.
    #[arg(long)]
    pub kernel_files: bool,

    /// Print the platform's cards as one JSON object (`platform`, `cards`, `lock_dir`: the
    /// platform of --platform, else the default, on --arch) and exit (what `cargo xtask cards`
    /// surveys).
    #[arg(long, hide = true)]
    pub platform_info: bool,

    /// Write the benchmarks' figures as JSON to this file (the dispatch window from the first
    /// assignment to the last verdict, peak RSS, report write times).
    #[arg(long, hide = true, value_name = "FILE")]
    pub stats_out: Option<PathBuf>,

    /// Print this command line's reference as Markdown and exit (what `cargo xtask docs` writes
    /// into docs/reference/cli.md).
    #[arg(long, hide = true, exclusive = true)]
    pub cli_reference: bool,
}

/// What parsing the command line gave.
#[derive(Debug)]
pub enum Parsed {
    /// Run (as the dispatcher or a lane).
    Run(Box<Cli>),
    /// Help or version was printed: exit 0.
    Printed,
    /// A usage error, one line: exit 2.
    Usage(String),
}

/// Parses `args` (with the program name first). Errors become one line naming the bad part.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Parsed {
    let args: Vec<OsString> = args.into_iter().collect();
    match Cli::try_parse_from(&args) {
        Ok(cli) => Parsed::Run(Box::new(cli)),
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayVersion
            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                let _ = e.print();
                Parsed::Printed
            }
            // clap's message names no flag: name it (path flags take any bytes and never get here).
            clap::error::ErrorKind::InvalidUtf8 => {
                Parsed::Usage(non_utf8_value(&args).unwrap_or_else(|| one_line(&e.to_string())))
            }
            _ => Parsed::Usage(one_line(&e.to_string())),
        },
    }
}

/// Flags whose value is a path: any bytes are fine.
const PATH_FLAGS: [&str; 4] = ["--report-dir", "--stats-out", "--config", "--rerun-failed"];

/// The first argument that is not UTF-8 (a path flag's value aside), as a one-line error naming
/// its flag (clap's own message names none): `--flag=VALUE`, or the value after `--flag`.
fn non_utf8_value(args: &[OsString]) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    (1..args.len())
        .filter(|&i| args[i].to_str().is_none())
        .map(|i| {
            let bytes = args[i].as_bytes();
            let flag = if bytes.starts_with(b"--") && bytes.contains(&b'=') {
                let end = bytes.iter().position(|b| *b == b'=').unwrap_or(bytes.len());
                String::from_utf8_lossy(&bytes[..end]).into_owned()
            } else {
                match args[i - 1].to_str() {
                    Some(prev) if i > 1 && prev.starts_with('-') => prev.to_owned(),
                    _ => format!("argument {i}"),
                }
            };
            (flag, args[i].to_string_lossy())
        })
        .find(|(flag, _)| !PATH_FLAGS.contains(&flag.as_str()))
        .map(|(flag, value)| format!("{flag}: {value:?} is not valid UTF-8"))
}

#[cfg(test)]
mod tests;
