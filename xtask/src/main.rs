//! `cargo xtask`: the project's commands. One file per command; this file only dispatches.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "cardguard's project commands")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {}

fn main() {
    let cli = Cli::parse();
    match cli.command {}
}
