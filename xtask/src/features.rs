//! `cargo xtask features`: every feature combination of every workspace crate that has features
//! builds (`cargo check`), so a real-card host's `-p runner --no-default-features --features
//! onboard` and a build without the simulator never rot. Features are additive (`sim`, `onboard`),
//! so the check is the powerset of each crate's own features (its `default` aside: it is one of
//! the sets already).
//!
//! The crates and their features come from `cargo metadata`, so a new crate or feature is checked
//! without a change here. The test of this module runs the whole check (it is what CI runs, inside
//! `cargo test`). This file never builds anything itself but through cargo.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

/// `cargo xtask features`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the combinations without checking them.
    #[arg(long)]
    pub list: bool,
}

/// One `cargo check` to run: a package with exactly these features (defaults off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combination {
    /// The package.
    pub package: String,
    /// Its features, sorted.
    pub features: Vec<String>,
}

impl std::fmt::Display for Combination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "-p {} --no-default-features --features '{}'",
            self.package,
            self.features.join(",")
        )
    }
}

fn cargo() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace root")
        .to_path_buf()
}

/// Every package of the workspace that declares features, with the powerset of its features
/// (`default` left out), from `cargo metadata`'s JSON.
pub fn combinations(metadata: &serde_json::Value) -> Vec<Combination> {
    let mut out = Vec::new();
    let Some(packages) = metadata["packages"].as_array() else {
        return out;
    };
    for p in packages {
        let Some(name) = p["name"].as_str() else { continue };
        let mut features: Vec<String> = p["features"]
            .as_object()
            .map(|m| m.keys().filter(|k| *k != "default").cloned().collect())
            .unwrap_or_default();
        if features.is_empty() {
            continue;
        }
        features.sort();
        for mask in 0u32..(1 << features.len()) {
            let set = features
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, f)| f.clone())
                .collect();
            out.push(Combination {
                package: name.to_owned(),
                features: set,
            });
        }
    }
    out
}

fn metadata(root: &Path) -> Result<serde_json::Value> {
    let out = Command::new(cargo())
        .args(["metadata", "--offline", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout).context("cargo metadata printed no JSON")
}

/// Checks every combination; returns the ones that do not build, with cargo's first error line.
pub fn check_all(root: &Path) -> Result<Vec<(Combination, String)>> {
    let mut failed = Vec::new();
    for c in combinations(&metadata(root)?) {
        let out = Command::new(cargo())
            .args([
                "check",
                "--offline",
                "--quiet",
                "-p",
                &c.package,
                "--no-default-features",
            ])
            .args(["--features", &c.features.join(",")])
            .current_dir(root)
            .output()
            .with_context(|| format!("cannot run cargo check {c}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err
                .lines()
                .find(|l| l.starts_with("error"))
                .unwrap_or("cargo check failed")
                .to_owned();
            failed.push((c, first));
        }
    }
    Ok(failed)
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    let root = root();
    if args.list {
        return match metadata(&root) {
            Ok(m) => {
                for c in combinations(&m) {
                    println!("{c}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        };
    }
    match check_all(&root) {
        Ok(failed) if failed.is_empty() => {
            println!("features: every combination builds");
            ExitCode::SUCCESS
        }
        Ok(failed) => {
            for (c, e) in &failed {
                println!("FAIL cargo check {c}: {e}");
            }
            println!("features: {} combination(s) do not build", failed.len());
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_powerset_leaves_default_out_and_skips_crates_without_features() {
        let m = serde_json::json!({ "packages": [
            { "name": "a", "features": { "default": ["sim"], "sim": [], "onboard": [] } },
            { "name": "b", "features": {} },
        ]});
        let got: Vec<String> = combinations(&m).iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "-p a --no-default-features --features ''",
                "-p a --no-default-features --features 'onboard'",
                "-p a --no-default-features --features 'sim'",
                "-p a --no-default-features --features 'onboard,sim'",
            ]
        );
    }

    /// What CI runs: every feature combination of every crate builds.
    #[test]
    fn every_feature_combination_of_every_crate_builds() {
        let failed = check_all(&root()).unwrap();
        let lines: Vec<String> = failed
            .iter()
            .map(|(c, e)| format!("cargo check {c}: {e}"))
            .collect();
        assert!(
            lines.is_empty(),
            "feature combinations that do not build:\n{}",
            lines.join("\n")
        );
    }
}
