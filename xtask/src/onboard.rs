//! `cargo xtask onboard [--package NAME] ARGS`: builds a suite binary (debug profile) and runs it
//! with ARGS, passing its exit status through (0 all passed, 1 a verdict failed, 2 bad usage).
//!
//! Without `--package` (or with `--package runner`) the binary is the built-in suite's
//! `cardguard-suite` (`cargo build -p runner --bin cardguard-suite` with both drivers); with
//! `--package NAME` it is the one binary of package NAME (a suite in its own crate, e.g.
//! `examples/onboard-suite`), found in cargo's build messages. `--package` may stand anywhere in
//! ARGS; every other flag is the suite binary's: see `cargo xtask onboard --help`. The workspace's
//! `.config/cardguard.toml`, when there is one, is passed as `--config` unless the arguments or
//! `CARDGUARD_CONFIG` name a config (so it applies from any current directory).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use serde::Deserialize;

/// The package of the built-in suite.
pub const BUILTIN_PACKAGE: &str = "runner";

/// Where a workspace keeps its config file (the suite binary's `config::CONFIG_PATH`: a test
/// holds the two together).
pub const CONFIG_PATH: &str = ".config/cardguard.toml";

/// The variable that names the config file (the suite binary's `config::ENV_CONFIG`).
pub const ENV_CONFIG: &str = "CARDGUARD_CONFIG";

/// Arguments: `--package NAME`, and everything else is passed to the suite binary.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The suite binary's arguments (`--arch a5|a2a3`, ...), and `--package NAME`: the package
    /// whose binary is the suite (default: runner, the built-in `cardguard-suite`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    let (package, rest) = match split_package(args.rest) {
        Ok(split) => split,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let exe = match build_package_suite(package.as_deref().unwrap_or(BUILTIN_PACKAGE)) {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let env_config = std::env::var_os(ENV_CONFIG).is_some();
    let config = workspace_config(&workspace_root(), &rest, env_config);
    match Command::new(&exe)
        .args(config.iter().flatten())
        .args(&rest)
        .status()
    {
        Ok(status) => exit_code(status),
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", exe.display());
            ExitCode::from(2)
        }
    }
}

/// `--config ROOT/.config/cardguard.toml` when that file exists and the arguments
/// name no config (`--config`, `--no-config`) nor does `CARDGUARD_CONFIG` (`env_config`): the
/// workspace's config applies wherever `cargo xtask onboard` is started (the suite binary's own
/// search starts from the current directory, which `cargo --manifest-path` may put outside).
pub fn workspace_config(root: &Path, args: &[String], env_config: bool) -> Option<[String; 2]> {
    let named = args
        .iter()
        .any(|a| a == "--config" || a.starts_with("--config=") || a == "--no-config");
    let file = root.join(CONFIG_PATH);
    (!named && !env_config && file.is_file()).then(|| ["--config".to_owned(), file.display().to_string()])
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

/// The suite binary of `package` (debug): the built-in one for [`BUILTIN_PACKAGE`], else the
/// package's one binary.
pub fn build_package_suite(package: &str) -> Result<PathBuf, String> {
    if package == BUILTIN_PACKAGE {
        return build_suite(false);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut child = Command::new(cargo)
        .current_dir(workspace_root())
        .args([
            "build",
            "-p",
            package,
            "--bins",
            "--message-format=json-render-diagnostics",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot run cargo build: {e}"))?;
    let stdout = child.stdout.take().ok_or("cargo's stdout is not piped")?;
    let lines: Vec<String> = BufReader::new(stdout).lines().map_while(Result::ok).collect();
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("building package {package:?} failed ({status})"));
    }
    let bins = binaries_of(lines.iter().map(String::as_str));
    match bins.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("package {package:?} has no binary to run as a suite")),
        many => Err(format!(
            "package {package:?} has {} binaries ({}); a suite package has one",
            many.len(),
            many.iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[derive(Debug, Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    executable: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
struct Target {
    #[serde(default)]
    kind: Vec<String>,
}

/// The binaries in cargo's JSON messages of `cargo build -p NAME --bins` (other lines are
/// ignored): only the selected package has `bin` targets in such a build (its dependencies are
/// libraries and build scripts).
fn binaries_of<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in lines {
        let Ok(m) = serde_json::from_str::<Message>(line) else {
            continue;
        };
        let is_bin = m
            .target
            .as_ref()
            .is_some_and(|t| t.kind.iter().any(|k| k == "bin"));
        if let (true, true, Some(exe)) = (m.reason == "compiler-artifact", is_bin, m.executable) {
            if !out.contains(&exe) {
                out.push(exe);
            }
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The config file is where the suite binary looks for it (a tool names it without the runner).
    #[test]
    fn the_config_file_is_where_the_suite_binary_looks() {
        assert_eq!(CONFIG_PATH, runner::config::CONFIG_PATH);
        assert_eq!(ENV_CONFIG, runner::config::ENV_CONFIG);
    }

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
    fn the_binaries_are_the_bin_artifacts_of_the_build() {
        let lines = [
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"]},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"kind":["custom-build"]},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"kind":["bin"]},"executable":"/t/debug/onboard-suite"}"#,
            r#"{"reason":"build-finished","success":true}"#,
            "not json",
        ];
        assert_eq!(binaries_of(lines), [PathBuf::from("/t/debug/onboard-suite")]);
    }
}
