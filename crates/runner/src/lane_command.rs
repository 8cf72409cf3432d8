//! The lane command: the program, arguments and environment the dispatcher starts a lane with,
//! for a suite binary's own lanes and for foreign lanes (a pytest lane, `cardguard pytest`).

use std::ffi::OsString;
use std::path::PathBuf;

use crate::cli::{Cli, SuiteArg};
use crate::dispatch::{self, LaneCommand};
use crate::platform::{self, PlatformInfo};
use crate::report::model::Platform;

/// Lanes that are another program (a pytest lane), for [`dispatch_foreign`]: its path, the
/// arguments before the card's flag, and extra environment.
#[derive(Debug, Clone)]
pub struct ForeignLanes {
    /// The program.
    pub exe: PathBuf,
    /// Its arguments (the card's flag follows them).
    pub args: Vec<OsString>,
    /// Extra environment for every lane.
    pub env: Vec<(OsString, OsString)>,
}

/// The variables a foreign lane reads its run settings from (a suite binary's lane gets flags).
pub const ENV_LANE_ARCH: &str = "CARDGUARD_LANE_ARCH";
/// See [`ENV_LANE_ARCH`]: `--health-check`'s value.
pub const ENV_LANE_HEALTH_CHECK: &str = "CARDGUARD_LANE_HEALTH_CHECK";
/// See [`ENV_LANE_ARCH`]: the directory of the arch's kernel blobs.
pub const ENV_LANE_KERNEL_DIR: &str = "CARDGUARD_LANE_KERNEL_DIR";
/// See [`ENV_LANE_ARCH`]: the ACL codes of class `hardware` (comma-separated), on which a lane
/// stops at once, resetting nothing: the dispatcher takes its card out ("needs service").
pub const ENV_LANE_HARDWARE_CODES: &str = "CARDGUARD_LANE_HARDWARE_CODES";

/// The value of [`ENV_LANE_HARDWARE_CODES`]: every ACL-numbered code of the table whose class
/// is `hardware`, in table order.
pub fn hardware_codes() -> String {
    platform_common::code_table::CODE_TABLE
        .iter()
        .filter(|i| {
            i.space == platform_common::code_table::CodeSpace::Acl
                && i.class == platform_common::code_table::CodeClass::Hardware
        })
        .map(|i| i.raw.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The run settings a suite binary's lane gets as flags.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LaneSettings {
    /// `--health-check`.
    pub health_check: crate::lane::HealthCheck,
    /// `--keep-sdma-workers`.
    pub keep_sdma_workers: bool,
    /// The run's selected cases use SDMA (a preflight runs the SDMA probe too).
    pub suite_sdma: bool,
}

pub(crate) fn lane_command(
    cli: &Cli,
    info: &PlatformInfo,
    faults: Option<&String>,
    lane: LaneSettings,
) -> Result<LaneCommand, String> {
    let health_check = lane.health_check;
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find this executable to start lanes: {e}"))?;
    let args: Vec<OsString> = [
        "--arch",
        cli.arch.name(),
        "--platform",
        info.platform.name(),
        "--suite",
        cli.suite.name(),
        "--health-check",
        health_check.name(),
    ]
    .iter()
    .map(OsString::from)
    .chain(
        cli.test_hooks
            .then(|| OsString::from(crate::protocol::TEST_HOOKS_FLAG)),
    )
    .collect();
    let mut args = args;
    for (flag, on) in [
        ("--keep-sdma-workers", lane.keep_sdma_workers),
        ("--suite-sdma", lane.suite_sdma),
    ] {
        if on {
            args.push(OsString::from(flag));
        }
    }
    if cli.suite == SuiteArg::Bench {
        // The lanes build the same benchmark suite.
        for (flag, n) in [
            ("--bench-cases", cli.bench_cases),
            ("--bench-classes", cli.bench_classes),
        ] {
            args.push(OsString::from(flag));
            args.push(OsString::from(n.to_string()));
        }
    }
    if cli.suite == SuiteArg::Makespan {
        for (flag, n) in [
            ("--bench-seed", cli.bench_seed),
            ("--bench-workload", u64::from(cli.bench_workload)),
        ] {
            args.push(OsString::from(flag));
            args.push(OsString::from(n.to_string()));
        }
    }
    let mut env = Vec::new();
    if info.platform == Platform::Onboard {
        // The CANN-ABI simulator library reads its plan from the environment.
        env.extend(platform::lane_fault_env(faults));
        // The arch libsim_acl.so simulates (real CANN ignores the variable).
        env.push((
            OsString::from("ONBOARD_SIM_ARCH"),
            OsString::from(cli.arch.name()),
        ));
    }
    Ok(LaneCommand {
        style: dispatch::LaneStyle::SuiteBinary,
        exe,
        args,
        env,
    })
}

/// The lane command of foreign lanes: their program and arguments, the suite binary's lane
/// environment, and the run settings a suite binary's lane would get as flags.
pub(crate) fn foreign_command(
    f: &ForeignLanes,
    cli: &Cli,
    own: LaneCommand,
    health_check: crate::lane::HealthCheck,
) -> LaneCommand {
    let mut env = own.env;
    env.extend(f.env.iter().cloned());
    env.push((ENV_LANE_ARCH.into(), cli.arch.name().into()));
    // The simulated library finds its cards' records from its process's binary; a foreign
    // lane's binary is not this one, so it is told where this process's library looks.
    #[cfg(feature = "sim")]
    if std::env::var_os(platform_common::sim::ENV_SIM_ROOT).is_none() {
        if let Ok(c) = platform_common::sim::SimConfig::from_env(platform::arch_entry(cli.arch).facts) {
            env.push((platform_common::sim::ENV_SIM_ROOT.into(), c.root.into()));
        }
    }
    env.push((ENV_LANE_HEALTH_CHECK.into(), health_check.name().into()));
    env.push((ENV_LANE_HARDWARE_CODES.into(), hardware_codes().into()));
    env.push((
        ENV_LANE_KERNEL_DIR.into(),
        platform_common::kernel::blob_dir(cli.arch).into(),
    ));
    LaneCommand {
        style: dispatch::LaneStyle::Foreign,
        exe: f.exe.clone(),
        args: f.args.clone(),
        env,
    }
}
