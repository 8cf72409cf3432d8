//! `cargo xtask archive --arch a5|a2a3 [--package NAME] [--bin NAME] [--profile NAME] -o FILE`:
//! one `.tar.zst` a card host runs the matrix from, with no Rust toolchain and no checkout.
//!
//! It builds the suite binary (`--package`, default `runner`; its binary named by `cargo
//! metadata`, or `--bin` when the package has several) and `libsim_acl.so` with cargo's
//! `--profile` (default `release`), asks the built binary which kernel blobs its suite needs on
//! that arch (its hidden `--kernel-files`; a binary that is not a cardguard suite fails here) and
//! writes the archive with `runner::archive::write_archive`: the manifest (arch, suite, git
//! revision, profile, a SHA-256 per member) first, then the binary, `kernels/<arch>/*.so` and
//! `lib/libsim_acl.so`, under the top directory `<binary>-<arch>/`. The format is the runner's
//! (`runner::archive`), which also unpacks it (`cardguard-suite --archive FILE`).
//!
//! Exit status: 0 when written; 1 when a build or the write failed; 2 for bad usage (a bad arch,
//! an unknown package, a package without one suite binary).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use cardguard_archive::{write_archive, Manifest, SourceFile, SuiteInfo, FORMAT, KERNELS_DIR, SIM_ACL_LIB};
use platform_common::Arch;

use crate::onboard::workspace_root;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The arch whose kernel blobs go in: a5 or a2a3.
    #[arg(long)]
    arch: String,
    /// The package of the suite binary.
    #[arg(long, value_name = "NAME", default_value = "runner")]
    package: String,
    /// The binary, when the package has more than one.
    #[arg(long, value_name = "NAME")]
    bin: Option<String>,
    /// The cargo profile to build with (`dev` for a quick, large debug archive).
    #[arg(long, value_name = "NAME", default_value = "release")]
    profile: String,
    /// The archive to write (conventionally `.tar.zst`).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
}

/// Why the archive was not written.
#[derive(Debug, thiserror::Error)]
enum Error {
    /// Bad usage: exit 2.
    #[error("{0}")]
    Usage(String),
    /// A build, a cargo query or the write failed: exit 1.
    #[error("{0}")]
    Failed(String),
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    match archive(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(Error::Usage(m)) => {
            eprintln!("error: archive: {m}");
            ExitCode::from(2)
        }
        Err(Error::Failed(m)) => {
            eprintln!("error: archive: {m}");
            ExitCode::FAILURE
        }
    }
}

fn archive(args: &Args) -> Result<String, Error> {
    let arch: Arch = args
        .arch
        .parse()
        .map_err(|e| Error::Usage(format!("--arch: {e}")))?;
    let root = workspace_root();
    let bin = suite_binary_name(&root, &args.package, args.bin.as_deref())?;
    let exe = cargo_build(&root, &["-p", &args.package, "--bin", &bin], &args.profile, |a| {
        a.kind.iter().any(|k| k == "bin") && a.name == bin
    })?;
    let sim_acl = cargo_build(&root, &["-p", "sim-acl"], &args.profile, |a| {
        a.kind.iter().any(|k| k == "cdylib")
    })?;
    let kernels = kernel_files(&exe, arch)?;
    let (git_revision, git_dirty) = git_state(&root);
    let manifest = Manifest {
        format: FORMAT,
        arch,
        suite: SuiteInfo {
            package: args.package.clone(),
            binary: bin.clone(),
        },
        git_revision,
        git_dirty,
        profile: args.profile.clone(),
        created_at: cardguard_report::rfc3339_utc(std::time::SystemTime::now()),
        members: Vec::new(),
    };
    let mut files = vec![SourceFile {
        path: bin.clone(),
        source: exe,
        executable: true,
    }];
    for k in &kernels {
        let name = k
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| Error::Failed(format!("kernel file {} has no UTF-8 name", k.display())))?;
        files.push(SourceFile {
            path: format!("{KERNELS_DIR}/{arch}/{name}"),
            source: k.clone(),
            executable: false,
        });
    }
    files.push(SourceFile {
        path: SIM_ACL_LIB.to_owned(),
        source: sim_acl,
        executable: false,
    });
    let top = format!("{bin}-{arch}");
    let written = write_archive(&args.output, &top, manifest, &files)
        .map_err(|e| Error::Failed(platform_common::message::error_chain(&e)))?;
    let bytes = std::fs::metadata(&args.output).map_or(0, |m| m.len());
    Ok(format!(
        "archive: {} ({:.1} MiB): {bin} ({}, {arch}), {} kernel blob(s), {SIM_ACL_LIB}; git {}{}",
        args.output.display(),
        bytes as f64 / f64::from(1u32 << 20),
        written.profile,
        kernels.len(),
        written.git_revision.as_deref().unwrap_or("unknown"),
        if written.git_dirty == Some(true) {
            " (dirty)"
        } else {
            ""
        },
    ))
}

/// The binary of `package` (from `cargo metadata`): `bin` when given and one of its binaries,
/// else its only binary.
fn suite_binary_name(root: &Path, package: &str, bin: Option<&str>) -> Result<String, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps", "--quiet"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::Failed(format!("cannot run cargo metadata: {e}")))?;
    if !out.status.success() {
        return Err(Error::Failed(format!("cargo metadata failed ({})", out.status)));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Failed(format!("cargo metadata printed no JSON: {e}")))?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let Some(pkg) = packages.iter().find(|p| p["name"] == package) else {
        let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
        return Err(Error::Usage(format!(
            "--package {package}: no such package in the workspace (packages: {})",
            names.join(", ")
        )));
    };
    let bins: Vec<String> = pkg["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    match (bin, bins.as_slice()) {
        (Some(b), _) if bins.iter().any(|x| x == b) => Ok(b.to_owned()),
        (Some(b), _) => Err(Error::Usage(format!(
            "--bin {b}: package {package} has no such binary (binaries: {})",
            list(&bins)
        ))),
        (None, [only]) => Ok(only.clone()),
        (None, []) => Err(Error::Usage(format!(
            "--package {package} has no binary: a suite is a binary crate whose main hands its suite to runner::app::main"
        ))),
        (None, _) => Err(Error::Usage(format!(
            "--package {package} has several binaries ({}): name the suite with --bin",
            list(&bins)
        ))),
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// One `compiler-artifact` message of `cargo build --message-format json`.
#[derive(Debug)]
struct Artifact {
    name: String,
    kind: Vec<String>,
    files: Vec<PathBuf>,
}

/// Runs `cargo build ARGS --profile PROFILE` and returns the file of the artifact `pick`
/// chooses (its executable, else its first file).
fn cargo_build(
    root: &Path,
    args: &[&str],
    profile: &str,
    pick: impl Fn(&Artifact) -> bool,
) -> Result<PathBuf, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        // Not --quiet: cargo's own progress shows from the first second of a cold build.
        .args(["build", "--message-format", "json-render-diagnostics"])
        .args(args)
        .args(["--profile", profile])
        .stderr(Stdio::inherit());
    let what = format!("cargo build {} --profile {profile}", args.join(" "));
    let out = cmd
        .output()
        .map_err(|e| Error::Failed(format!("cannot run {what}: {e}")))?;
    if !out.status.success() {
        return Err(Error::Failed(format!("{what} failed ({})", out.status)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
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
        .filter(|a| pick(a))
        .find_map(|a| a.files.into_iter().next())
        .ok_or_else(|| Error::Failed(format!("{what} named no artifact to archive")))
}

/// The kernel blob files the built suite binary says it needs on `arch` (`--kernel-files`).
fn kernel_files(exe: &Path, arch: Arch) -> Result<Vec<PathBuf>, Error> {
    let out = Command::new(exe)
        .args(["--arch", arch.name(), "--kernel-files"])
        .output()
        .map_err(|e| Error::Failed(format!("cannot run {}: {e}", exe.display())))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Usage(format!(
            "{} --kernel-files failed ({}): {} (a suite binary hands its suite to runner::app::main)",
            exe.display(),
            out.status,
            stderr.trim()
        )));
    }
    let files: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(PathBuf::from)
        .collect();
    if files.is_empty() {
        return Err(Error::Failed(format!("{} names no kernel file", exe.display())));
    }
    Ok(files)
}

/// `git rev-parse HEAD` of the workspace and whether tracked files changed; `None` outside git.
fn git_state(root: &Path) -> (Option<String>, Option<bool>) {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(root)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let rev = git(&["rev-parse", "HEAD"]).filter(|r| !r.is_empty());
    let dirty = rev
        .as_ref()
        .and_then(|_| git(&["status", "--porcelain", "--untracked-files=no"]))
        .map(|s| !s.is_empty());
    (rev, dirty)
}
