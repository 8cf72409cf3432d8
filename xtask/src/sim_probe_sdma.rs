//! The SDMA tables of `cargo xtask sim-probe` (issue 22), printed after the seed's: one line per
//! row, each on a fresh simulated machine of its own (temp sim root and lock dir), judged against
//! what upstream measured (hw-native-sys/simpler `src/a2a3/platform/onboard/host/device_runner.cpp`;
//! #1124, #1664, #1896; pypto-lib #1240). The tests that assert the same rows, in process and
//! through `libsim_acl.so`, are `cardguard_test_support::suites::sdma_tables`; xtask links no
//! runner and no test kit, so the rows are rebuilt here on platform-common's driver and runner
//! base. This file only measures and prints.

use std::sync::Arc;

use cardguard_arches::entry as arch_entry;
use platform_common::driver::{DeviceId, Driver, SdmaOrigin, StreamFailureMode};
use platform_common::kernel::load_builtin;
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::runner_base::{probe_card, FinalizeError, RunRequest, RunnerConfig};
use platform_common::sdma::SDMA_PROBE_BYTES;
use platform_common::sim::{card_state, start_run, FaultPlan, SimConfig, SimDriver};
use platform_common::timeouts::Timeouts;
use platform_common::{Arch, DriverError};

/// The card the rows use.
const CARD: DeviceId = 0;

/// A machine of its own with `rule` on [`CARD`].
struct Machine {
    _dir: tempfile::TempDir,
    cfg: SimConfig,
    locks: LeaseConfig,
    arch: Arch,
}

impl Machine {
    fn new(arch: Arch, t: Timeouts, rule: &str) -> anyhow::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("cardguard-sim-probe-sdma-")
            .tempdir()?;
        let cfg = SimConfig::new(arch_entry(arch).facts, dir.path().join("sim")).with_timeouts(t)?;
        let plan: FaultPlan = if rule.is_empty() {
            FaultPlan::default()
        } else {
            format!("dev={CARD}:{rule}").parse()?
        };
        start_run(&cfg, &[CARD], &plan)?;
        let locks = LeaseConfig {
            dir: dir.path().join("locks"),
        };
        Ok(Self {
            _dir: dir,
            cfg,
            locks,
            arch,
        })
    }

    fn process(&self) -> Arc<SimDriver> {
        Arc::new(SimDriver::new(self.cfg.clone()))
    }

    fn lease(&self) -> anyhow::Result<DeviceLease> {
        Ok(DeviceLease::try_acquire(&self.locks, CARD, "sim-probe")?)
    }

    fn runner_cfg(&self, sdma: bool) -> anyhow::Result<RunnerConfig> {
        let mut c = RunnerConfig::new(CARD, self.cfg.timeouts);
        c.probe_kernel = Some(load_builtin(self.arch, "noop")?);
        c.sdma = sdma;
        Ok(c)
    }

    fn remote_event_waits(&self) -> anyhow::Result<u64> {
        Ok(card_state(&self.cfg, CARD)?.counters.remote_event_waits)
    }
}

fn show(r: &Result<(), DriverError>) -> String {
    match r {
        Ok(()) => "ok".to_owned(),
        Err(e) => format!("{} {}", e.call, e.code.raw),
    }
}

/// Set device, a stream in `mode`, two buffers, one case copy, the stream's sync.
fn copy_once(d: &dyn Driver, mode: StreamFailureMode, sync_ms: u32) -> Result<(), DriverError> {
    d.set_device(CARD)?;
    let s = d.create_stream()?;
    d.set_stream_failure_mode(s, mode)?;
    let (a, b) = (d.malloc(SDMA_PROBE_BYTES)?, d.malloc(SDMA_PROBE_BYTES)?);
    d.sdma_copy(s, b, a, SDMA_PROBE_BYTES, SdmaOrigin::Case)?;
    d.synchronize_stream_with_timeout(s, sync_ms)
}

/// Prints the SDMA rows; true when each is as upstream measured.
pub fn print_tables(arch: Arch, t: Timeouts) -> anyhow::Result<bool> {
    println!("SDMA (issue 22, as measured upstream):");
    let mut ok = true;
    let mut row = |label: &str, got: String, expected: bool| {
        let note = if expected { "" } else { "  (differs from upstream)" };
        println!("  {label}: {got}{note}");
        ok &= expected;
    };
    for (mode, code) in [
        (StreamFailureMode::StopOnFailure, 507015),
        (StreamFailureMode::ContinueOnFailure, 507046),
    ] {
        let m = Machine::new(arch, t, "sdma_fault@1")?;
        let r = copy_once(m.process().as_ref(), mode, 100);
        let expected = r.as_ref().err().map(|e| e.code.raw) == Some(code);
        row(
            &format!("sdma_fault on a {mode:?} stream, next sync"),
            show(&r),
            expected,
        );
    }

    let m = Machine::new(arch, t, "sdma_fault@1")?;
    let (p, lease) = (m.process(), m.lease()?);
    let _ = copy_once(p.as_ref(), StreamFailureMode::StopOnFailure, t.stream_sync_ms());
    let first = p.reset_device_force(&lease);
    let probe = probe_card(p.as_ref(), CARD, None, &t, true);
    let second = p.reset_device_force(&lease);
    let fin = p.finalize();
    let waits = m.remote_event_waits()?;
    row(
        "no handoff wait: reset / SDMA probe / second reset / aclFinalize",
        format!(
            "{} / {} / {} / {}; {waits} remote-event wait(s)",
            show(&first),
            show(&probe),
            show(&second),
            show(&fin)
        ),
        probe.is_err() && waits == 3,
    );

    let m = Machine::new(arch, t, "sdma_fault@1")?;
    let p = m.process();
    let mut runner = (arch_entry(arch).init_runner)(p.clone(), m.runner_cfg(true)?)?;
    let (a, b) = (
        runner.alloc_buffer(SDMA_PROBE_BYTES)?,
        runner.alloc_buffer(SDMA_PROBE_BYTES)?,
    );
    let copy = runner.sdma_copy(b, a, SDMA_PROBE_BYTES);
    let fin = runner.finalize(&m.lease()?);
    let attempts = fin
        .as_ref()
        .ok()
        .and_then(|f| f.reset.as_ref())
        .map(|x| (x.attempts.len(), x.attempts.iter().any(|a| a.confirmed())));
    let waits = m.remote_event_waits()?;
    row(
        "SDMA runner: the case's copy, then handoff wait and one force reset",
        format!(
            "{}; attempts (count, confirmed) {attempts:?}; {waits} remote-event wait(s)",
            copy.as_ref().map_or_else(|e| e.to_string(), |()| "ok".into())
        ),
        copy.is_err() && attempts == Some((1, true)) && waits == 0,
    );

    let m = Machine::new(arch, t, "sdma_fault@1")?;
    let _ = copy_once(
        m.process().as_ref(),
        StreamFailureMode::StopOnFailure,
        t.stream_sync_ms(),
    );
    let compute = probe_card(m.process().as_ref(), CARD, None, &t, false);
    let with_sdma = probe_card(m.process().as_ref(), CARD, None, &t, true);
    row(
        "wedged engine, fresh processes: compute-only probe / SDMA probe",
        format!("{} / {}", show(&compute), show(&with_sdma)),
        compute.is_ok() && with_sdma.is_err(),
    );

    let m = Machine::new(arch, t, "sdma_warmup_fault")?;
    let init = |sdma: bool| -> anyhow::Result<bool> {
        let r = (arch_entry(arch).init_runner)(m.process(), m.runner_cfg(sdma)?);
        Ok(match r {
            Ok(runner) => {
                let _ = runner.finalize(&m.lease()?);
                true
            }
            Err(_) => false,
        })
    };
    let (first, fresh, compute) = (init(true)?, init(true)?, init(false)?);
    let word = |b: bool| if b { "ok" } else { "failed" };
    row(
        "sdma_warmup_fault: SDMA init / fresh SDMA init / fresh compute init",
        format!("{} / {} / {}", word(first), word(fresh), word(compute)),
        !first && !fresh && compute,
    );

    let hang = RunRequest::new("hang", 1, Vec::new());
    for (rule, runs, expected) in [
        ("", 5, (1, true)),
        ("probe_fail=2", 1, (3, true)),
        ("probe_fail=3", 1, (3, false)),
    ] {
        let m = Machine::new(arch, t, rule)?;
        let mut seen = Vec::new();
        for _ in 0..runs {
            let mut runner = (arch_entry(arch).init_runner)(m.process(), m.runner_cfg(false)?)?;
            runner.register_kernel(&load_builtin(arch, "hang")?)?;
            let _ = runner.run(&hang);
            seen.push(match runner.finalize(&m.lease()?) {
                Ok(f) => f.reset.map(|x| (x.attempts.len(), true)),
                Err(FinalizeError::ResetFailed(f)) => Some((f.attempts.len(), false)),
                Err(_) => None,
            });
        }
        let confirmed = seen.iter().filter(|s| s.is_some_and(|s| s.1)).count();
        let attempts = seen.last().copied().flatten().map(|s| s.0);
        row(
            &format!(
                "#1124 post-reset probe, {}",
                if rule.is_empty() { "clean" } else { rule }
            ),
            format!("{confirmed}/{runs} confirmed, attempts {attempts:?}"),
            seen.iter().all(|s| *s == Some(expected)),
        );
    }
    Ok(ok)
}
