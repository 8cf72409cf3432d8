//! The cargo workspace a command works in, read from `cargo metadata --no-deps` (any workspace,
//! not only this repository's), and which of its packages is the suite.
//!
//! A suite package is a package with a binary target that depends on the `runner` crate (a normal
//! dependency), or the `runner` package itself (its `cardguard-suite`, the built-in suite). The
//! tool's own package (`cargo-cardguard`) is no suite. `--package NAME` picks one; without it the
//! workspace's default (xtask: `runner`) or its only suite package is taken, and anything else is a
//! one-line usage error naming the candidates (exit 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

/// The package of the built-in suite (its binary `cardguard-suite`).
pub const BUILTIN_PACKAGE: &str = "runner";

/// The built-in suite's binary.
pub const BUILTIN_BINARY: &str = "cardguard-suite";

/// The package of this tool (it depends on the runner but is no suite).
pub const TOOL_PACKAGE: &str = "cargo-cardguard";

/// Why a command stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad usage or a workspace without the asked package: exit 2.
    #[error("{0}")]
    Usage(String),
    /// A build, a cargo query, a child or a write failed: exit 1.
    #[error("{0}")]
    Failed(String),
}

impl Error {
    /// The exit status of this error: 2 for usage, 1 otherwise.
    pub fn exit_code(&self) -> std::process::ExitCode {
        match self {
            Error::Usage(_) => std::process::ExitCode::from(2),
            Error::Failed(_) => std::process::ExitCode::FAILURE,
        }
    }
}

/// One package of the workspace, as far as the commands care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// Its name.
    pub name: String,
    /// Its binary targets.
    pub bins: Vec<String>,
    /// Whether it has a normal dependency on the runner.
    pub depends_on_runner: bool,
}

impl Package {
    /// Whether it can be a suite package: the runner itself, or a binary crate over the runner.
    pub fn is_suite(&self) -> bool {
        self.name == BUILTIN_PACKAGE
            || (self.name != TOOL_PACKAGE && self.depends_on_runner && !self.bins.is_empty())
    }
}

/// The suite a command builds: its package and binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuitePackage {
    /// The package.
    pub package: String,
    /// Its binary.
    pub binary: String,
}

/// The workspace: its root, its target directory and its packages.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The workspace root (cargo runs there).
    pub root: PathBuf,
    /// Cargo's target directory (`CARGO_TARGET_DIR` or the workspace's).
    pub target_dir: PathBuf,
    /// The workspace members.
    pub packages: Vec<Package>,
    /// The package taken when `--package` is not given (xtask: the built-in suite).
    pub default_package: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    workspace_root: PathBuf,
    target_directory: PathBuf,
    packages: Vec<MetaPackage>,
}

#[derive(Debug, Deserialize)]
struct MetaPackage {
    name: String,
    #[serde(default)]
    targets: Vec<MetaTarget>,
    #[serde(default)]
    dependencies: Vec<MetaDependency>,
}

#[derive(Debug, Deserialize)]
struct MetaTarget {
    name: String,
    #[serde(default)]
    kind: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct MetaDependency {
    name: String,
    /// `null` for a normal dependency, `"dev"` or `"build"` otherwise.
    #[serde(default)]
    kind: Option<String>,
}

/// `cargo metadata`'s arguments: the workspace's own packages, as JSON.
const METADATA: [&str; 5] = ["metadata", "--format-version", "1", "--no-deps", "--quiet"];

/// The cargo to run: `CARGO` (set when cargo runs a subcommand, a build script or a test), else
/// `cargo` on PATH.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

impl Workspace {
    /// The workspace of `dir` (cargo's search: `dir` and its parents), from `cargo metadata`.
    pub fn discover(dir: &Path) -> Result<Self, Error> {
        let mut cmd = cargo();
        cmd.current_dir(dir).args(METADATA);
        Self::metadata(cmd, dir)
    }

    /// The workspace of the package or workspace manifest `manifest` (`--manifest-path`).
    pub fn discover_manifest(manifest: &Path) -> Result<Self, Error> {
        let mut cmd = cargo();
        cmd.args(METADATA).arg("--manifest-path").arg(manifest);
        Self::metadata(cmd, manifest)
    }

    /// `cargo metadata` run as `cmd` (its error names `at`).
    fn metadata(mut cmd: Command, at: &Path) -> Result<Self, Error> {
        let out = cmd
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| Error::Failed(format!("cannot run cargo metadata: {e}")))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let line = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
            return Err(Error::Usage(format!(
                "no cargo workspace at {}: {}",
                at.display(),
                line.strip_prefix("error: ").unwrap_or(line)
            )));
        }
        Self::from_metadata(&out.stdout)
    }

    /// The workspace that `cargo metadata --format-version 1 --no-deps` printed as `json`.
    pub fn from_metadata(json: &[u8]) -> Result<Self, Error> {
        let meta: Metadata = serde_json::from_slice(json)
            .map_err(|e| Error::Failed(format!("cargo metadata printed no workspace: {e}")))?;
        let packages = meta
            .packages
            .into_iter()
            .map(|p| Package {
                bins: p
                    .targets
                    .iter()
                    .filter(|t| t.kind.iter().any(|k| k == "bin"))
                    .map(|t| t.name.clone())
                    .collect(),
                depends_on_runner: p
                    .dependencies
                    .iter()
                    .any(|d| d.name == BUILTIN_PACKAGE && d.kind.is_none()),
                name: p.name,
            })
            .collect();
        Ok(Workspace {
            root: meta.workspace_root,
            target_dir: meta.target_directory,
            packages,
            default_package: None,
        })
    }

    /// The suite package and binary: `package` when given (`bin` picks among its binaries), else
    /// the default package, else the only suite package of the workspace.
    pub fn suite(&self, package: Option<&str>, bin: Option<&str>) -> Result<SuitePackage, Error> {
        let candidates: Vec<&str> = self
            .packages
            .iter()
            .filter(|p| p.is_suite())
            .map(|p| p.name.as_str())
            .collect();
        let name = match (package, self.default_package.as_deref(), candidates.as_slice()) {
            (Some(p), _, _) | (None, Some(p), _) => p,
            (None, None, [only]) => only,
            (None, None, []) => {
                return Err(Error::Usage(format!(
                    "no suite package in the workspace at {} (a suite is a package with a binary that depends on runner; packages: {})",
                    self.root.display(),
                    list(self.packages.iter().map(|p| p.name.as_str()))
                )))
            }
            (None, None, many) => {
                return Err(Error::Usage(format!(
                    "several suite packages in the workspace ({}): name one with --package",
                    many.join(", ")
                )))
            }
        };
        let Some(pkg) = self.packages.iter().find(|p| p.name == name) else {
            return Err(Error::Usage(format!(
                "--package {name}: no such package in the workspace at {} (suite packages: {})",
                self.root.display(),
                list(candidates.iter().copied())
            )));
        };
        if let Some(b) = bin.filter(|b| !pkg.bins.iter().any(|x| x == b)) {
            return Err(Error::Usage(format!(
                "--bin {b}: package {name} has no such binary (binaries: {})",
                list(pkg.bins.iter().map(String::as_str))
            )));
        }
        if pkg.name == BUILTIN_PACKAGE {
            return Ok(SuitePackage {
                package: pkg.name.clone(),
                binary: bin.unwrap_or(BUILTIN_BINARY).to_owned(),
            });
        }
        if !pkg.is_suite() {
            return Err(Error::Usage(format!(
                "--package {name} is no suite: a suite is a package with a binary that depends on runner (suite packages: {})",
                list(candidates.iter().copied())
            )));
        }
        let binary = match (bin, pkg.bins.as_slice()) {
            (Some(b), _) => b.to_owned(),
            (None, [only]) => only.clone(),
            (None, _) => {
                return Err(Error::Usage(format!(
                    "--package {name} has several binaries ({}): name the suite with --bin",
                    list(pkg.bins.iter().map(String::as_str))
                )))
            }
        };
        Ok(SuitePackage {
            package: pkg.name.clone(),
            binary,
        })
    }
}

fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Takes `--package NAME` (or `--package=NAME`) out of the arguments, wherever it stands.
pub fn split_package(args: Vec<String>) -> Result<(Option<String>, Vec<String>), String> {
    let mut package = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let value = if a == "--package" {
            Some(it.next().ok_or("--package needs a package name")?)
        } else {
            a.strip_prefix("--package=").map(str::to_owned)
        };
        match value {
            None => rest.push(a),
            Some(v) if v.is_empty() || v.starts_with('-') => {
                return Err(format!("--package needs a package name, not {v:?}"))
            }
            Some(v) if package.is_some() => return Err(format!("--package is given twice (second: {v:?})")),
            Some(v) => package = Some(v),
        }
    }
    Ok((package, rest))
}

/// Takes every `flag` (a switch without a value) out of the arguments: whether one was there.
pub fn split_flag(args: Vec<String>, flag: &str) -> (bool, Vec<String>) {
    let before = args.len();
    let rest: Vec<String> = args.into_iter().filter(|a| a != flag).collect();
    (rest.len() != before, rest)
}

#[cfg(test)]
mod tests {
    // Tests of the workspace module: the suite package found from `cargo metadata`'s packages, and
    // `--package` taken out of a command line.

    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    /// A workspace of `packages`: (name, bins, depends on runner).
    fn workspace(packages: &[(&str, &[&str], bool)]) -> Workspace {
        let packages: Vec<serde_json::Value> = packages
            .iter()
            .map(|(name, bins, runner)| {
                let mut targets: Vec<serde_json::Value> = bins
                    .iter()
                    .map(|b| serde_json::json!({"name": b, "kind": ["bin"]}))
                    .collect();
                targets.push(serde_json::json!({"name": name, "kind": ["lib"]}));
                let deps = if *runner {
                    serde_json::json!([{"name": "runner", "kind": null}, {"name": "tempfile", "kind": "dev"}])
                } else {
                    serde_json::json!([{"name": "runner", "kind": "dev"}])
                };
                serde_json::json!({"name": name, "targets": targets, "dependencies": deps})
            })
            .collect();
        let meta = serde_json::json!({
            "workspace_root": "/ws",
            "target_directory": "/ws/target",
            "packages": packages,
        });
        Workspace::from_metadata(meta.to_string().as_bytes()).unwrap()
    }

    fn usage(r: Result<SuitePackage, Error>) -> String {
        match r {
            Err(Error::Usage(m)) => m,
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn the_one_suite_package_is_found_without_package() {
        let ws = workspace(&[
            ("my-suite", &["my-suite"], true),
            ("helpers", &[], true),
            ("tool", &["tool"], false),
        ]);
        let s = ws.suite(None, None).unwrap();
        assert_eq!((s.package.as_str(), s.binary.as_str()), ("my-suite", "my-suite"));
        assert_eq!(ws.root, Path::new("/ws"));
        assert_eq!(ws.target_dir, Path::new("/ws/target"));
    }

    #[test]
    fn several_suite_packages_are_an_error_naming_them() {
        let ws = workspace(&[
            ("a-suite", &["a"], true),
            ("b-suite", &["b"], true),
            (TOOL_PACKAGE, &["cargo-cardguard"], true),
        ]);
        let e = usage(ws.suite(None, None));
        assert_eq!(
            e,
            "several suite packages in the workspace (a-suite, b-suite): name one with --package"
        );
        assert_eq!(ws.suite(Some("b-suite"), None).unwrap().binary, "b");
    }

    #[test]
    fn no_suite_package_is_an_error_naming_the_packages() {
        let ws = workspace(&[("lib-only", &[], true), ("tool", &["tool"], false)]);
        let e = usage(ws.suite(None, None));
        assert!(e.starts_with("no suite package in the workspace at /ws"), "{e}");
        assert!(e.ends_with("packages: lib-only, tool)"), "{e}");
    }

    #[test]
    fn an_unknown_or_non_suite_package_is_an_error_naming_the_candidates() {
        let ws = workspace(&[("my-suite", &["my-suite"], true), ("tool", &["tool"], false)]);
        let e = usage(ws.suite(Some("my-suit"), None));
        assert_eq!(
            e,
            "--package my-suit: no such package in the workspace at /ws (suite packages: my-suite)"
        );
        let e = usage(ws.suite(Some("tool"), None));
        assert!(e.starts_with("--package tool is no suite"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn several_binaries_need_bin() {
        let ws = workspace(&[("my-suite", &["one", "two"], true)]);
        assert!(usage(ws.suite(None, None)).ends_with("(one, two): name the suite with --bin"));
        assert_eq!(ws.suite(None, Some("two")).unwrap().binary, "two");
        assert!(usage(ws.suite(None, Some("three")))
            .starts_with("--bin three: package my-suite has no such binary"));
    }

    #[test]
    fn the_default_package_and_the_builtin_suite() {
        let mut ws = workspace(&[
            ("runner", &[], false),
            ("onboard-suite", &["onboard-suite"], true),
        ]);
        assert!(usage(ws.suite(None, None))
            .starts_with("several suite packages in the workspace (runner, onboard-suite)"));
        ws.default_package = Some(BUILTIN_PACKAGE.to_owned());
        let s = ws.suite(None, None).unwrap();
        assert_eq!(
            (s.package.as_str(), s.binary.as_str()),
            ("runner", BUILTIN_BINARY)
        );
    }

    #[test]
    fn package_is_taken_out_wherever_it_stands() {
        let (p, rest) =
            split_package(strings(&["--arch", "a5", "--package", "onboard-suite", "--list"])).unwrap();
        assert_eq!(p.as_deref(), Some("onboard-suite"));
        assert_eq!(rest, ["--arch", "a5", "--list"]);
        let (p, rest) = split_package(strings(&["--package=x", "--arch", "a5"])).unwrap();
        assert_eq!((p.as_deref(), rest), (Some("x"), strings(&["--arch", "a5"])));
        let (p, rest) = split_package(strings(&["--arch", "a2a3"])).unwrap();
        assert_eq!((p, rest), (None, strings(&["--arch", "a2a3"])));
        for bad in [
            &["--package"][..],
            &["--package", "--arch"],
            &["--package=a", "--package", "b"],
            &["--package="],
        ] {
            let e = split_package(strings(bad)).unwrap_err();
            assert!(e.starts_with("--package "), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_switch_is_taken_out_wherever_it_stands() {
        let (on, rest) = split_flag(strings(&["--arch", "a5", "--release", "--list"]), "--release");
        assert!(on);
        assert_eq!(rest, ["--arch", "a5", "--list"]);
        let (on, rest) = split_flag(strings(&["--arch", "a5"]), "--release");
        assert_eq!((on, rest), (false, strings(&["--arch", "a5"])));
    }

    #[test]
    fn a_manifest_path_names_its_workspace_from_anywhere() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .unwrap();
        let ws = Workspace::discover_manifest(&repo.join("crates/runner/Cargo.toml")).unwrap();
        assert_eq!(ws.root, repo);
        assert!(ws.packages.iter().any(|p| p.name == BUILTIN_PACKAGE));
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("Cargo.toml");
        match Workspace::discover_manifest(&missing) {
            Err(Error::Usage(m)) => assert!(
                m.starts_with(&format!("no cargo workspace at {}: ", missing.display())),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        match Workspace::discover(dir.path()) {
            Err(Error::Usage(m)) => assert!(
                m.starts_with(&format!("no cargo workspace at {}: ", dir.path().display())),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }
}
