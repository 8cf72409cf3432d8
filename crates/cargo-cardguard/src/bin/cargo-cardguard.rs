//! `cargo-cardguard`: the cargo subcommand `cargo cardguard <command>` (run, list, show-config,
//! archive, build-kernels, cards, merge-reports, pytest) for any cargo workspace. The command
//! line and the workspace commands are `cardguard_cli::command`'s; `pytest` is the same code as
//! `cardguard pytest` ([`cargo_cardguard::pytest`]).

use std::process::ExitCode;

fn main() -> ExitCode {
    cardguard_cli::command::main(std::env::args_os(), cargo_cardguard::pytest::main)
}
