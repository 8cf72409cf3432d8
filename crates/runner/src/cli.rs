//! The suite binary's command line (DESIGN section 3), parsed with clap.
//!
//! This module owns the flags and their one-line errors: every bad value is a usage error that
//! names the bad part (exit 2). Hidden flags start a lane (`--lane --device N`), choose the
//! benchmark suite (`--suite bench`), write the benchmark's figures (`--stats-out FILE`), print the
//! cards and lock dir (`--platform-info`, for `cargo xtask cards`) and let tests' lane
//! hooks work (`--test-hooks`). `--kernel-files` (what `cargo xtask archive` packs) is documented. `--archive FILE` is taken out before this parser sees the line
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
use crate::settings::{parse_count, parse_secs, parse_wait, DeviceSpec, HealthCheck, Isolation};

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

/// `--suite` (hidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SuiteArg {
    /// The built-in suite.
    Builtin,
    /// Trivial cases in classes of one runtime (`cargo xtask bench dispatch`, `bench scale`;
    /// sized by `--bench-cases` and `--bench-classes`), and 200 compute cases apart (tagged
    /// `bench_compute`).
    Bench,
}

impl SuiteArg {
    /// The name as the flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            SuiteArg::Builtin => "builtin",
            SuiteArg::Bench => "bench",
        }
    }
}

/// The onboard matrix: cardguard's test cases on simulated or real NPU cards.
#[derive(Debug, Parser)]
#[command(name = "cardguard-suite", version, about)]
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
    #[arg(long, value_parser = parse_count)]
    pub device_num: Option<u32>,

    /// Select cases: Class, Class::, Class::case or tag:NAME (repeatable).
    #[arg(long = "case", value_name = "SELECTOR")]
    pub cases: Vec<Selector>,

    /// Leave out cases: Class, Class::, Class::case or tag:NAME (repeatable).
    #[arg(long = "exclude", value_name = "SELECTOR")]
    pub exclude: Vec<Selector>,

    /// Only classes of this runtime.
    #[arg(long)]
    pub runtime: Option<String>,

    /// Extra attempts of a case after a device-class failure, crash or timeout (default 2).
    #[arg(long, value_parser = parse_count)]
    pub retries: Option<u32>,

    /// What a case that passes on a retry counts as (default pass).
    #[arg(long, value_enum)]
    pub flaky_result: Option<FlakyArg>,

    /// Per-case timeout in seconds (default 300).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub case_timeout: Option<Duration>,

    /// Bound on building a chip worker (a card's init) in seconds (default 120); past it the
    /// card's lane is ended and the card, not a case, pays.
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub init_timeout: Option<Duration>,

    /// How much a lane process runs before a fresh one replaces it: pool (one per card for the
    /// run; the default), class (every class in a fresh process) or case (every case in a fresh
    /// process).
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
    #[arg(long, value_enum)]
    pub health_check: Option<HealthCheck>,

    /// A selected case whose kernel has no binary for the platform: fail (exit 2 naming the
    /// kernel, the case and the dirs searched; the default on sim) or skip (the case is skipped
    /// with that reason; the default on onboard).
    #[arg(long, value_enum)]
    pub missing_kernel: Option<MissingKernelArg>,

    /// Fault plan for simulated cards (rules separated by ';', e.g. 'dev=1:op_timeout@3').
    #[arg(long, value_name = "PLAN")]
    pub faults: Option<String>,

    /// A fault rule that did not fire by the end of the run (listed in the summary and in
    /// report.json's `faults_unfired`) makes the run exit 1.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub faults_must_fire: Option<bool>,

    /// Where the reports go (default target/onboard/<arch>/<run-id>, or
    /// ./cardguard-reports/<arch>/<run-id> outside a cargo target dir).
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,

    /// Run the K-th of N shares of the classes: hash:K/N (K from 1).
    #[arg(long, value_name = "hash:K/N")]
    pub partition: Option<Partition>,

    /// No progress bars.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub no_progress: Option<bool>,

    /// The config file (default: CARDGUARD_CONFIG, else the first .config/cardguard.toml from
    /// the current directory upward).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Read no config file (and ignore CARDGUARD_CONFIG): flags, environment and built-in
    /// defaults only.
    #[arg(long, conflicts_with_all = ["config", "profile"])]
    pub no_config: bool,

    /// The config file's profile (default: CARDGUARD_PROFILE, else default).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Print the resolved settings, each with where it came from, and exit.
    #[arg(long)]
    pub show_config: bool,

    /// List the selected cases and exit.
    #[arg(long)]
    pub list: bool,

    /// The format of --list: plain (one line per case) or json (one JSON object per line).
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

    /// Which suite to run.
    #[arg(long, hide = true, value_enum, default_value = "builtin")]
    pub suite: SuiteArg,

    /// With --suite bench: the number of trivial cases.
    #[arg(long, hide = true, default_value_t = crate::bench_suite::CASES, value_parser = parse_count)]
    pub bench_cases: u32,

    /// With --suite bench: the number of classes they are spread over.
    #[arg(long, hide = true, default_value_t = crate::bench_suite::CLASSES, value_parser = parse_count)]
    pub bench_classes: u32,

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
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Parsed {
        parse(
            std::iter::once("cardguard-suite")
                .chain(args.iter().copied())
                .map(OsString::from),
        )
    }

    fn usage(args: &[&str]) -> String {
        match p(args) {
            Parsed::Usage(m) => m,
            other => panic!("expected a usage error for {args:?}, got {other:?}"),
        }
    }

    #[test]
    fn timeouts_take_decimals_down_to_a_millisecond() {
        let Parsed::Run(cli) = p(&["--arch", "a5", "--case-timeout", "0.001", "--init-timeout", "2.5"])
        else {
            panic!()
        };
        assert_eq!(cli.case_timeout, Some(Duration::from_millis(1)));
        assert_eq!(cli.init_timeout, Some(Duration::from_millis(2500)));
        let Parsed::Run(cli) = p(&["--arch", "a5", "--wait-for-cards", "0"]) else {
            panic!()
        };
        assert_eq!(cli.wait_for_cards, Some(Duration::ZERO));
        let Parsed::Run(cli) = p(&[
            "--arch",
            "a5",
            "--wait-for-cards",
            "1.5",
            "--rerun-failed",
            "latest",
        ]) else {
            panic!()
        };
        assert_eq!(cli.wait_for_cards, Some(Duration::from_millis(1500)));
        assert_eq!(cli.rerun_failed.as_deref(), Some(std::path::Path::new("latest")));
    }

    #[test]
    fn a_non_utf8_value_names_its_flag() {
        use std::os::unix::ffi::OsStringExt;
        let bad = || OsString::from_vec(vec![b'd', 0xff, b'v']);
        let args = vec![
            OsString::from("cardguard-suite"),
            "--arch".into(),
            "a5".into(),
            "--faults".into(),
            bad(),
        ];
        let Parsed::Usage(m) = parse(args) else { panic!() };
        assert!(
            m.starts_with("--faults: ") && m.contains("not valid UTF-8"),
            "{m}"
        );
        let mut eq = OsString::from("--runtime=");
        eq.push(bad());
        let args = vec![
            OsString::from("cardguard-suite"),
            "--arch".into(),
            "a5".into(),
            eq,
        ];
        let Parsed::Usage(m) = parse(args) else { panic!() };
        assert!(m.starts_with("--runtime: "), "{m}");
        // A path takes any bytes.
        let args = vec![
            OsString::from("cardguard-suite"),
            "--arch".into(),
            "a5".into(),
            "--report-dir".into(),
            bad(),
        ];
        assert!(matches!(parse(args), Parsed::Run(_)));
    }

    #[test]
    fn defaults() {
        let Parsed::Run(cli) = p(&["--arch", "a5"]) else {
            panic!()
        };
        assert_eq!(cli.arch, Arch::A5);
        // Unset: the config decides (flag > environment > profile > built-in default).
        assert_eq!(cli.devices, None);
        assert_eq!(cli.retries, None);
        assert_eq!(cli.flaky_result, None);
        assert_eq!(cli.no_progress, None);
        assert!(cli.cases.is_empty() && !cli.lane && !cli.list && !cli.test_hooks && !cli.show_config);
        assert!(cli.exclude.is_empty());
        assert_eq!(cli.format, ListFormat::Plain);
        let Parsed::Run(cli) = p(&[
            "--arch",
            "a5",
            "--exclude",
            "tag:sdma",
            "--exclude",
            "A",
            "--list",
            "--format",
            "json",
        ]) else {
            panic!()
        };
        assert_eq!(cli.exclude, ["tag:sdma".parse().unwrap(), "A".parse().unwrap()]);
        assert_eq!(cli.format, ListFormat::Json);
        assert_eq!(cli.isolation, None);
    }

    #[test]
    fn every_bad_value_is_one_line_naming_it() {
        for (args, needle) in [
            (vec!["--arch", "a9"], "a9"),
            (vec![], "--arch"),
            (vec!["--arch", "a5", "--platform", "gpu"], "gpu"),
            (vec!["--arch", "a5", "--devices", "3-1"], "3-1"),
            (vec!["--arch", "a5", "--device-num", "x"], "x"),
            (vec!["--arch", "a5", "--case", "A::b::c"], "A::b::c"),
            (vec!["--arch", "a5", "--retries", "-1"], "-1"),
            (vec!["--arch", "a5", "--flaky-result", "maybe"], "maybe"),
            (vec!["--arch", "a5", "--isolation", "thread"], "thread"),
            (vec!["--arch", "a5", "--case-timeout", "0"], "0"),
            (vec!["--arch", "a5", "--case-timeout", "soon"], "soon"),
            (vec!["--arch", "a5", "--partition", "hash:3/2"], "hash:3/2"),
            (vec!["--arch", "a5", "--bogus"], "--bogus"),
            (vec!["--arch", "a5", "--retries", "+1"], "+1"),
            (vec!["--arch", "a5", "--device-num", "+2"], "+2"),
            (vec!["--arch", "a5", "--devices", "+0"], "+0"),
            (vec!["--arch", "a5", "--partition", "hash:+1/2"], "hash:+1/2"),
            (vec!["--arch", "a5", "--case-timeout", "+5"], "+5"),
            (vec!["--arch", "a5", "--case-timeout", "1e-10"], "1e-10"),
            (vec!["--arch", "a5", "--case-timeout", "0.0001"], "1 ms"),
            (vec!["--arch", "a5", "--init-timeout", "0"], "1 ms"),
            (vec!["--arch", "a5", "--init-timeout", "inf"], "inf"),
            (vec!["--arch", "a5", "--case", "tag:a b"], "tag:a b"),
            (vec!["--arch", "a5", "--exclude", "tag:"], "tag:"),
            (vec!["--arch", "a5", "--exclude", "A::b::c"], "A::b::c"),
            (vec!["--arch", "a5", "--list", "--format", "xml"], "xml"),
            (vec!["--arch", "a5", "--format", "json"], "--list"),
            (
                vec!["--arch", "a5", "--no-config", "--profile", "ci"],
                "--profile",
            ),
            (vec!["--arch", "a5", "--no-config", "--config", "x"], "--config"),
            (vec!["--arch", "a5", "--wait-for-cards", "-1"], "-1"),
            (vec!["--arch", "a5", "--wait-for-cards", "soon"], "soon"),
            (vec!["--arch", "a5", "--wait-for-cards", "0.0001"], "1 ms"),
        ] {
            let m = usage(&args);
            assert!(!m.contains('\n'), "{m}");
            assert!(m.contains(needle), "{args:?}: {m}");
        }
    }
}
