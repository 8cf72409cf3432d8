//! `cargo cardguard <command>`: the command line of the `cargo-cardguard` binary, a cargo
//! subcommand for any cargo workspace (installed with `cargo install --path
//! crates/cargo-cardguard`). Cargo runs it as `cargo-cardguard cardguard ARGS`: the `cardguard`
//! word cargo puts first is dropped, so the binary also runs by itself (`cargo-cardguard run`).
//!
//! Every command but `pytest` works in the cargo workspace of the current directory (or of
//! `--manifest-path`), found with `cargo metadata` ([`Workspace::discover`]); outside any
//! workspace that is a one-line error naming the directory, exit 2. `pytest` needs no workspace (a pytest suite is no cargo
//! package): its run is the caller's ([`main`]'s `pytest`, the runner's dispatcher in
//! `cargo-cardguard`), since this crate links no runner. Bad usage is a one-line error, exit 2.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::workspace::Workspace;
use crate::{archive, build_kernels, cards, merge_reports, run};

/// The word cargo passes before the arguments of `cargo cardguard ...`.
pub const SUBCOMMAND: &str = "cardguard";

/// `cargo cardguard`.
#[derive(Debug, Parser)]
#[command(
    name = "cargo cardguard",
    bin_name = "cargo cardguard",
    version,
    about = "cardguard's commands for any cargo workspace: build a suite binary and run it, archive it for card hosts, survey the cards"
)]
pub struct Cli {
    /// The workspace's (or a package's) Cargo.toml, instead of the current directory's
    /// workspace, as for cargo's own commands.
    #[arg(long, global = true, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the suite binary and run it (on simulated cards where no CANN is installed).
    /// `cargo cardguard run -- --help` lists the suite binary's flags.
    Run(run::Args),
    /// Build the suite binary and list the cases a run would run (its `--list`).
    List(run::Args),
    /// Build the suite binary and print the run settings and where each comes from (its
    /// `--show-config`).
    ShowConfig(run::Args),
    /// Write a suite archive (.tar.zst) a card host runs with no toolchain and no checkout.
    Archive(archive::Args),
    /// Build kernel binaries from kernel sources (host blobs, or AICore binaries with CANN).
    BuildKernels(build_kernels::Args),
    /// Every card of the host: free or held (by whom), its health record, the waiting runs.
    Cards(cards::Args),
    /// Join partitioned runs' report.json and junit.xml.
    MergeReports(merge_reports::Args),
    /// A pytest suite in cardguard's lanes: `cargo cardguard pytest [FLAGS] -- [PYTEST ARGS]`
    /// (the same as `cardguard pytest`; needs no cargo workspace).
    #[command(disable_help_flag = true)]
    Pytest(PytestArgs),
}

/// `pytest`'s arguments, as they are.
#[derive(Debug, clap::Args)]
pub struct PytestArgs {
    /// The runner's flags (`--arch`, `--devices`, `--faults`, ...), then `--` and pytest's
    /// arguments (see `cardguard pytest`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

/// The arguments after the program's name, without the `cardguard` word cargo puts first.
pub fn arguments(argv: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut rest: Vec<OsString> = argv.into_iter().skip(1).collect();
    if rest.first().is_some_and(|a| a == SUBCOMMAND) {
        rest.remove(0);
    }
    rest
}

/// Runs `cargo cardguard` with `argv` (the process's, program name first); `pytest` runs a
/// pytest suite with its arguments.
pub fn main(
    argv: impl IntoIterator<Item = OsString>,
    pytest: impl FnOnce(Vec<OsString>) -> ExitCode,
) -> ExitCode {
    let rest = arguments(argv);
    // pytest's arguments go on as they are: clap would eat the `--` before pytest's own.
    if rest.first().is_some_and(|a| a == "pytest") {
        return pytest(rest[1..].to_vec());
    }
    let mut args = vec![OsString::from("cargo cardguard")];
    args.extend(rest);
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // No command: the list of them, on stderr.
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {}", platform_common::message::one_line(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    if let Command::Pytest(a) = cli.command {
        return pytest(a.args);
    }
    let ws = match &cli.manifest_path {
        Some(manifest) => Workspace::discover_manifest(manifest),
        None => std::env::current_dir()
            .map_err(|e| crate::Error::Usage(format!("the current directory cannot be read: {e}")))
            .and_then(|dir| Workspace::discover(&dir)),
    };
    let ws = match ws {
        Ok(ws) => ws,
        Err(e) => {
            eprintln!("error: {e}");
            return e.exit_code();
        }
    };
    dispatch(&ws, cli.command)
}

/// Runs a command of the workspace.
fn dispatch(ws: &Workspace, command: Command) -> ExitCode {
    match command {
        Command::Run(a) => run::run(ws, a, &[]),
        Command::List(a) => run::run(ws, a, &["--list"]),
        Command::ShowConfig(a) => run::run(ws, a, &["--show-config"]),
        Command::Archive(a) => archive::run(ws, a),
        Command::BuildKernels(a) => build_kernels::run(ws, a),
        Command::Cards(a) => cards::run(ws, a),
        Command::MergeReports(a) => merge_reports::run(ws, a),
        Command::Pytest(_) => unreachable!("main runs pytest before any workspace"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_word_cargo_puts_first_is_dropped() {
        assert_eq!(
            arguments(os(&["/bin/cargo-cardguard", "cardguard", "run", "--arch", "a5"])),
            os(&["run", "--arch", "a5"])
        );
        assert_eq!(arguments(os(&["cargo-cardguard", "list"])), os(&["list"]));
        assert_eq!(arguments(os(&["cargo-cardguard"])), os(&[]));
    }

    #[test]
    fn run_takes_package_and_release_then_the_suite_arguments() {
        let cli = Cli::try_parse_from(os(&[
            "cargo cardguard",
            "run",
            "--package",
            "my-suite",
            "--release",
            "--arch",
            "a5",
            "--faults",
            "dev=0:op_timeout@3",
        ]))
        .unwrap();
        let Command::Run(a) = cli.command else {
            panic!("{:?}", cli.command)
        };
        assert_eq!(a.package.as_deref(), Some("my-suite"));
        assert!(a.release);
        assert_eq!(a.rest, ["--arch", "a5", "--faults", "dev=0:op_timeout@3"]);
    }

    #[test]
    fn pytest_gets_every_argument_as_it_is() {
        for args in [
            &["--", "tests", "-k", "not slow"][..],
            &["--help"],
            &["--devices", "0,1", "--", "tests", "--", "-x"],
        ] {
            let mut argv = os(&["cargo-cardguard", "cardguard", "pytest"]);
            argv.extend(os(args));
            let mut got = None;
            let code = main(argv, |a| {
                got = Some(a);
                ExitCode::from(7)
            });
            assert_eq!(code, ExitCode::from(7));
            assert_eq!(got, Some(os(args)));
        }
    }

    #[test]
    fn an_unknown_command_is_a_usage_error() {
        let e = Cli::try_parse_from(os(&["cargo cardguard", "onboard"])).unwrap_err();
        assert!(e.use_stderr());
        let line = platform_common::message::one_line(&e.to_string());
        assert!(line.contains("'onboard'"), "{line}");
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
