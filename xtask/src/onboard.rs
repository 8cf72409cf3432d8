//! The user commands in this repository: `cargo xtask onboard|archive|build-kernels|cards|
//! merge-reports` are thin delegations to `cardguard-cli` (what `cargo cardguard` runs), with
//! this workspace and its built-in suite (`runner`'s `cardguard-suite`) as the default package;
//! and the paths and the suite build the developer commands (bench, chaos, soak, docs) share.
//!
//! `cargo xtask onboard [--package NAME] ARGS` builds a suite binary (debug profile) and runs
//! it with ARGS, passing its exit status through (0 all passed, 1 a verdict failed, 2 bad usage):
//! `cargo cardguard run` with `runner` as the default package.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cardguard_cli::workspace::BUILTIN_PACKAGE;
use cardguard_cli::Workspace;

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

/// This workspace (from `cargo metadata`), with the built-in suite as the default package.
pub fn workspace() -> Result<Workspace, cardguard_cli::Error> {
    let mut ws = Workspace::discover(&workspace_root())?;
    ws.default_package = Some(BUILTIN_PACKAGE.to_owned());
    Ok(ws)
}

/// Runs a user command on this workspace; an unreadable workspace is a one-line error.
pub fn delegate(command: impl FnOnce(&Workspace) -> ExitCode) -> ExitCode {
    match workspace() {
        Ok(ws) => command(&ws),
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// Builds `cardguard-suite` with both drivers (release when asked) and returns its path.
pub fn build_suite(release: bool) -> Result<PathBuf, String> {
    let ws = workspace().map_err(|e| e.to_string())?;
    let suite = ws.suite(None, None).map_err(|e| e.to_string())?;
    let profile = if release { "release" } else { "dev" };
    cardguard_cli::cargo_build::build_suite(&ws, &suite, profile).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    /// The config file is where the suite binary looks for it (a tool names it without the runner).
    #[test]
    fn the_config_file_is_where_the_suite_binary_looks() {
        assert_eq!(cardguard_cli::run::CONFIG_PATH, runner::config::CONFIG_PATH);
        assert_eq!(cardguard_cli::run::ENV_CONFIG, runner::config::ENV_CONFIG);
    }
}
