//! Building through cargo: `cargo build --message-format json-render-diagnostics` in the
//! workspace root, its `compiler-artifact` messages read for the file a command needs (cargo's own
//! progress and diagnostics go to the terminal from the first second, never `--quiet`).

use std::path::PathBuf;
use std::process::Stdio;

use crate::workspace::{cargo, Error, SuitePackage, Workspace, BUILTIN_PACKAGE};

/// One `compiler-artifact` message of `cargo build --message-format json`.
#[derive(Debug)]
pub struct Artifact {
    /// The target's name.
    pub name: String,
    /// The target's kinds (`bin`, `lib`, `cdylib`, ...).
    pub kind: Vec<String>,
    /// Its executable, then its other files.
    pub files: Vec<PathBuf>,
}

/// Runs `cargo build ARGS --profile PROFILE` in `ws`'s root and returns the file of the
/// artifact `pick` chooses (its executable, else its first file).
pub fn cargo_build(
    ws: &Workspace,
    args: &[&str],
    profile: &str,
    pick: impl Fn(&Artifact) -> bool,
) -> Result<PathBuf, Error> {
    let what = format!("cargo build {} --profile {profile}", args.join(" "));
    let out = cargo()
        .current_dir(&ws.root)
        .args(["build", "--message-format", "json-render-diagnostics"])
        .args(args)
        .args(["--profile", profile])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::Failed(format!("cannot run {what}: {e}")))?;
    if !out.status.success() {
        return Err(Error::Failed(format!("{what} failed ({})", out.status)));
    }
    artifacts(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .filter(|a| pick(a))
        .find_map(|a| a.files.into_iter().next())
        .ok_or_else(|| Error::Failed(format!("{what} named no such artifact")))
}

/// The artifacts of cargo's JSON messages (other lines are ignored).
pub fn artifacts(text: &str) -> Vec<Artifact> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-artifact")
        .map(|v| {
            let exe = v["executable"].as_str().map(PathBuf::from);
            let files = exe.into_iter().chain(
                v["filenames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str().map(PathBuf::from)),
            );
            Artifact {
                name: v["target"]["name"].as_str().unwrap_or_default().to_owned(),
                kind: v["target"]["kind"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|k| k.as_str().map(str::to_owned))
                    .collect(),
                files: files.collect(),
            }
        })
        .collect()
}

/// Builds the suite binary of `suite` with `profile` and returns its path. The built-in suite
/// (`runner`) is built with both drivers (`--features sim,onboard`).
pub fn build_suite(ws: &Workspace, suite: &SuitePackage, profile: &str) -> Result<PathBuf, Error> {
    let mut args = vec!["-p", &suite.package, "--bin", &suite.binary];
    if suite.package == BUILTIN_PACKAGE {
        args.extend(["--features", "sim,onboard"]);
    }
    cargo_build(ws, &args, profile, |a| {
        a.kind.iter().any(|k| k == "bin") && a.name == suite.binary
    })
}

/// A child's exit status as this process's (a signal `n` becomes 128 + n, as shells report it).
pub fn exit_code(status: std::process::ExitStatus) -> std::process::ExitCode {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitCode;
    match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        (None, Some(s)) => ExitCode::from(u8::try_from(128 + s).unwrap_or(1)),
        (None, None) => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binaries_are_the_bin_artifacts_of_the_build() {
        let text = [
            r#"{"reason":"compiler-artifact","target":{"name":"runner","kind":["lib"]},"executable":null,"filenames":["/t/debug/librunner.rlib"]}"#,
            r#"{"reason":"compiler-artifact","target":{"name":"build-script-build","kind":["custom-build"]},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"name":"onboard-suite","kind":["bin"]},"executable":"/t/debug/onboard-suite","filenames":["/t/debug/onboard-suite"]}"#,
            r#"{"reason":"build-finished","success":true}"#,
            "not json",
        ]
        .join("\n");
        let bins: Vec<PathBuf> = artifacts(&text)
            .into_iter()
            .filter(|a| a.kind.iter().any(|k| k == "bin"))
            .flat_map(|a| a.files.into_iter().next())
            .collect();
        assert_eq!(bins, [PathBuf::from("/t/debug/onboard-suite")]);
    }
}
