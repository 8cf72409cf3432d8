//! Finding `libsim_acl.so` from tests of any crate, building it first when needed.
//!
//! A cdylib is not something a dev-dependency reliably leaves at a known path, so tests call
//! [`built_library`]: once per test process it runs `cargo build -p sim-acl` for the profile and
//! target directory the test binary itself was built in (cargo's own lock serialises concurrent
//! builds; an up-to-date build costs a fraction of a second), then returns
//! `<target>/<profile>/libsim_acl.so`. [`instance`] copies it under a fresh name beside a
//! settings file: each copy loads as a separate library, which is a separate simulated process
//! with its own sim root. This module is never used by the exports.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use platform_common::acl::{AclConfig, AclDriver};
use platform_common::sim::{SimConfig, ENV_SIM_CARDS, ENV_SIM_ROOT};
use platform_common::timeouts::{ENV_OP_EXECUTE_US, ENV_SCHEDULER_MS, ENV_STREAM_SYNC_MS};

use crate::settings::{render, settings_file, ENV_SIM_ARCH};

/// The library's file name.
pub const FILE_NAME: &str = "libsim_acl.so";

/// `libsim_acl.so` could not be built or copied.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LocateError {
    /// The running executable's place gives no target directory.
    #[error("cannot tell the target directory from {0}")]
    NoTargetDir(PathBuf),
    /// `cargo build -p sim-acl` failed.
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

/// Builds `libsim_acl.so` (once per process) and returns its path.
pub fn built_library() -> Result<PathBuf, LocateError> {
    static BUILT: OnceLock<Result<PathBuf, LocateError>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
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

fn build() -> Result<PathBuf, LocateError> {
    let (dir, profile) = profile_dir()?;
    let target = dir
        .parent()
        .ok_or_else(|| LocateError::NoTargetDir(dir.clone()))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args(["build", "--quiet", "-p", "sim-acl", "--target-dir"])
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
    let lib = dir.join(FILE_NAME);
    if lib.is_file() {
        Ok(lib)
    } else {
        Err(LocateError::Build {
            command,
            detail: format!("it left no {}", lib.display()),
        })
    }
}

/// Copies `lib` into `dir` under a name no other copy in this process has, with a settings file
/// holding `settings`; returns the copy's path. Loading it gives a fresh simulated process.
pub fn instance(lib: &Path, dir: &Path, settings: &[(&str, String)]) -> Result<PathBuf, LocateError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let copy = dir.join(format!("libsim_acl-{}-{n}.so", std::process::id()));
    let io = |path: &Path, e: std::io::Error| LocateError::Io {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    std::fs::copy(lib, &copy).map_err(|e| io(&copy, e))?;
    let file = settings_file(&copy);
    std::fs::write(&file, render(settings)).map_err(|e| io(&file, e))?;
    Ok(copy)
}

/// The settings that make a copy of the library simulate `cfg`'s cards.
pub fn settings_for(cfg: &SimConfig) -> Vec<(&'static str, String)> {
    vec![
        (ENV_SIM_ARCH, cfg.arch.name().to_owned()),
        (ENV_SIM_ROOT, cfg.root.display().to_string()),
        (ENV_SIM_CARDS, cfg.cards.to_string()),
        (ENV_SCHEDULER_MS, cfg.timeouts.scheduler.as_millis().to_string()),
        (ENV_OP_EXECUTE_US, cfg.timeouts.op_execute.as_micros().to_string()),
        (
            ENV_STREAM_SYNC_MS,
            cfg.timeouts.stream_sync.as_millis().to_string(),
        ),
    ]
}

/// [`built_library`], copied by [`instance`] into `dir` with [`settings_for`] `cfg`.
pub fn sim_instance(dir: &Path, cfg: &SimConfig) -> Result<PathBuf, LocateError> {
    instance(&built_library()?, dir, &settings_for(cfg))
}

/// A fresh simulated process of `cfg`'s machine behind the `acl` driver: a [`sim_instance`] in
/// `dir`, loaded with [`AclDriver::load`].
pub fn acl_process(dir: &Path, cfg: &SimConfig) -> Result<AclDriver, LocateError> {
    let path = sim_instance(dir, cfg)?;
    AclDriver::load(&AclConfig::files([&path])).map_err(|e| LocateError::Load {
        path,
        reason: e.to_string(),
    })
}
