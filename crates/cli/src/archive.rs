//! `cargo cardguard archive --arch a5|a2a3 [--package NAME] [--bin NAME] [--profile NAME] -o
//! FILE` (and `cargo xtask archive`): one `.tar.zst` a card host runs the matrix from, with no
//! Rust toolchain and no checkout.
//!
//! It builds the suite binary (`--package`, default the workspace's suite package, see
//! [`crate::workspace`]; its binary named by `cargo metadata`, or `--bin` when the package has
//! several) and `libsim_acl.so` with cargo's `--profile` (default `release`), asks the built
//! binary which kernel blobs its suite needs on that arch (its `--kernel-files`: the probe kernel
//! and every kernel its cases declare for the arch; a declared kernel without a blob is refused
//! here, naming the kernel and the case; a binary that is not a cardguard suite fails here) and
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

use crate::cargo_build::{build_suite, cargo_build};
use crate::workspace::{cargo, Error, Workspace};

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The arch whose kernel blobs go in: a5 or a2a3.
    #[arg(long)]
    arch: String,
    /// The package of the suite binary (default: the workspace's one suite package).
    #[arg(long, value_name = "NAME")]
    package: Option<String>,
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

/// Runs the command.
pub fn run(ws: &Workspace, args: Args) -> ExitCode {
    match archive(ws, &args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: archive: {e}");
            e.exit_code()
        }
    }
}

fn archive(ws: &Workspace, args: &Args) -> Result<String, Error> {
    let arch: Arch = args
        .arch
        .parse()
        .map_err(|e| Error::Usage(format!("--arch: {e}")))?;
    let suite = ws.suite(args.package.as_deref(), args.bin.as_deref())?;
    let bin = suite.binary.clone();
    let exe = build_suite(ws, &suite, &args.profile)?;
    let sim_acl = build_sim_acl(ws, &args.profile)?;
    let kernels = kernel_files(&exe, arch)?;
    let (git_revision, git_dirty) = git_state(&ws.root);
    let manifest = Manifest {
        format: FORMAT,
        arch,
        suite: SuiteInfo {
            package: suite.package.clone(),
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

/// Builds `libsim_acl.so` with `profile`: `-p sim-acl` in a workspace that has it (this
/// repository), else from the runner's own source tree (`crates/sim-acl` beside `crates/runner`,
/// which `cargo pkgid runner` names) into the workspace's target directory.
fn build_sim_acl(ws: &Workspace, profile: &str) -> Result<PathBuf, Error> {
    let cdylib = |a: &crate::cargo_build::Artifact| a.kind.iter().any(|k| k == "cdylib");
    if ws.packages.iter().any(|p| p.name == "sim-acl") {
        return cargo_build(ws, &["-p", "sim-acl"], profile, cdylib);
    }
    let out = cargo()
        .current_dir(&ws.root)
        .args(["pkgid", "runner"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::Failed(format!("cannot run cargo pkgid runner: {e}")))?;
    let id = String::from_utf8_lossy(&out.stdout);
    let runner_dir = runner_source_dir(id.trim()).ok_or_else(|| {
        Error::Usage(format!(
            "the suite's runner is no path dependency (cargo pkgid runner: {:?}): libsim_acl.so has no source to build",
            id.trim()
        ))
    })?;
    let manifest = runner_dir.join("../sim-acl/Cargo.toml");
    if !manifest.is_file() {
        return Err(Error::Usage(format!(
            "no sim-acl crate beside the runner at {}",
            runner_dir.display()
        )));
    }
    let manifest = manifest.display().to_string();
    let target = ws.target_dir.display().to_string();
    cargo_build(
        ws,
        &["--manifest-path", &manifest, "--target-dir", &target],
        profile,
        cdylib,
    )
}

/// The source directory of a `path+file://DIR#...` package id (`cargo pkgid`), else `None`.
fn runner_source_dir(pkgid: &str) -> Option<PathBuf> {
    let path = pkgid.strip_prefix("path+file://")?;
    let path = path.split('#').next()?;
    Some(PathBuf::from(path))
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

#[cfg(test)]
#[test]
fn a_path_package_id_names_its_directory() {
    assert_eq!(
        runner_source_dir("path+file:///src/cardguard/crates/runner#0.1.0"),
        Some(PathBuf::from("/src/cardguard/crates/runner"))
    );
    assert_eq!(
        runner_source_dir("registry+https://github.com/rust-lang/crates.io-index#runner@0.1.0"),
        None
    );
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
