//! Launch rules of the simulated card: real kernels on AICore threads, op-timeout reaping with
//! the arch's code, the AICPU task reporting its AICore work's failure, launch faults
//! (`launch_fail`, `op_timeout`, `corrupt`, `poison_after`), argument checks and card range.

#![cfg(feature = "sim")]

mod sim_support;

use std::time::Instant;

use platform_common::driver::{DriverCall, KernelArg, LaunchOrigin};
use platform_common::error::codes;
use platform_common::sim::{card_state, SimConfig, SimDriver};
use platform_common::{Arch, Driver};
use sim_support::{bytes_f32, err, f32_bytes, facts, Machine, Session};

/// vector_add of `n` elements on `drv`'s current device; returns (a, b, c pointers).
fn vector_add_args(drv: &SimDriver, n: usize) -> (Vec<f32>, Vec<f32>, [KernelArg; 4]) {
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 100.0 - i as f32).collect();
    let pa = drv.malloc(n * 4).unwrap();
    let pb = drv.malloc(n * 4).unwrap();
    let pc = drv.malloc(n * 4).unwrap();
    drv.memcpy_to_device(pa, &f32_bytes(&a)).unwrap();
    drv.memcpy_to_device(pb, &f32_bytes(&b)).unwrap();
    let args = [
        KernelArg::Input(pa),
        KernelArg::Input(pb),
        KernelArg::Output(pc),
        KernelArg::Scalar(n as u64),
    ];
    (a, b, args)
}

fn read_f32(drv: &SimDriver, arg: KernelArg, n: usize) -> Vec<f32> {
    let KernelArg::Output(p) = arg else {
        panic!("not an output")
    };
    let mut out = vec![0u8; n * 4];
    drv.memcpy_to_host(&mut out, p).unwrap();
    bytes_f32(&out)
}

#[test]
fn kernels_compute_real_results_on_many_blocks() {
    for arch in Arch::ALL {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        let k = Session::register(&drv, "vector_add").unwrap();
        let n = 1000;
        let (a, b, args) = vector_add_args(&drv, n);
        s.run(&drv, k, facts(arch).max_block_dim(), &args, LaunchOrigin::Case)
            .unwrap();
        let c = read_f32(&drv, args[2], n);
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "{arch}: element {i}");
        }
        assert_eq!(card_state(&m.cfg, 0).unwrap().counters.case_launches, 1);
    }
}

#[test]
fn a_hanging_kernel_is_reaped_with_the_arch_op_timeout_code() {
    for (arch, code) in [(Arch::A5, 507000), (Arch::A2a3, 507018)] {
        let m = Machine::new(arch);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        let hang = Session::register(&drv, "hang").unwrap();
        let start = Instant::now();
        // The AICPU task waits for the hang and fails with its code.
        let e = s.run(&drv, hang, 4, &[], LaunchOrigin::Case).unwrap_err();
        assert_eq!(e.call, DriverCall::SynchronizeStreamWithTimeout, "{arch}");
        assert_eq!(e.code.raw, code, "{arch}: {e}");
        assert_eq!(facts(arch).op_timeout_code().raw, code);
        assert!(
            start.elapsed() >= m.cfg.timeouts.op_execute,
            "{arch}: reaped before the op-execute timeout"
        );
        assert_eq!(
            drv.sticky_error(0).map(|c| c.raw),
            Some(code),
            "{arch}: context must be sticky"
        );
        // The AICore stream's own first sync reports the same op failure.
        let e = drv
            .synchronize_stream_with_timeout(s.aicore, s.sync_ms)
            .unwrap_err();
        assert_eq!(e.code.raw, code, "{arch}");
    }
}

#[test]
fn op_timeout_fault_replaces_the_kernel_with_a_hang() {
    for arch in Arch::ALL {
        let m = Machine::with_plan(arch, "dev=2:op_timeout@2");
        let drv = m.driver();
        let s = Session::init(&drv, 2).unwrap();
        let noop = Session::register(&drv, "noop").unwrap();
        s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
        let e = s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
        assert_eq!(
            e,
            err(
                DriverCall::SynchronizeStreamWithTimeout,
                facts(arch).op_timeout_code()
            ),
            "{arch}"
        );
        let st = card_state(&m.cfg, 2).unwrap();
        assert_eq!(st.counters.case_launches, 2);
        assert_eq!(st.fired, vec![0]);
    }
}

#[test]
fn the_context_op_execute_timeout_governs_the_reaper() {
    let m = Machine::new(Arch::A5);
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    let hang = Session::register(&drv, "hang").unwrap();
    // 50 ms instead of the default 500 ms: a sync bounded at 400 ms sees the reaped op.
    drv.set_op_execute_timeout(50_000).unwrap();
    s.launch(&drv, hang, 3, &[], LaunchOrigin::Case).unwrap();
    assert_eq!(
        drv.synchronize_stream_with_timeout(s.aicpu, 400),
        Err(err(
            DriverCall::SynchronizeStreamWithTimeout,
            codes::RT_INTERNAL_ERROR
        ))
    );
}

#[test]
fn launch_fail_returns_its_code_and_poisons() {
    for (plan, code) in [
        ("dev=0:launch_fail@1", 207001),
        ("dev=0:launch_fail@1=507014", 507014),
    ] {
        let m = Machine::with_plan(Arch::A2a3, plan);
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        let noop = Session::register(&drv, "noop").unwrap();
        let e = s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
        assert_eq!(e.call, DriverCall::LaunchAicore, "{plan}");
        assert_eq!(e.code.raw, code, "{plan}");
        assert_eq!(drv.sticky_error(0).map(|c| c.raw), Some(code));
        assert_eq!(drv.malloc(64).unwrap_err().code, codes::RT_DRV_INTERNAL_ERROR);
    }
}

#[test]
fn any_real_code_can_be_raised_at_a_launch_or_at_its_sync() {
    let m = Machine::with_plan(Arch::A5, "dev=0:launch_fail@1=507054;dev=1:sync_fail@2=507056");
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    let noop = Session::register(&drv, "noop").unwrap();
    let e = s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err();
    assert_eq!(
        e,
        err(DriverCall::LaunchAicore, codes::RT_HBM_MULTI_BIT_ECC_ERROR)
    );
    assert!(e.code.is_hardware());
    assert_eq!(drv.sticky_error(0), Some(codes::RT_HBM_MULTI_BIT_ECC_ERROR));

    let drv = m.driver();
    let s = Session::init(&drv, 1).unwrap();
    let noop = Session::register(&drv, "noop").unwrap();
    s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
    // The second case launch is queued; its sync reports the link error and poisons.
    s.launch(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap();
    let e = drv.synchronize_stream_with_timeout(s.aicore, 400).unwrap_err();
    assert_eq!(e.code, codes::RT_LINK_ERROR);
    assert!(e.code.is_hardware());
    assert_eq!(drv.sticky_error(1), Some(codes::RT_LINK_ERROR));
}

#[test]
fn corrupt_perturbs_the_first_output_only_at_its_launch() {
    let m = Machine::with_plan(Arch::A5, "dev=1:corrupt@2");
    let drv = m.driver();
    let s = Session::init(&drv, 1).unwrap();
    let k = Session::register(&drv, "vector_add").unwrap();
    let n = 64;
    let (a, b, args) = vector_add_args(&drv, n);
    for launch in 1..=3 {
        s.run(&drv, k, 8, &args, LaunchOrigin::Case).unwrap();
        let c = read_f32(&drv, args[2], n);
        let bump = if launch == 2 { 1.0 } else { 0.0 };
        assert_eq!(c[0], a[0] + b[0] + bump, "launch {launch}");
        assert_eq!(
            &c[1..],
            &(1..n).map(|i| a[i] + b[i]).collect::<Vec<_>>()[..],
            "launch {launch}"
        );
    }
    assert!(
        drv.sticky_error(1).is_none(),
        "a corrupt result is not a device fault"
    );
}

#[test]
fn bad_arguments_are_invalid_param_and_count_no_launch() {
    let m = Machine::with_plan(Arch::A5, "dev=0:launch_fail@1");
    let drv = m.driver();
    let s = Session::init(&drv, 0).unwrap();
    let k = Session::register(&drv, "vector_add").unwrap();
    let (_, _, mut args) = vector_add_args(&drv, 16);
    let KernelArg::Output(out) = args[2] else {
        unreachable!()
    };
    drv.free(out).unwrap();
    let invalid = err(DriverCall::LaunchAicore, codes::INVALID_PARAM);
    assert_eq!(
        drv.launch_aicore(s.aicore, k, 4, &args, LaunchOrigin::Case),
        Err(invalid)
    );
    args[2] = KernelArg::Output(platform_common::driver::DevicePtr(0x10));
    assert_eq!(
        drv.launch_aicore(s.aicore, k, 4, &args, LaunchOrigin::Case),
        Err(invalid)
    );
    let noop = Session::register(&drv, "noop").unwrap();
    assert_eq!(
        drv.launch_aicore(s.aicore, noop, 0, &[], LaunchOrigin::Case),
        Err(invalid)
    );
    assert_eq!(
        drv.launch_aicore(s.aicore, noop, 37, &[], LaunchOrigin::Case),
        Err(invalid)
    );
    let unknown = platform_common::driver::Stream(9999);
    assert_eq!(
        drv.launch_aicore(unknown, noop, 1, &[], LaunchOrigin::Case),
        Err(invalid)
    );
    assert_eq!(card_state(&m.cfg, 0).unwrap().counters.case_launches, 0);
    assert!(drv.sticky_error(0).is_none(), "a refused launch poisons nothing");
    // A kernel returning an error status fails its op with an AICore exception.
    let e = s
        .run(&drv, k, 1, &[KernelArg::Scalar(1)], LaunchOrigin::Internal)
        .unwrap_err();
    assert_eq!(e.code, codes::RT_AICORE_EXCEPTION);
}

#[test]
fn cards_out_of_range_and_calls_without_a_device_are_refused() {
    let m = Machine::new(Arch::A2a3);
    let cfg = SimConfig {
        cards: 4,
        ..m.cfg.clone()
    };
    let drv = SimDriver::new(cfg);
    assert_eq!(
        drv.malloc(64),
        Err(err(DriverCall::Malloc, codes::RT_CONTEXT_NULL))
    );
    assert_eq!(
        drv.set_device(4),
        Err(err(DriverCall::SetDevice, codes::INVALID_DEVICEID))
    );
    assert_eq!(drv.hal_mem_ctl(4).unwrap_err().code, codes::INVALID_DEVICEID);
    drv.set_device(3).unwrap();
    drv.malloc(64).unwrap();
    assert_eq!(drv.stats().calls, 5);
}

/// `poison_after@K`: the K-th case launch runs with correct output and every call of its run
/// (the AICPU task, both syncs, the copy back, the frees) succeeds; the context is sticky
/// afterwards: the next call that starts new work fails with the AICPU exception (507018), as an
/// asynchronous exception reported after the sync would, and every later one with the sticky
/// codes (a stream, an allocation, a register mapping). Internal launches never fire it.
#[test]
fn poison_after_leaves_a_correct_run_and_a_sticky_context() {
    for arch in Arch::ALL {
        let m = Machine::with_plan(arch, "dev=0:poison_after@2");
        let drv = m.driver();
        let s = Session::init(&drv, 0).unwrap();
        let k = Session::register(&drv, "vector_add").unwrap();
        let noop = Session::register(&drv, "noop").unwrap();
        let n = 64;
        // An internal launch does not count.
        s.run(&drv, noop, 1, &[], LaunchOrigin::Internal).unwrap();
        for launch in 1..=2 {
            let (a, b, args) = vector_add_args(&drv, n);
            s.run(&drv, k, 4, &args, LaunchOrigin::Case).unwrap();
            let c = read_f32(&drv, args[2], n);
            for i in 0..n {
                assert_eq!(c[i], a[i] + b[i], "{arch}: launch {launch}, element {i}");
            }
            for arg in args {
                if let KernelArg::Input(p) | KernelArg::Output(p) = arg {
                    drv.free(p).unwrap();
                }
            }
            assert_eq!(drv.sticky_error(0), None, "{arch}: nothing reported yet");
        }
        // The first call that starts new work reports the asynchronous exception; the context is
        // sticky from then on.
        let e = drv.create_stream().unwrap_err();
        assert_eq!(e.call, DriverCall::CreateStream, "{arch}");
        assert_eq!(e.code, codes::RT_AICPU_EXCEPTION, "{arch}: {e}");
        assert_eq!(drv.sticky_error(0), Some(codes::RT_AICPU_EXCEPTION), "{arch}");
        assert_eq!(
            drv.create_stream().unwrap_err().code,
            codes::RT_DRV_INTERNAL_ERROR
        );
        assert_eq!(drv.malloc(64).unwrap_err().code, codes::RT_DRV_INTERNAL_ERROR);
        assert_eq!(drv.hal_res_map(0, 0).unwrap_err().code, codes::HAL_NO_PROCESS);
    }
}
