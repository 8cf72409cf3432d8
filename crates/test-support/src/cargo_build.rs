//! Building an artifact of this workspace from a test, for the profile and target directory the
//! test binary itself was built in: `libsim_acl.so` ([`crate::locate`]) and this crate's helper
//! binaries ([`crate::bins`]), which no dependency edge leaves at a known path.
//!
//! Cargo's own lock serialises concurrent builds; an up-to-date build costs a fraction of a
//! second. This file never runs what it built.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A test artifact (`libsim_acl.so`, a helper binary) could not be built, copied or loaded.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LocateError {
    /// The running executable's place gives no target directory.
    #[error("cannot tell the target directory from {0}")]
    NoTargetDir(PathBuf),
    /// `cargo build` failed.
    #[error("`{command}` failed: {detail}")]
    Build {
        /// The command run.
        command: String,
        /// Its status and the end of its stderr.
        detail: String,
    },
    /// The copy could not be loaded through the `acl` driver.
    #[error("cannot load {path} through the acl driver: {reason}")]
    Load {
        /// The copy.
        path: PathBuf,
        /// The load error.
        reason: String,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// The profile directory of the running executable (`<target>/<profile>`), and the profile.
fn profile_dir() -> Result<(PathBuf, String), LocateError> {
    let exe = std::env::current_exe().map_err(|e| LocateError::NoTargetDir(PathBuf::from(e.to_string())))?;
    let mut dir = exe.parent().map(Path::to_path_buf);
    if dir
        .as_deref()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "deps")
    {
        dir = dir.and_then(|d| d.parent().map(Path::to_path_buf));
    }
    let dir = dir.ok_or_else(|| LocateError::NoTargetDir(exe.clone()))?;
    let profile = dir
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .ok_or_else(|| LocateError::NoTargetDir(exe.clone()))?;
    Ok((dir, profile))
}

/// The target directory the running test binary was built in (`<target>/<profile>/..`).
pub(crate) fn target_dir() -> Result<PathBuf, LocateError> {
    let (dir, _) = profile_dir()?;
    dir.parent()
        .map(Path::to_path_buf)
        .ok_or(LocateError::NoTargetDir(dir))
}

/// Runs `cargo build -p package EXTRA...` for the profile and target directory the running
/// test binary was built in and returns `<target>/<profile>/<artifact>`.
pub(crate) fn cargo_build(package: &str, extra: &[&str], artifact: &str) -> Result<PathBuf, LocateError> {
    let (dir, profile) = profile_dir()?;
    let target = target_dir()?;
    let target = target.as_path();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args(["build", "--quiet", "-p", package])
        .args(extra)
        .arg("--target-dir")
        .arg(target)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    match profile.as_str() {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let command = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| LocateError::Build {
        command: command.clone(),
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
        return Err(LocateError::Build {
            command,
            detail: format!(
                "{}: {}",
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ),
        });
    }
    let built = dir.join(artifact);
    if built.is_file() {
        Ok(built)
    } else {
        Err(LocateError::Build {
            command,
            detail: format!("it left no {}", built.display()),
        })
    }
}
