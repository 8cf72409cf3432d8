//! `run [--package NAME] [--release] ARGS` (and `list`, `show-config`): builds a suite binary
//! (debug profile, or release with `--release`) and runs it with ARGS, passing its exit status
//! through (0 all passed, 1 a verdict failed, 2 bad usage). The build shows cargo's own progress
//! (never `--quiet`: a cold build takes minutes).
//!
//! The suite is found in the workspace ([`crate::workspace::Workspace::suite`]): `--package
//! NAME`, wherever it stands in ARGS, else the workspace's default or its only suite package.
//! `--release` is taken wherever it stands too. Every other flag is the suite binary's. The workspace's `.config/cardguard.toml`, when there is
//! one, is passed as `--config` unless the arguments or `CARDGUARD_CONFIG` name a config (so it
//! applies from any current directory).

use std::path::Path;
use std::process::{Command, ExitCode};

use crate::cargo_build::{build_suite, exit_code};
use crate::workspace::{split_flag, split_package, Error, Workspace};

/// Where a workspace keeps its config file (the suite binary's `config::CONFIG_PATH`: a test
/// holds the two together).
pub const CONFIG_PATH: &str = ".config/cardguard.toml";

/// The variable that names the config file (the suite binary's `config::ENV_CONFIG`).
pub const ENV_CONFIG: &str = "CARDGUARD_CONFIG";

/// Arguments: `--package NAME`, `--release`, and everything else is passed to the suite binary.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The package whose binary is the suite (default: the workspace's one suite package, a
    /// package with a binary that depends on runner). Taken wherever it stands.
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// Build the suite binary with the release profile (default: dev). Taken wherever it stands.
    #[arg(long)]
    pub release: bool,
    /// The suite binary's arguments (`--arch a5|a2a3`, `--faults PLAN`, ...: its flags, which
    /// `-- --help` lists).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "SUITE ARGS"
    )]
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
    let Choice {
        package,
        profile,
        rest,
    } = choose(args)?;
    let suite = ws.suite(package.as_deref(), None)?;
    let exe = build_suite(ws, &suite, profile)?;
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

/// What the arguments ask for: the package, the profile, the suite binary's arguments.
#[derive(Debug, PartialEq, Eq)]
struct Choice {
    package: Option<String>,
    profile: &'static str,
    rest: Vec<String>,
}

/// `--package` and `--release`, before the suite binary's arguments or among them.
fn choose(args: Args) -> Result<Choice, Error> {
    let (package, rest) = split_package(args.rest).map_err(Error::Usage)?;
    let package = match (args.package, package) {
        (Some(a), Some(b)) => {
            return Err(Error::Usage(format!(
                "--package is given twice ({a:?} and {b:?})"
            )))
        }
        (a, b) => a.or(b),
    };
    let (release, rest) = split_flag(rest, "--release");
    let profile = if args.release || release { "release" } else { "dev" };
    Ok(Choice {
        package,
        profile,
        rest,
    })
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

    fn args(package: Option<&str>, release: bool, rest: &[&str]) -> Args {
        Args {
            package: package.map(str::to_owned),
            release,
            rest: strings(rest),
        }
    }

    #[test]
    fn package_and_release_are_taken_before_or_among_the_suite_arguments() {
        let c = choose(args(Some("a"), false, &["--arch", "a5", "--list"])).unwrap();
        assert_eq!(
            c,
            Choice {
                package: Some("a".into()),
                profile: "dev",
                rest: strings(&["--arch", "a5", "--list"]),
            }
        );
        let c = choose(args(None, false, &["--arch", "a5", "--release", "--package=b"])).unwrap();
        assert_eq!((c.package.as_deref(), c.profile), (Some("b"), "release"));
        assert_eq!(c.rest, ["--arch", "a5"]);
        let c = choose(args(None, true, &["--arch", "a5"])).unwrap();
        assert_eq!(c.profile, "release");
        match choose(args(Some("a"), false, &["--package", "b"])) {
            Err(Error::Usage(m)) => assert_eq!(m, "--package is given twice (\"a\" and \"b\")"),
            other => panic!("{other:?}"),
        }
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
