//! `cargo xtask onboard ARGS`: builds the suite binary (`cargo build -p runner --bin
//! cardguard-suite` with both drivers, debug profile) and runs it with ARGS, passing its exit status
//! through (0 all passed, 1 a verdict failed, 2 bad usage). Every flag is the suite binary's: see
//! `cargo xtask onboard --help`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Arguments: everything is passed to the suite binary.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The suite binary's arguments (`--arch a5|a2a3`, ...).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    let exe = match build_suite(false) {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match Command::new(&exe).args(&args.rest).status() {
        Ok(status) => exit_code(status),
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", exe.display());
            ExitCode::from(2)
        }
    }
}

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The cargo target directory.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").filter(|t| !t.is_empty()) {
        Some(t) => PathBuf::from(t),
        None => workspace_root().join("target"),
    }
}

/// Builds `cardguard-suite` with both drivers (release when asked) and returns its path.
pub fn build_suite(release: bool) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root()).args([
        "build",
        "--quiet",
        "-p",
        "runner",
        "--bin",
        "cardguard-suite",
        "--features",
        "sim,onboard",
    ]);
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("building cardguard-suite failed ({status})"));
    }
    let profile = if release { "release" } else { "debug" };
    Ok(target_dir().join(profile).join("cardguard-suite"))
}

/// A child's exit status as this process's (a signal `n` becomes 128 + n, as shells report it).
pub fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        (None, Some(s)) => ExitCode::from(u8::try_from(128 + s).unwrap_or(1)),
        (None, None) => ExitCode::from(1),
    }
}
