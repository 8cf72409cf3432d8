//! (Being built.)

use std::process::ExitCode;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Anything, until this command exists.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    eprintln!("not built yet: {:?}", args.rest);
    ExitCode::from(2)
}
