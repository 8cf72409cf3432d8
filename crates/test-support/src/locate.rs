//! Finding `libsim_acl.so` from tests of any crate, building it first when needed.
//!
//! A cdylib is not something a dev-dependency reliably leaves at a known path, so tests call
//! [`built_library`]: once per test process it builds `sim-acl` ([`crate::cargo_build`]) and
//! returns `<target>/<profile>/libsim_acl.so`. [`instance`] copies it under a fresh name beside a
//! settings file: each copy loads as a separate library, which is a separate simulated process
//! with its own sim root.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use platform_common::acl::{AclConfig, AclDriver};
use platform_common::sim::{SimConfig, ENV_SIM_CARDS, ENV_SIM_ROOT};
use platform_common::timeouts::{ENV_OP_EXECUTE_US, ENV_SCHEDULER_MS, ENV_STREAM_SYNC_MS};

use sim_acl::settings::{render, settings_file, ENV_SIM_ARCH};

use crate::cargo_build::cargo_build;

/// The library's file name.
pub const FILE_NAME: &str = "libsim_acl.so";

pub use crate::cargo_build::LocateError;

/// Builds `libsim_acl.so` (once per process) and returns its path.
pub fn built_library() -> Result<PathBuf, LocateError> {
    static BUILT: OnceLock<Result<PathBuf, LocateError>> = OnceLock::new();
    BUILT
        .get_or_init(|| cargo_build("sim-acl", &[], FILE_NAME))
        .clone()
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
/// `dir`, loaded with [`AclDriver::load_for`] the arch of `cfg` (its register mapping).
pub fn acl_process(dir: &Path, cfg: &SimConfig) -> Result<AclDriver, LocateError> {
    let path = sim_instance(dir, cfg)?;
    let hal = crate::entry(cfg.arch.arch).hal;
    AclDriver::load_for(&AclConfig::files([&path]), hal).map_err(|e| LocateError::Load {
        path,
        reason: e.to_string(),
    })
}
