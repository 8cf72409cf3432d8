//! `sim-agent`: a process on the simulated cards, for `platform-common`'s cross-process sim tests
//! (found with `cardguard_test_support::bins::sim_agent`).
//!
//! Each subcommand opens its own `SimDriver` (a fresh process's driver state) and prints one JSON
//! object per line on stdout; lines that wait for the parent read one line of stdin. It never
//! starts a run (the parent installs plans with `start_run`).
//!
//! ```text
//! sim-agent COMMAND --root DIR --arch a5|a2a3 --card N [--cards C] [--lock-dir DIR] [options]
//!   noop-loop --iters K [--pause-after P] [--origin case|internal]
//!       K runs of noop (AICore + AICPU, both synced): {"event":"iter","iter":i,"ok":..,"error":..};
//!       after run P: {"event":"paused"} and wait for a stdin line; last {"event":"done",..}
//!   force-reset      take the card's lease, set the device, force-reset: {"event":"force_reset",..}
//!   hold-context     open a context (stream + 64 B), print {"event":"ready"}, wait for a stdin
//!                    line, then malloc twice: {"event":"call","step":"malloc","ok":..,"error":..}
//!   cases --kernel NAME --count N
//!       N case runs of kernel NAME: {"event":"launching","case":i} before each launch, then
//!       {"event":"case","case":i,"ok":..,"error":..}
//!   hold-lease       try to take the card's lease (in --lock-dir, else the sim root's lock dir):
//!                    {"event":"lease","ok":..,"dir":..,"error":..}; when taken, hold it until a
//!                    stdin line
//!   rewrite-loop     until killed, rounds of: set the device, a stream, 8 case launches of noop,
//!                    sync, destroy the stream, force-reset with the card's lease (each launch and
//!                    reset rewrites the card file); {"event":"launched","round":i,"launch":j}
//!                    after each launch, {"event":"round","round":i,"ok":..} after each round
//! ```
//! Exit status: 0 when every step passed, 1 when one failed, 2 for bad usage.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use platform_common::driver::{AicpuTask, KernelHandle, LaunchOrigin, Stream};
use platform_common::kernel::{load_builtin, KernelBlob};
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::sim::{SimConfig, SimDriver};
use platform_common::{Arch, DeviceId, Driver, DriverError};
use serde_json::{json, Value};

struct Opts {
    command: String,
    cfg: SimConfig,
    card: DeviceId,
    lock_dir: Option<PathBuf>,
    iters: u32,
    pause_after: Option<u32>,
    origin: LaunchOrigin,
    kernel: String,
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let command = args.first().cloned().ok_or("missing command")?;
    let (mut root, mut arch, mut card, mut cards) = (None, None, None, None);
    let mut opts_lock = None;
    let (mut iters, mut pause_after, mut origin, mut kernel) =
        (1, None, LaunchOrigin::Internal, "noop".to_owned());
    let mut it = args[1..].iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| {
            v.parse::<u32>()
                .map_err(|_| format!("{flag} {v:?} is not a whole number"))
        };
        match flag.as_str() {
            "--root" => root = Some(PathBuf::from(value)),
            "--arch" => arch = Some(value.parse::<Arch>().map_err(|e| e.to_string())?),
            "--card" => card = Some(num(value)?),
            "--cards" => cards = Some(num(value)?),
            "--lock-dir" => opts_lock = Some(PathBuf::from(value)),
            "--iters" | "--count" => iters = num(value)?,
            "--pause-after" => pause_after = Some(num(value)?),
            "--kernel" => kernel = value.clone(),
            "--origin" => {
                origin = match value.as_str() {
                    "case" => LaunchOrigin::Case,
                    "internal" => LaunchOrigin::Internal,
                    other => return Err(format!("--origin {other:?} (expected case or internal)")),
                }
            }
            other => return Err(format!("unknown flag {other:?}")),
        }
    }
    let arch = cardguard_test_support::entry(arch.ok_or("missing --arch")?).facts;
    let mut cfg = SimConfig::new(arch, root.ok_or("missing --root")?);
    if let Some(c) = cards {
        cfg.cards = c;
    }
    Ok(Opts {
        command,
        cfg,
        card: card.ok_or("missing --card")?,
        lock_dir: opts_lock,
        iters,
        pause_after,
        origin,
        kernel,
    })
}

fn emit(v: Value) {
    println!("{v}");
}

fn result_fields(r: &Result<(), DriverError>) -> (bool, Value) {
    match r {
        Ok(()) => (true, Value::Null),
        Err(e) => (
            false,
            json!({ "call": e.call, "code": e.code, "message": e.to_string() }),
        ),
    }
}

fn wait_for_parent() {
    let mut line = String::new();
    // End of input (a parent that went away) also lets the agent go on.
    let _ = std::io::stdin().lock().read_line(&mut line);
}

/// The device session a runner builds: current device, op-execute timeout, AICore + AICPU streams.
struct Session {
    aicore: Stream,
    aicpu: Stream,
    kernel: KernelHandle,
    sync_ms: u32,
}

fn init(drv: &SimDriver, card: DeviceId, blob: &KernelBlob) -> Result<Session, DriverError> {
    drv.set_device(card)?;
    let t = drv.config().timeouts;
    drv.set_op_execute_timeout(u64::try_from(t.op_execute.as_micros()).unwrap_or(u64::MAX))?;
    let aicore = drv.create_stream()?;
    let aicpu = drv.create_stream()?;
    let kernel = drv.register_kernel(blob)?;
    Ok(Session {
        aicore,
        aicpu,
        kernel,
        sync_ms: t.stream_sync_ms(),
    })
}

fn run(drv: &SimDriver, s: &Session, origin: LaunchOrigin) -> Result<(), DriverError> {
    drv.launch_aicore(s.aicore, s.kernel, 1, &[], origin)?;
    drv.launch_aicpu(s.aicpu, AicpuTask { aicore: s.aicore })?;
    drv.synchronize_stream_with_timeout(s.aicpu, s.sync_ms)?;
    drv.synchronize_stream_with_timeout(s.aicore, s.sync_ms)
}

fn noop_loop(o: &Opts, drv: &SimDriver, blob: &KernelBlob) -> bool {
    let s = match init(drv, o.card, blob) {
        Ok(s) => s,
        Err(e) => {
            emit(json!({ "event": "init", "ok": false, "error": e.to_string() }));
            return false;
        }
    };
    let mut passed = 0;
    for i in 1..=o.iters {
        let (ok, error) = result_fields(&run(drv, &s, o.origin));
        passed += u32::from(ok);
        emit(json!({ "event": "iter", "iter": i, "ok": ok, "error": error }));
        if o.pause_after == Some(i) {
            emit(json!({ "event": "paused", "iter": i }));
            wait_for_parent();
        }
    }
    emit(json!({ "event": "done", "passed": passed, "failed": o.iters - passed }));
    passed == o.iters
}

/// `--lock-dir`, else the sim's own lock dir (with its root).
fn lease_config(o: &Opts) -> LeaseConfig {
    match &o.lock_dir {
        Some(dir) => LeaseConfig { dir: dir.clone() },
        None => o.cfg.lease_config(),
    }
}

fn force_reset(o: &Opts, drv: &SimDriver) -> bool {
    let lease = match DeviceLease::acquire(&lease_config(o), o.card, "sim-agent") {
        Ok(l) => l,
        Err(e) => {
            emit(json!({ "event": "force_reset", "ok": false, "error": e.to_string() }));
            return false;
        }
    };
    let r = drv
        .set_device(o.card)
        .and_then(|()| drv.reset_device_force(&lease));
    let (ok, error) = result_fields(&r);
    emit(json!({ "event": "force_reset", "card": o.card, "ok": ok, "error": error }));
    ok
}

fn hold_context(o: &Opts, drv: &SimDriver) -> bool {
    let opened = drv
        .set_device(o.card)
        .and_then(|()| drv.create_stream())
        .and_then(|_| drv.malloc(64));
    if let Err(e) = opened {
        emit(json!({ "event": "ready", "ok": false, "error": e.to_string() }));
        return false;
    }
    emit(json!({ "event": "ready", "ok": true }));
    wait_for_parent();
    let mut all_ok = true;
    for _ in 0..2 {
        let (ok, error) = result_fields(&drv.malloc(64).map(|_| ()));
        all_ok &= ok;
        emit(json!({ "event": "call", "step": "malloc", "ok": ok, "error": error }));
    }
    all_ok
}

fn cases(o: &Opts, drv: &SimDriver, blob: &KernelBlob) -> bool {
    let s = match init(drv, o.card, blob) {
        Ok(s) => s,
        Err(e) => {
            emit(json!({ "event": "init", "ok": false, "error": e.to_string() }));
            return false;
        }
    };
    let mut all_ok = true;
    for i in 1..=o.iters {
        emit(json!({ "event": "launching", "case": i }));
        let (ok, error) = result_fields(&run(drv, &s, LaunchOrigin::Case));
        all_ok &= ok;
        emit(json!({ "event": "case", "case": i, "ok": ok, "error": error }));
    }
    all_ok
}

fn hold_lease(o: &Opts) -> bool {
    let cfg = lease_config(o);
    let dir = cfg.dir.display().to_string();
    match DeviceLease::try_acquire(&cfg, o.card, "sim-agent hold-lease") {
        Ok(lease) => {
            emit(json!({ "event": "lease", "ok": true, "dir": dir, "error": Value::Null }));
            wait_for_parent();
            drop(lease);
            true
        }
        Err(e) => {
            emit(json!({ "event": "lease", "ok": false, "dir": dir, "error": e.to_string() }));
            false
        }
    }
}

/// Case launches per round of `rewrite-loop`.
const REWRITE_LAUNCHES: u64 = 8;

/// Rewrites the card file as fast as it can until the process is killed (or a call fails).
fn rewrite_loop(o: &Opts, drv: &SimDriver, blob: &KernelBlob) -> bool {
    let lease = match DeviceLease::acquire(&lease_config(o), o.card, "sim-agent rewrite-loop") {
        Ok(l) => l,
        Err(e) => {
            emit(json!({ "event": "round", "ok": false, "error": e.to_string() }));
            return false;
        }
    };
    for round in 1.. {
        let r = drv.set_device(o.card).and_then(|()| {
            let stream = drv.create_stream()?;
            let kernel = drv.register_kernel(blob)?;
            for launch in 1..=REWRITE_LAUNCHES {
                drv.launch_aicore(stream, kernel, 1, &[], LaunchOrigin::Case)?;
                emit(json!({ "event": "launched", "round": round, "launch": launch }));
            }
            drv.synchronize_stream_with_timeout(stream, drv.config().timeouts.stream_sync_ms())?;
            drv.destroy_stream(stream)?;
            drv.reset_device_force(&lease)
        });
        if let Err(e) = r {
            emit(json!({ "event": "round", "round": round, "ok": false, "error": e.to_string() }));
            return false;
        }
        emit(json!({ "event": "round", "round": round, "ok": true }));
    }
    true
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sim-agent: {e}");
            return ExitCode::from(2);
        }
    };
    let kernel = if o.command == "noop-loop" || o.command == "rewrite-loop" {
        "noop"
    } else {
        o.kernel.as_str()
    };
    let blob = match load_builtin(o.cfg.arch.arch, kernel) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("sim-agent: {e}");
            return ExitCode::from(2);
        }
    };
    let drv = SimDriver::new(o.cfg.clone());
    let ok = match o.command.as_str() {
        "noop-loop" => noop_loop(&o, &drv, &blob),
        "force-reset" => force_reset(&o, &drv),
        "hold-context" => hold_context(&o, &drv),
        "cases" => cases(&o, &drv, &blob),
        "rewrite-loop" => rewrite_loop(&o, &drv, &blob),
        "hold-lease" => hold_lease(&o),
        other => {
            eprintln!(
                "sim-agent: unknown command {other:?} (noop-loop, force-reset, hold-context, cases, hold-lease, rewrite-loop)"
            );
            return ExitCode::from(2);
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
