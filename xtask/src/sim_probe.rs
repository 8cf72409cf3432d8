//! `cargo xtask sim-probe --arch a5|a2a3`: the seed's within-process probe on a simulated card.
//!
//! For each of four variants it runs, 10 times, `hang` then `noop` on raw driver calls (a tiny
//! init: set device, op-execute timeout, AICore and AICPU streams, a2a3 `halMemCtl`, kernel
//! registration; a run: a5 `halResMap` per core, an argument buffer, AICore then AICPU launch,
//! AICPU sync then AICore sync) and prints one line per variant: raw driver (cascades), soft reset
//! then re-init (failed re-inits), force reset then re-init (cascades), fresh process (cascades),
//! each naming the calls and codes that failed. The fresh process is a real child: this binary
//! re-executed with a hidden `--fresh-child` flag. State lives in a temp sim root and lock dir.
//! This command never uses the runner for the seed's rows; it shows what the bare driver does.
//! The SDMA tables of issue 22 follow (`sim_probe_sdma.rs`), some through the runner (its
//! handoff wait and force reset).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Duration;

use cardguard_arches::entry as arch_entry;
use platform_common::kernel::load_builtin;
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::runner_base::{ArchEntry, RawWorker};
use platform_common::sim::{start_run, FaultPlan, SimConfig, SimDriver};
use platform_common::timeouts::{TimeoutProfile, Timeouts};
use platform_common::{Arch, DeviceId, Driver, DriverError};

/// The card the probe uses.
const CARD: DeviceId = 0;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The arch to simulate: a5 or a2a3.
    #[arg(long)]
    arch: Arch,
    /// Runs of each variant.
    #[arg(long, default_value_t = 10)]
    iterations: u32,
    /// Op-execute timeout in ms (the scheduler timeout is half of it, the stream sync 4 times it).
    #[arg(long, default_value_t = 100)]
    op_timeout_ms: u64,
    /// Internal: run as the fresh child process of the last variant.
    #[arg(long, hide = true)]
    fresh_child: bool,
    /// Internal: the sim root of the parent's run (with --fresh-child).
    #[arg(long, hide = true)]
    root: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    match probe(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: sim-probe: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn timeouts(op_ms: u64) -> anyhow::Result<Timeouts> {
    if op_ms < 2 {
        anyhow::bail!("--op-timeout-ms {op_ms}: must be at least 2 (the scheduler timeout is half of it)");
    }
    let t = Timeouts {
        scheduler: Duration::from_millis(op_ms / 2),
        op_execute: Duration::from_millis(op_ms),
        stream_sync: Duration::from_millis(op_ms.saturating_mul(4)),
    };
    t.validate(TimeoutProfile::Sim)
        .map_err(|e| anyhow::anyhow!("--op-timeout-ms {op_ms}: {e}"))?;
    Ok(t)
}

fn probe(args: &Args) -> anyhow::Result<ExitCode> {
    let t = timeouts(args.op_timeout_ms)?;
    if args.fresh_child {
        let root = args
            .root
            .clone()
            .ok_or_else(|| anyhow::anyhow!("--fresh-child needs --root"))?;
        let facts = arch_entry(args.arch).facts;
        return Ok(fresh_child(SimConfig::new(facts, root).with_timeouts(t)?));
    }
    if args.iterations == 0 {
        anyhow::bail!("--iterations must be at least 1");
    }
    let dir = tempfile::Builder::new()
        .prefix("cardguard-sim-probe-")
        .tempdir()?;
    let cfg = SimConfig::new(arch_entry(args.arch).facts, dir.path().join("sim")).with_timeouts(t)?;
    let locks = LeaseConfig {
        dir: dir.path().join("locks"),
    };
    start_run(&cfg, &[CARD], &FaultPlan::default())?;
    let p = Prober::new(&cfg)?;
    let n = args.iterations;
    println!(
        "sim-probe {}: simulated card {CARD}, {n} runs per variant; \
         timeouts: scheduler {:?}, op-execute {:?}, stream-sync {:?}",
        args.arch, t.scheduler, t.op_execute, t.stream_sync
    );

    let rows = [
        ("raw driver, cascades", n, p.variant(n, |p| p.raw())),
        (
            "soft reset then re-init, failed re-inits",
            n,
            p.variant(n, |p| p.soft_reset()),
        ),
        (
            "force reset then re-init, cascades",
            0,
            p.variant(n, |p| p.force_reset(&locks)),
        ),
        (
            "fresh process, cascades",
            0,
            p.variant(n, |p| p.fresh_process(dir.path())),
        ),
    ];
    let mut as_expected = true;
    for (label, expected, tally) in &rows {
        let tally = tally.as_ref().map_err(|e| anyhow::anyhow!("{label}: {e:#}"))?;
        println!("{label}: {}/{n} ({})", tally.count, tally.describe());
        as_expected &= tally.count == *expected;
    }
    as_expected &= crate::sim_probe_sdma::print_tables(args.arch, t)?;
    if as_expected {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "sim-probe: the counts differ from the seed's \
             (raw {n}/{n}, soft {n}/{n}, force 0/{n}, fresh 0/{n})"
        );
        Ok(ExitCode::FAILURE)
    }
}

/// What one run of a variant saw.
#[derive(Debug, Default)]
struct Outcome {
    /// The hang's failure (expected in every variant).
    hang: Option<String>,
    /// The counted failure: the cascade or the failed re-init.
    failed: Option<String>,
    /// Failures logged on the way that did not stop anything.
    logged: Vec<String>,
}

/// The tally of one variant.
#[derive(Debug, Default)]
struct Tally {
    count: u32,
    hang: BTreeSet<String>,
    failed: BTreeSet<String>,
    logged: BTreeSet<String>,
}

impl Tally {
    fn describe(&self) -> String {
        let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(" / ");
        let mut parts = vec![format!("hang: {}", join(&self.hang))];
        if self.failed.is_empty() {
            parts.push("then: no call failed".to_owned());
        } else {
            parts.push(format!("then: {}", join(&self.failed)));
        }
        if !self.logged.is_empty() {
            parts.push(format!("logged: {}", join(&self.logged)));
        }
        parts.join("; ")
    }
}

fn show(e: &DriverError) -> String {
    format!("{} {}", e.call, e.code)
}

struct Prober<'a> {
    cfg: &'a SimConfig,
    entry: ArchEntry,
    hang: platform_common::kernel::KernelBlob,
    noop: platform_common::kernel::KernelBlob,
}

impl<'a> Prober<'a> {
    fn new(cfg: &'a SimConfig) -> anyhow::Result<Self> {
        Ok(Self {
            cfg,
            entry: *arch_entry(cfg.arch.arch),
            hang: load_builtin(cfg.arch.arch, "hang")?,
            noop: load_builtin(cfg.arch.arch, "noop")?,
        })
    }

    fn variant(&self, n: u32, one: impl Fn(&Self) -> anyhow::Result<Outcome>) -> anyhow::Result<Tally> {
        let mut tally = Tally::default();
        for _ in 0..n {
            let o = one(self)?;
            tally
                .hang
                .insert(o.hang.unwrap_or_else(|| "did not fail".to_owned()));
            if let Some(f) = o.failed {
                tally.count += 1;
                tally.failed.insert(f);
            }
            tally.logged.extend(o.logged);
        }
        Ok(tally)
    }

    /// The seed's naive worker (with the arch crate's register mapping) opened on `drv`; what
    /// init logged and went on from goes to `logged`.
    fn open(&self, drv: &Arc<SimDriver>, logged: &mut Vec<String>) -> Result<RawWorker, DriverError> {
        let mut errors = Vec::new();
        let worker = (self.entry.open_raw_worker)(drv.clone(), CARD, &self.cfg.timeouts, &mut errors);
        logged.extend(errors.iter().map(show));
        worker
    }

    /// A fresh driver, init, and the hang (which must fail).
    fn hang_first(&self, o: &mut Outcome) -> anyhow::Result<(Arc<SimDriver>, RawWorker)> {
        let drv = Arc::new(SimDriver::new(self.cfg.clone()));
        let mut w = self
            .open(&drv, &mut o.logged)
            .map_err(|e| anyhow::anyhow!("the first init failed: {e}"))?;
        match w.run(&self.hang, 1) {
            Ok(()) => anyhow::bail!("the hang kernel was not reaped"),
            Err(e) => o.hang = Some(show(&e)),
        }
        Ok((drv, w))
    }

    fn raw(&self) -> anyhow::Result<Outcome> {
        let mut o = Outcome::default();
        let (_drv, mut w) = self.hang_first(&mut o)?;
        o.failed = w.run(&self.noop, 1).err().map(|e| show(&e));
        Ok(o)
    }

    fn soft_reset(&self) -> anyhow::Result<Outcome> {
        let mut o = Outcome::default();
        let (drv, _) = self.hang_first(&mut o)?;
        if let Err(e) = drv.reset_device(CARD) {
            o.logged.push(show(&e));
        }
        o.failed = self.open(&drv, &mut o.logged).err().map(|e| show(&e));
        Ok(o)
    }

    fn force_reset(&self, locks: &LeaseConfig) -> anyhow::Result<Outcome> {
        let mut o = Outcome::default();
        let (drv, _) = self.hang_first(&mut o)?;
        let lease = DeviceLease::acquire(locks, CARD, "sim-probe")?;
        o.failed = drv
            .reset_device_force(&lease)
            .and_then(|()| self.open(&drv, &mut o.logged)?.run(&self.noop, 1))
            .err()
            .map(|e| show(&e));
        Ok(o)
    }

    fn fresh_process(&self, dir: &Path) -> anyhow::Result<Outcome> {
        let mut o = Outcome::default();
        let (drv, _) = self.hang_first(&mut o)?;
        // The poisoned process is gone before the fresh one opens the card.
        drop(drv);
        let exe = std::env::current_exe()?;
        let out = Command::new(exe)
            .args(["sim-probe", "--fresh-child", "--arch", self.cfg.arch.name()])
            .arg("--op-timeout-ms")
            .arg(self.cfg.timeouts.op_execute.as_millis().to_string())
            .arg("--root")
            .arg(&self.cfg.root)
            .current_dir(dir)
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line: serde_json::Value = serde_json::from_str(text.trim()).map_err(|e| {
            anyhow::anyhow!(
                "the fresh process printed {text:?} ({e}); stderr: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
        if line["ok"] != true {
            o.failed = Some(line["error"].as_str().unwrap_or("unknown failure").to_owned());
        }
        Ok(o)
    }
}

/// The fresh process: init and noop on a new driver; prints one JSON line.
fn fresh_child(cfg: SimConfig) -> ExitCode {
    let result = Prober::new(&cfg).map(|p| {
        let drv = Arc::new(SimDriver::new(cfg.clone()));
        p.open(&drv, &mut Vec::new()).and_then(|mut w| w.run(&p.noop, 1))
    });
    let line = match result {
        Ok(Ok(())) => serde_json::json!({ "ok": true }),
        Ok(Err(e)) => serde_json::json!({ "ok": false, "error": show(&e) }),
        Err(e) => serde_json::json!({ "ok": false, "error": format!("cannot load kernels: {e}") }),
    };
    println!("{line}");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::driver::DriverCall;

    #[test]
    fn timeouts_follow_the_op_timeout_and_bad_ones_are_named() {
        let t = timeouts(100).unwrap();
        assert_eq!(
            (t.scheduler, t.op_execute, t.stream_sync),
            (
                Duration::from_millis(50),
                Duration::from_millis(100),
                Duration::from_millis(400)
            )
        );
        for bad in [0, 1] {
            let e = timeouts(bad).unwrap_err();
            assert!(e.to_string().contains(&format!("--op-timeout-ms {bad}")), "{e}");
        }
    }

    #[test]
    fn shown_errors_name_call_and_code() {
        let e = DriverError::new(
            DriverCall::HalResMap,
            platform_common::error::codes::HAL_NO_PROCESS,
        );
        assert_eq!(show(&e), "halResMap rc=62 (DRV_ERROR_NO_PROCESS)");
    }
}
