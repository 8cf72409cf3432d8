//! `cargo xtask`: the project's commands. One file per command; this file only dispatches.

mod bench;
mod bench_makespan;
mod bench_recovery;
mod bench_sandbox;
mod bench_scale;
mod bindgen;
mod cann;
mod chaos;
mod child_wait;
mod docs;
mod features;
mod onboard;
mod procs;
mod sim_probe;
mod sim_probe_sdma;
mod soak;
#[cfg(test)]
mod tidy;

use std::process::ExitCode;

use cardguard_cli::{archive, build_kernels, cards, merge_reports};
use clap::{CommandFactory, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "cardguard's project commands")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build the kernel blobs of one arch from kernels/.
    BuildKernels(build_kernels::Args),
    /// Run the onboard matrix (simulated cards where no CANN is installed).
    #[command(disable_help_flag = true)]
    Onboard(cardguard_cli::run::Args),
    /// The seed's within-process probe table on a simulated card.
    SimProbe(sim_probe::Args),
    /// Benchmarks (release build).
    Bench(bench::Args),
    /// Join partitioned runs' report.json and junit.xml.
    MergeReports(merge_reports::Args),
    /// Regenerate the committed CANN bindings from their header.
    Bindgen(bindgen::Args),
    /// Compile cardguard's CANN declarations against the installed CANN headers
    /// (ASCEND_HOME_PATH); one line per mismatch.
    CannCheck(cann::Args),
    /// Run every test binary of the workspace N times under load and count what failed.
    Soak(soak::Args),
    /// Run random fault plans through the suite binary and check every report's invariants.
    Chaos(chaos::Args),
    /// Check that every feature combination of every crate builds.
    Features(features::Args),
    /// Every card of the host: free or held (by whom), its health record, the waiting runs.
    Cards(cards::Args),
    /// Write a suite archive (.tar.zst) a card host runs with no toolchain and no checkout.
    Archive(archive::Args),
    /// Regenerate docs/reference/cli.md from the clap definitions (--check: only compare).
    Docs(docs::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {}", platform_common::message::one_line(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::BuildKernels(a) => onboard::delegate(|ws| build_kernels::run(ws, a)),
        Command::Onboard(a) => onboard::delegate(|ws| cardguard_cli::run::run(ws, a, &[])),
        Command::SimProbe(a) => sim_probe::run(a),
        Command::Bench(a) => bench::run(a),
        Command::MergeReports(a) => onboard::delegate(|ws| merge_reports::run(ws, a)),
        Command::Bindgen(a) => bindgen::run(a),
        Command::CannCheck(a) => cann::run(a),
        Command::Soak(a) => soak::run(a),
        Command::Chaos(a) => chaos::run(a),
        Command::Features(a) => features::run(a),
        Command::Cards(a) => onboard::delegate(|ws| cards::run(ws, a)),
        Command::Archive(a) => onboard::delegate(|ws| archive::run(ws, a)),
        Command::Docs(a) => docs::run(a, &Cli::command()),
    }
}
