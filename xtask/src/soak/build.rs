//! Building every test binary of the workspace and finding their executables.
//!
//! This module owns the one `cargo test --workspace --all-features --no-run
//! --message-format=json` of a soak and the reading of its `compiler-artifact` messages: every
//! artifact built with `profile.test == true` that has an executable is a test binary, named by
//! its package and target. It never runs a test binary (see `exec`).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

/// A test binary of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestBinary {
    /// `<package>/<target>` (`<package>/lib` for a library's unit tests).
    pub label: String,
    /// The package's name.
    pub package: String,
    /// The executable.
    pub exe: PathBuf,
    /// The package root (the directory of its `Cargo.toml`): the binary's working directory and
    /// `CARGO_MANIFEST_DIR`, as cargo runs it.
    pub package_root: PathBuf,
}

/// Building the test binaries failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// cargo could not be started.
    #[error("failed to start `cargo test --no-run`: {0}")]
    Spawn(#[source] std::io::Error),
    /// Reading cargo's messages failed.
    #[error("failed to read cargo's messages: {0}")]
    Read(#[source] std::io::Error),
    /// cargo failed (a compile error).
    #[error("`cargo test --workspace --all-features --no-run` failed ({0})")]
    Cargo(std::process::ExitStatus),
    /// cargo built nothing to run.
    #[error("`cargo test --no-run` reported no test binary")]
    NoBinaries,
}

/// The fields of a cargo JSON message a soak reads.
#[derive(Debug, Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    package_id: String,
    #[serde(default)]
    manifest_path: Option<PathBuf>,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    profile: Option<Profile>,
    #[serde(default)]
    executable: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
struct Target {
    name: String,
    #[serde(default)]
    kind: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Profile {
    test: bool,
}

/// Builds every test binary of the workspace (cargo's diagnostics go to this process's stderr)
/// and returns them in cargo's build order, each once.
pub fn build_test_binaries(workspace_root: &Path) -> Result<Vec<TestBinary>, BuildError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut child = Command::new(cargo)
        .current_dir(workspace_root)
        .args([
            "test",
            "--workspace",
            "--all-features",
            "--no-run",
            "--message-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(BuildError::Spawn)?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut lines = Vec::new();
    for line in BufReader::new(stdout).lines() {
        lines.push(line.map_err(BuildError::Read)?);
    }
    let status = child.wait().map_err(BuildError::Read)?;
    if !status.success() {
        return Err(BuildError::Cargo(status));
    }
    let binaries = test_binaries(lines.iter().map(String::as_str));
    if binaries.is_empty() {
        return Err(BuildError::NoBinaries);
    }
    Ok(binaries)
}

/// The test binaries named by cargo's JSON messages (lines that are not JSON are ignored).
pub fn test_binaries<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<TestBinary> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for line in lines {
        let Ok(m) = serde_json::from_str::<Message>(line) else {
            continue;
        };
        if m.reason != "compiler-artifact" || !m.profile.as_ref().is_some_and(|p| p.test) {
            continue;
        }
        let (Some(exe), Some(target), Some(manifest)) = (m.executable, m.target, m.manifest_path) else {
            continue;
        };
        if !seen.insert(exe.clone()) {
            continue;
        }
        let package_root = manifest
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let package = package_name(&m.package_id, &package_root);
        let is_lib = target.kind.iter().any(|k| k.contains("lib"));
        let target_name = if is_lib { "lib" } else { target.name.as_str() };
        out.push(TestBinary {
            label: format!("{package}/{target_name}"),
            package,
            exe,
            package_root,
        });
    }
    out
}

/// A package's name from its id: `path+file:///a/b/runner#0.1.0` (the name is the directory's) or
/// `path+file:///a/b/tests#cardguard-tests@0.1.0` (the name is spelt out), or the old form
/// `runner 0.1.0 (path+file:///...)`.
fn package_name(id: &str, root: &Path) -> String {
    if let Some((_, frag)) = id.rsplit_once('#') {
        if let Some((name, _version)) = frag.split_once('@') {
            return name.to_owned();
        }
        if let Some(dir) = root.file_name() {
            return dir.to_string_lossy().into_owned();
        }
    }
    match id.split_once(' ') {
        Some((name, _)) if !name.is_empty() => name.to_owned(),
        _ => root
            .file_name()
            .map_or_else(|| id.to_owned(), |d| d.to_string_lossy().into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(id: &str, manifest: &str, name: &str, kind: &str, test: bool, exe: Option<&str>) -> String {
        serde_json::json!({
            "reason": "compiler-artifact",
            "package_id": id,
            "manifest_path": manifest,
            "target": {"name": name, "kind": [kind]},
            "profile": {"test": test},
            "executable": exe,
        })
        .to_string()
    }

    #[test]
    fn only_test_profile_executables_count_each_once() {
        let lines = [
            artifact(
                "path+file:///w/crates/runner#0.1.0",
                "/w/crates/runner/Cargo.toml",
                "runner",
                "lib",
                true,
                Some("/t/deps/runner-1"),
            ),
            // The library itself (not a test build) and a build script: no executable to soak.
            artifact(
                "path+file:///w/crates/runner#0.1.0",
                "/w/crates/runner/Cargo.toml",
                "runner",
                "lib",
                false,
                None,
            ),
            artifact(
                "path+file:///w/crates/runner#0.1.0",
                "/w/crates/runner/Cargo.toml",
                "cardguard-suite",
                "bin",
                false,
                Some("/t/cardguard-suite"),
            ),
            artifact(
                "path+file:///w/tests#cardguard-tests@0.1.0",
                "/w/tests/Cargo.toml",
                "lease",
                "test",
                true,
                Some("/t/deps/lease-2"),
            ),
            artifact(
                "path+file:///w/crates/runner#0.1.0",
                "/w/crates/runner/Cargo.toml",
                "cardguard-suite",
                "bin",
                true,
                Some("/t/deps/cardguard_suite-3"),
            ),
            artifact(
                "path+file:///w/tests#cardguard-tests@0.1.0",
                "/w/tests/Cargo.toml",
                "lease",
                "test",
                true,
                Some("/t/deps/lease-2"),
            ),
            r#"{"reason":"build-finished","success":true}"#.to_owned(),
            "warning: not json".to_owned(),
        ];
        let got = test_binaries(lines.iter().map(String::as_str));
        let labels: Vec<&str> = got.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(
            labels,
            ["runner/lib", "cardguard-tests/lease", "runner/cardguard-suite"]
        );
        assert_eq!(got[1].package_root, Path::new("/w/tests"));
        assert_eq!(got[1].package, "cardguard-tests");
        assert_eq!(got[0].exe, Path::new("/t/deps/runner-1"));
    }

    #[test]
    fn package_names_come_from_every_id_form() {
        let root = Path::new("/w/crates/platform-a5");
        assert_eq!(
            package_name("path+file:///w/crates/platform-a5#0.1.0", root),
            "platform-a5"
        );
        assert_eq!(
            package_name("path+file:///w/tests#cardguard-tests@0.1.0", root),
            "cardguard-tests"
        );
        assert_eq!(
            package_name("platform-a5 0.1.0 (path+file:///w/crates/platform-a5)", root),
            "platform-a5"
        );
    }
}
