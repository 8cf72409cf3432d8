//! A lane process's start: its channel adopted, its platform and driver opened, its inherited
//! leases checked, its sink and test hooks read from the environment, then its session run to an
//! exit code.
//!
//! This file owns the lane's setup and its usage errors (exit [`crate::protocol::EXIT_USAGE`]).
//! It never runs a case (the session does) and never decides a heal or an escalation.

use platform_common::{Arch, DeviceId, DeviceLease};

use super::hooks;
use super::session;
use crate::case::Suite;
use crate::platform;
use crate::protocol::{self, EXIT_USAGE};
use crate::report::model::Platform;
use crate::sink::SinkWriter;
use crate::worker::WorkerEnv;

/// What a lane is started with.
#[derive(Debug, Clone)]
pub struct LaneConfig {
    /// The arch.
    pub arch: Arch,
    /// Sim or onboard.
    pub platform: Platform,
    /// The card (its lease is inherited).
    pub device: DeviceId,
    /// Whether the test-only hooks may be honoured ([`crate::protocol::TEST_HOOKS_FLAG`]).
    pub test_hooks: bool,
    /// A preflight lane ([`crate::protocol::PREFLIGHT_FLAG`]): probe the card and exit.
    pub preflight: bool,
    /// `--health-check`: when a worker's card is checked after a case.
    pub health_check: super::HealthCheck,
    /// `--keep-sdma-workers`: a pooled worker created with SDMA stays pooled after a pass.
    pub keep_sdma_workers: bool,
    /// The run's selected cases use SDMA: a preflight runs the SDMA probe too.
    pub suite_sdma: bool,
}

/// Runs a lane to its end; returns the process's exit code.
pub fn main(cfg: LaneConfig, suite: Suite) -> i32 {
    take_binary_name();
    let chan = match protocol::inherited() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: lane on card {}: {e}", cfg.device);
            return EXIT_USAGE;
        }
    };
    let info = match platform::info(cfg.platform, cfg.arch) {
        Ok(i) => i,
        Err(e) => {
            crate::output::err(format_args!("error: lane on card {}: {e}", cfg.device));
            return EXIT_USAGE;
        }
    };
    let lease = match DeviceLease::inherited(&info.leases) {
        Ok(l) if l.card() == cfg.device => l,
        Ok(l) => {
            crate::output::err(format_args!(
                "error: lane for card {} inherited the lease of card {}",
                cfg.device,
                l.card()
            ));
            return EXIT_USAGE;
        }
        Err(e) => {
            crate::output::err(format_args!("error: lane on card {}: {e}", cfg.device));
            return EXIT_USAGE;
        }
    };
    let extra = match DeviceLease::inherited_extra(&info.leases) {
        Ok(e) => e,
        Err(e) => {
            crate::output::err(format_args!("error: lane on card {}: {e}", cfg.device));
            return EXIT_USAGE;
        }
    };
    let (driver, probe) = match platform::open_driver(cfg.platform, cfg.arch) {
        Ok(d) => d,
        Err(e) => {
            crate::output::err(format_args!("error: lane on card {}: {e}", cfg.device));
            return EXIT_USAGE;
        }
    };
    let mut env = WorkerEnv::new(cfg.arch, driver, cfg.device, info.timeouts);
    env.probe_kernel = probe;
    if cfg.preflight {
        return super::preflight::run(env, &lease, chan, cfg.suite_sdma);
    }
    env.kernels = crate::kernels::registry(&info, cfg.arch, &suite);
    // A body's panic is caught per case; the hook records where it happened for the report.
    crate::exec::panic::install_hook();
    let sink = SinkWriter::from_env();
    tracing::debug!(device = cfg.device, sink = ?sink.as_ref().map(|s| s.path().to_owned()), "lane up");
    let hooks = if cfg.test_hooks {
        hooks::Hooks::from_env(cfg.device).with_channel(&chan)
    } else {
        hooks::Hooks::none()
    };
    session::Lane::new(env, lease, sink, suite, chan)
        .with_extra_cards(cfg.platform, extra)
        .with_hooks(hooks)
        .with_health_check(cfg.health_check)
        .with_keep_sdma_workers(cfg.keep_sdma_workers)
        .run()
}

/// A lane is exec'd through `/proc/self/fd/N` (the binary the run started with), so the kernel
/// names the process `N`; it takes its binary's name back from `argv[0]` (which the dispatcher
/// sets to the binary's path), as `ps -o comm` and `pgrep` show it (at most 15 bytes).
fn take_binary_name() {
    let Some(arg0) = std::env::args_os().next() else {
        return;
    };
    let Some(name) = std::path::Path::new(&arg0).file_name() else {
        return;
    };
    let mut bytes = std::os::unix::ffi::OsStrExt::as_bytes(name).to_vec();
    bytes.truncate(15);
    if let Ok(name) = std::ffi::CString::new(bytes) {
        let _ = rustix::thread::set_name(&name);
    }
}
