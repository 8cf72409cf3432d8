//! The "other process" of the cross-process rows: one measurement in a process of its own (the
//! `sim-helper` binary of this crate, found with [`crate::bins::sim_helper`]), and running it.
//!
//! Usage: `sim-helper ARCH MODE SIM_ROOT LOCK_DIR CARD`, with MODE `hang-then-exit`,
//! `hang-then-finalize` or `compute`; exit 0 when the measurement came out as the seed says, 1
//! otherwise (the line on stdout says what happened), 2 on a setup error.

use std::path::Path;
use std::process::ExitCode;

use platform_common::driver::DeviceId;
use platform_common::runner_base::RunError;
use platform_common::Arch;

use crate::bench::{hang_request, CaseOutcome, SimBench, TestkitError};
use crate::measure::compute_in_fresh_process;

/// What a helper process is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelperMode {
    /// Run the hang, then exit without finalize (the process exit is the only cleanup).
    HangThenExit,
    /// Run the hang, then finalize with the lease (force reset).
    HangThenFinalize,
    /// Run the compute case and check it.
    Compute,
}

impl HelperMode {
    /// The mode's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Self::HangThenExit => "hang-then-exit",
            Self::HangThenFinalize => "hang-then-finalize",
            Self::Compute => "compute",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [Self::HangThenExit, Self::HangThenFinalize, Self::Compute]
            .into_iter()
            .find(|m| m.name() == s)
    }
}

/// The arguments of a helper process: `ARCH MODE SIM_ROOT LOCK_DIR CARD`.
pub fn helper_args(mode: HelperMode, bench: &SimBench, card: DeviceId) -> Vec<String> {
    vec![
        bench.arch().name().to_owned(),
        mode.name().to_owned(),
        bench.sim.root.display().to_string(),
        bench.leases.dir.display().to_string(),
        card.to_string(),
    ]
}

/// Exit status of a helper whose measurement came out as the seed says it should (the hang
/// poisoned its runner; the compute case passed).
pub const HELPER_EXPECTED: u8 = 0;
/// Exit status of a helper whose measurement came out otherwise (printed on stdout).
pub const HELPER_UNEXPECTED: u8 = 1;
/// Exit status of a helper that could not measure (bad arguments, setup failure).
pub const HELPER_SETUP: u8 = 2;

/// The body of the `sim-helper` binary: one measurement in this process, one line on stdout
/// (`hang: ...`, `compute: passed`, ...), exit status [`HELPER_EXPECTED`], [`HELPER_UNEXPECTED`]
/// or [`HELPER_SETUP`].
pub fn helper_main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match helper(&args) {
        Ok((line, expected)) => {
            println!("{line}");
            ExitCode::from(if expected {
                HELPER_EXPECTED
            } else {
                HELPER_UNEXPECTED
            })
        }
        Err(e) => {
            eprintln!("helper: {e}");
            ExitCode::from(HELPER_SETUP)
        }
    }
}

fn helper(args: &[String]) -> Result<(String, bool), String> {
    let [arch, mode, root, lock_dir, card] = args else {
        return Err(format!("expected ARCH MODE SIM_ROOT LOCK_DIR CARD, got {args:?}"));
    };
    let arch: Arch = arch.parse().map_err(|e| format!("{e}"))?;
    let mode = HelperMode::parse(mode).ok_or_else(|| format!("unknown mode {mode:?}"))?;
    let card: DeviceId = card
        .parse()
        .map_err(|_| format!("card {card:?} is not a number"))?;
    let bench = SimBench::new(crate::entry(arch), Path::new(root), Path::new(lock_dir));
    let setup = |e: TestkitError| e.to_string();
    match mode {
        HelperMode::Compute => {
            let outcome = compute_in_fresh_process(&bench, card, 3).map_err(setup)?;
            let line = match &outcome {
                CaseOutcome::Passed => "compute: passed".to_owned(),
                CaseOutcome::Mismatch(m) => format!("compute: mismatch: {m}"),
                CaseOutcome::Error(e) => format!("compute: error: {e}"),
            };
            Ok((line, outcome.passed()))
        }
        HelperMode::HangThenExit | HelperMode::HangThenFinalize => {
            let process = bench.try_process().map_err(setup)?;
            let lease = bench.lease(card).map_err(setup)?;
            let mut runner = bench
                .runner(&process, bench.config(card, None).map_err(setup)?)
                .map_err(setup)?;
            let hang = runner.run(&hang_request());
            let poisoned = matches!(hang, Err(RunError::Device(_))) && runner.is_unusable();
            let mut line = match &hang {
                Ok(_) => "hang: finished (not poisoned)".to_owned(),
                Err(e) => format!("hang: {e}"),
            };
            if mode == HelperMode::HangThenFinalize {
                match runner.finalize(&lease) {
                    Ok(_) => line.push_str("; finalize: recovered"),
                    Err(e) => line.push_str(&format!("; finalize: {e}")),
                }
            } else {
                // Leave as a crashing worker would: no teardown at all.
                std::mem::forget(runner);
            }
            Ok((line, poisoned))
        }
    }
}

/// Runs a helper binary at `exe` and waits for it to exit: its status code and stdout.
pub fn run_helper(
    exe: &Path,
    mode: HelperMode,
    bench: &SimBench,
    card: DeviceId,
) -> std::io::Result<(Option<i32>, String)> {
    let out = std::process::Command::new(exe)
        .args(helper_args(mode, bench, card))
        .output()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.stderr.is_empty() {
        text.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    Ok((out.status.code(), text))
}
