//! `run [--package NAME] ARGS` (and `list`, `show-config`): builds a suite binary (debug profile)
//! and runs it with ARGS, passing its exit status through (0 all passed, 1 a verdict failed, 2 bad
//! usage).
//!
//! The suite is found in the workspace ([`crate::workspace::Workspace::suite`]): `--package
//! NAME`, wherever it stands in ARGS, else the workspace's default or its only suite package.
//! Every other flag is the suite binary's. The workspace's `.config/cardguard.toml`, when there is
//! one, is passed as `--config` unless the arguments or `CARDGUARD_CONFIG` name a config (so it
//! applies from any current directory).

use std::path::Path;
use std::process::{Command, ExitCode};

use crate::cargo_build::{build_suite, exit_code};
use crate::workspace::{split_package, Error, Workspace};

/// Where a workspace keeps its config file (the suite binary's `config::CONFIG_PATH`: a test
/// holds the two together).
pub const CONFIG_PATH: &str = ".config/cardguard.toml";

/// The variable that names the config file (the suite binary's `config::ENV_CONFIG`).
pub const ENV_CONFIG: &str = "CARDGUARD_CONFIG";

/// Arguments: `--package NAME`, and everything else is passed to the suite binary.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The suite binary's arguments (`--arch a5|a2a3`, ...), and `--package NAME`: the package
    /// whose binary is the suite (default: the workspace's one suite package, a package with a
    /// binary that depends on runner).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

/// Runs the command: the suite binary with `first` (`--list`, `--show-config`, or nothing)
/// then the arguments.
pub fn run(ws: &Workspace, args: Args, first: &[&str]) -> ExitCode {
    match run_suite(ws, args, first) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_suite(ws: &Workspace, args: Args, first: &[&str]) -> Result<ExitCode, Error> {
    let (package, rest) = split_package(args.rest).map_err(Error::Usage)?;
    let suite = ws.suite(package.as_deref(), None)?;
    let exe = build_suite(ws, &suite, "dev")?;
    let env_config = std::env::var_os(ENV_CONFIG).is_some();
    let config = workspace_config(&ws.root, &rest, env_config);
    let status = Command::new(&exe)
        .args(config.iter().flatten())
        .args(first)
        .args(&rest)
        .status()
        .map_err(|e| Error::Failed(format!("cannot run {}: {e}", exe.display())))?;
    Ok(exit_code(status))
}

/// `--config ROOT/.config/cardguard.toml` when that file exists and the arguments
/// name no config (`--config`, `--no-config`) nor does `CARDGUARD_CONFIG` (`env_config`): the
/// workspace's config applies wherever the command is started (the suite binary's own search
/// starts from the current directory, which `cargo --manifest-path` may put outside).
pub fn workspace_config(root: &Path, args: &[String], env_config: bool) -> Option<[String; 2]> {
    let named = args
        .iter()
        .any(|a| a == "--config" || a.starts_with("--config=") || a == "--no-config");
    let file = root.join(CONFIG_PATH);
    (!named && !env_config && file.is_file()).then(|| ["--config".to_owned(), file.display().to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_workspace_config_is_passed_unless_one_is_named() {
        let root = tempfile::tempdir().unwrap();
        let args = strings(&["--arch", "a5"]);
        assert_eq!(workspace_config(root.path(), &args, false), None, "no file");
        std::fs::create_dir(root.path().join(".config")).unwrap();
        let file = root.path().join(".config/cardguard.toml");
        std::fs::write(&file, "").unwrap();
        assert_eq!(
            workspace_config(root.path(), &args, false),
            Some(["--config".to_owned(), file.display().to_string()])
        );
        assert_eq!(
            workspace_config(root.path(), &args, true),
            None,
            "CARDGUARD_CONFIG"
        );
        for named in [
            &["--config", "x.toml"][..],
            &["--config=x.toml"],
            &["--no-config"],
        ] {
            let mut a = args.clone();
            a.extend(strings(named));
            assert_eq!(workspace_config(root.path(), &a, false), None, "{named:?}");
        }
    }
}
