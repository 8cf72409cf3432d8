//! The same script of driver calls on the in-process simulator and through the `acl` driver
//! against `libsim_acl.so`: every call has the same outcome and code, on both arches, with and
//! without a fault plan. The script covers the seed's path: a compute case, the op-timeout, the
//! sticky context's surfacing calls, the drain, force reset and the recovery after it.

use std::sync::Arc;
use std::time::Duration;

use cardguard_reference::{vector_add_case, HostArg, KernelCase};
use platform_common::driver::{AicpuTask, DeviceId, Driver, KernelArg, LaunchOrigin};
use platform_common::error::codes;
use platform_common::kernel::{built_blob_dir, load_named};
use platform_common::lease::{DeviceLease, LeaseConfig};
use platform_common::sim::{start_run, FaultPlan, SimConfig, SimDriver};
use platform_common::timeouts::Timeouts;
use platform_common::{Arch, DriverError};

const CARD: DeviceId = 3;

fn fast() -> Timeouts {
    Timeouts {
        scheduler: Duration::from_millis(20),
        op_execute: Duration::from_millis(60),
        stream_sync: Duration::from_millis(250),
    }
}

fn show<T>(r: &Result<T, DriverError>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

/// Runs `case` once: buffers, copies, register, AICore + AICPU launch, both syncs, read back.
fn run_case(d: &dyn Driver, case: &KernelCase, arch: Arch, log: &mut Vec<String>) {
    let step =
        |log: &mut Vec<String>, what: &str, r: String| log.push(format!("{}: {what}: {r}", case.kernel));
    let blob = load_named(&built_blob_dir(arch), arch, case.kernel).unwrap();
    let (aicpu, aicore) = match (d.create_stream(), d.create_stream()) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            step(log, "create streams", format!("{} / {}", show(&a), show(&b)));
            return;
        }
    };
    let mut args = Vec::new();
    let mut outputs = Vec::new();
    for a in &case.args {
        let arg = match a {
            HostArg::Input(bytes) => match d.malloc(bytes.len()) {
                Ok(p) => {
                    step(log, "copy in", show(&d.memcpy_to_device(p, bytes)));
                    KernelArg::Input(p)
                }
                Err(e) => return step(log, "malloc", e.to_string()),
            },
            HostArg::Output(n) => match d.malloc(*n) {
                Ok(p) => {
                    outputs.push((p, *n));
                    KernelArg::Output(p)
                }
                Err(e) => return step(log, "malloc", e.to_string()),
            },
            HostArg::Scalar(v) => KernelArg::Scalar(*v),
        };
        args.push(arg);
    }
    let handle = match d.register_kernel(&blob) {
        Ok(h) => h,
        Err(e) => return step(log, "register", e.to_string()),
    };
    let launch = d.launch_aicore(aicore, handle, case.block_dim, &args, LaunchOrigin::Case);
    step(log, "launch aicore", show(&launch));
    step(
        log,
        "launch aicpu",
        show(&d.launch_aicpu(aicpu, AicpuTask { aicore })),
    );
    let sync_ms = fast().stream_sync_ms();
    step(
        log,
        "sync aicpu",
        show(&d.synchronize_stream_with_timeout(aicpu, sync_ms)),
    );
    step(
        log,
        "sync aicore",
        show(&d.synchronize_stream_with_timeout(aicore, sync_ms)),
    );
    let mut read = Vec::new();
    for (p, n) in outputs {
        let mut buf = vec![0u8; n];
        step(log, "copy out", show(&d.memcpy_to_host(&mut buf, p)));
        read.push(buf);
    }
    if !case.expected.is_empty() {
        step(
            log,
            "golden",
            format!("{:?}", case.check(&read).map_err(|e| e.to_string())),
        );
    }
}

/// The register mapping `arch` makes (its entry's HAL calls: `halResMap` of `core` on a5, the
/// `halMemCtl` window on a2a3; the CANN driver makes no other), as a log line.
fn mapping(d: &dyn Driver, arch: Arch, core: u32) -> String {
    let hal = cardguard_test_support::entry(arch).hal;
    assert!(
        hal.res_map.is_some() != hal.mem_ctl.is_some(),
        "{arch}: one mapping"
    );
    if hal.res_map.is_some() {
        format!("res map: {:?}", d.hal_res_map(CARD, core))
    } else {
        format!("mem ctl: {:?}", d.hal_mem_ctl(CARD))
    }
}

/// The seed's path on one card of `arch`, as a log of outcomes.
fn script(d: &dyn Driver, arch: Arch, lease: &DeviceLease) -> Vec<String> {
    let mut log = Vec::new();
    log.push(format!("init: {}", show(&d.init())));
    log.push(format!("set device: {}", show(&d.set_device(CARD))));
    let op_us = u64::try_from(fast().op_execute.as_micros()).unwrap();
    log.push(format!("op timeout: {}", show(&d.set_op_execute_timeout(op_us))));
    log.push(format!("register mapping: {}", mapping(d, arch, 1)));
    run_case(d, &vector_add_case(1000, 4, 11), arch, &mut log);
    run_case(d, &cardguard_reference::hang_case(1), arch, &mut log);
    log.push(format!("sticky register mapping: {}", mapping(d, arch, 0)));
    log.push(format!("sticky malloc: {}", show(&d.malloc(64))));
    log.push(format!("sticky stream: {}", show(&d.create_stream())));
    log.push(format!(
        "drain: {}",
        show(&d.synchronize_device_with_timeout(100))
    ));
    log.push(format!("soft reset: {}", show(&d.reset_device(CARD))));
    log.push(format!("set device again: {}", show(&d.set_device(CARD))));
    log.push(format!(
        "op timeout again: {}",
        show(&d.set_op_execute_timeout(op_us))
    ));
    log.push(format!("force reset: {}", show(&d.reset_device_force(lease))));
    log.push(format!("set device after reset: {}", show(&d.set_device(CARD))));
    run_case(d, &vector_add_case(777, 3, 12), arch, &mut log);
    log.push(format!("out of range: {}", show(&d.set_device(99))));
    log
}

struct Machine {
    _dir: tempfile::TempDir,
    cfg: SimConfig,
    lease: DeviceLease,
}

fn machine(arch: Arch) -> Machine {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new(cardguard_test_support::entry(arch).facts, dir.path().join("sim"))
        .with_timeouts(fast())
        .unwrap();
    let locks = LeaseConfig {
        dir: dir.path().join("locks"),
    };
    let lease = DeviceLease::try_acquire(&locks, CARD, "parity").unwrap();
    Machine {
        _dir: dir,
        cfg,
        lease,
    }
}

/// Both logs of `arch` with `plan` installed on the card first.
fn both(arch: Arch, plan: &str) -> (Vec<String>, Vec<String>) {
    let sim = machine(arch);
    start_run(&sim.cfg, &[CARD], &plan.parse::<FaultPlan>().unwrap()).unwrap();
    let direct: Arc<dyn Driver> = Arc::new(SimDriver::new(sim.cfg.clone()));
    let direct_log = script(direct.as_ref(), arch, &sim.lease);

    let acl = machine(arch);
    let libs = acl.cfg.root.parent().unwrap().join("libs");
    std::fs::create_dir_all(&libs).unwrap();
    let driver = cardguard_test_support::locate::acl_process(&libs, &acl.cfg).unwrap();
    assert!(
        driver.start_sim_run(&[CARD], Some(plan)).unwrap(),
        "no cgSimStartRun"
    );
    let acl_log = script(&driver, arch, &acl.lease);
    (direct_log, acl_log)
}

fn assert_same(direct: &[String], acl: &[String]) {
    assert_eq!(direct.len(), acl.len(), "sim:\n{direct:#?}\nacl:\n{acl:#?}");
    for (d, a) in direct.iter().zip(acl) {
        assert_eq!(d, a, "sim:\n{direct:#?}\nacl:\n{acl:#?}");
    }
}

fn has(log: &[String], line: &str) -> bool {
    log.iter().any(|l| l == line)
}

#[test]
fn a5_seed_path_is_identical_through_the_c_abi() {
    let (direct, acl) = both(Arch::A5, "");
    assert_same(&direct, &acl);
    assert!(has(&acl, "vector_add: golden: Ok(())"), "{acl:#?}");
    let op_timeout = DriverError::new(
        platform_common::driver::DriverCall::SynchronizeStreamWithTimeout,
        codes::RT_INTERNAL_ERROR,
    );
    assert!(has(&acl, &format!("hang: sync aicpu: {op_timeout}")), "{acl:#?}");
    assert!(
        acl.iter()
            .any(|l| l.starts_with("sticky register mapping: res map: Err") && l.contains("62")),
        "{acl:#?}"
    );
    assert!(has(&acl, "force reset: ok"), "{acl:#?}");
}

#[test]
fn a2a3_seed_path_is_identical_through_the_c_abi() {
    let (direct, acl) = both(Arch::A2a3, "");
    assert_same(&direct, &acl);
    assert!(
        acl.iter().any(|l| l.starts_with("register mapping: mem ctl: Ok")),
        "{acl:#?}"
    );
    assert!(
        acl.iter()
            .any(|l| l.starts_with("hang: sync aicpu:") && l.contains("507018")),
        "{acl:#?}"
    );
}

#[test]
fn fault_plans_fire_the_same_through_the_c_abi() {
    let plan = format!("dev={CARD}:launch_fail@1;dev={CARD}:corrupt@3");
    let (direct, acl) = both(Arch::A5, &plan);
    assert_same(&direct, &acl);
    assert!(
        acl.iter()
            .any(|l| l.starts_with("vector_add: sync") && l.contains("207001"))
            || acl
                .iter()
                .any(|l| l.starts_with("vector_add: launch aicore") && l.contains("207001")),
        "{acl:#?}"
    );
}
