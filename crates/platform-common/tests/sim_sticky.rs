//! The sticky context: after a fault, in that process and on that card, every call fails with the
//! code measured on hardware. A run as each arch's runner makes it surfaces it differently: a5
//! maps registers first in every run (halResMap rc=62), a2a3 mapped them once at init and
//! allocates first (aclrtMalloc 507899); stream creation fails 507899 and the op-execute timeout
//! 507000.

#![cfg(feature = "sim")]

mod sim_support;

use platform_common::driver::{DriverCall, KernelHandle, LaunchOrigin};
use platform_common::error::codes;
use platform_common::sim::{SimDriver, SimStats};
use platform_common::{Arch, Driver, DriverError};
use sim_support::{blob, err, Machine, Session};

/// The size of the callable buffer a run allocates first (the seed's `ChipCallable` buffer).
const CALLABLE_BYTES: usize = 4096;

/// The seed's init, as the arch's runner makes it: a2a3 also maps its register window once here
/// (`halMemCtl`); a5 maps nothing at init.
fn runner_init(arch: Arch, drv: &SimDriver, card: u32) -> Session {
    let s = Session::init(drv, card).unwrap();
    if arch == Arch::A2a3 {
        drv.hal_mem_ctl(card).unwrap();
    }
    s
}

/// One run as the arch's runner makes it: a5 first maps the registers of every core it launches
/// on (`halResMap` per core), then both allocate the callable buffer, copy it in, launch and sync.
/// Returns the first call that fails.
fn runner_run(arch: Arch, drv: &SimDriver, s: &Session, kernel: KernelHandle) -> Result<(), DriverError> {
    const BLOCK_DIM: u32 = 4;
    if arch == Arch::A5 {
        for core in 0..BLOCK_DIM {
            drv.hal_res_map(s.card, core)?;
        }
    }
    let callable = drv.malloc(CALLABLE_BYTES)?;
    drv.memcpy_to_device(callable, &[0; CALLABLE_BYTES])?;
    s.run(drv, kernel, BLOCK_DIM, &[], LaunchOrigin::Case)?;
    drv.free(callable)
}

/// Calls of each kind made between two snapshots.
struct Made {
    before: SimStats,
    after: SimStats,
}

impl Made {
    fn of(&self, call: DriverCall) -> u64 {
        self.after.calls_of(call) - self.before.calls_of(call)
    }

    fn total(&self) -> u64 {
        self.after.calls - self.before.calls
    }
}

/// Inits card 0, makes one good run and one whose launch fails (`launch_fail@2`, which poisons
/// the context), then a third run; returns that run's error and the calls it made.
fn run_after_a_poisoning_one(arch: Arch) -> (SimDriver, DriverError, Made) {
    let m = Machine::with_plan(arch, "dev=0:launch_fail@2");
    let drv = m.driver();
    let s = runner_init(arch, &drv, 0);
    let noop = Session::register(&drv, "noop").unwrap();
    runner_run(arch, &drv, &s, noop).unwrap();
    let e = runner_run(arch, &drv, &s, noop).unwrap_err();
    assert_eq!(
        e,
        err(DriverCall::LaunchAicore, codes::RT_MEMORY_ALLOCATION),
        "{arch}"
    );
    let before = drv.stats();
    let e = runner_run(arch, &drv, &s, noop).unwrap_err();
    let after = drv.stats();
    (drv, e, Made { before, after })
}

#[test]
fn a5_run_surfaces_at_register_mapping_with_rc_62() {
    let (drv, e, made) = run_after_a_poisoning_one(Arch::A5);
    // The a5 runner maps registers at the start of every run: core 0's mapping is the first call,
    // and it fails with rc 62 before anything is allocated.
    assert_eq!(e, err(DriverCall::HalResMap, codes::HAL_NO_PROCESS));
    assert_eq!((e.code.raw, e.code), (62, platform_common::Code::hal(62)));
    assert_eq!(made.of(DriverCall::HalResMap), 1);
    assert_eq!(made.of(DriverCall::Malloc), 0);
    assert_eq!(made.total(), 1);
    // Had it got that far, the allocation would have failed with 507899; a re-init fails at the
    // op-execute timeout (507000) and the stream creation (507899).
    assert_eq!(
        drv.malloc(CALLABLE_BYTES),
        Err(err(DriverCall::Malloc, codes::RT_DRV_INTERNAL_ERROR))
    );
    assert_eq!(
        drv.set_op_execute_timeout(500_000),
        Err(err(DriverCall::SetOpExecuteTimeout, codes::RT_INTERNAL_ERROR))
    );
    assert_eq!(
        drv.create_stream(),
        Err(err(DriverCall::CreateStream, codes::RT_DRV_INTERNAL_ERROR))
    );
}

#[test]
fn a2a3_run_surfaces_at_the_callable_malloc_with_507899() {
    let (drv, e, made) = run_after_a_poisoning_one(Arch::A2a3);
    // a2a3 mapped its registers once at init: the run's first call, the callable buffer's
    // allocation, is the first to fail.
    assert_eq!(e, err(DriverCall::Malloc, codes::RT_DRV_INTERNAL_ERROR));
    assert_eq!(e.code.raw, 507_899);
    assert_eq!(made.of(DriverCall::Malloc), 1);
    assert_eq!(made.total(), 1);
    assert_eq!(
        made.after.calls_of(DriverCall::HalMemCtl),
        1,
        "mapped once, at init"
    );
    assert_eq!(made.after.calls_of(DriverCall::HalResMap), 0);
    // The registration buffer is a device allocation too.
    assert_eq!(
        drv.register_kernel(&blob(Arch::A2a3, "noop")),
        Err(err(DriverCall::RegisterKernel, codes::RT_DRV_INTERNAL_ERROR))
    );
}

#[test]
fn every_call_meets_its_sticky_code_and_set_device_still_works() {
    for arch in Arch::ALL {
        let m = Machine::with_plan(arch, "dev=1:launch_fail@1");
        let drv = m.driver();
        let s = Session::init(&drv, 1).unwrap();
        let noop = Session::register(&drv, "noop").unwrap();
        let buf = drv.malloc(64).unwrap();
        drv.launch_aicore(s.aicore, noop, 1, &[], LaunchOrigin::Case)
            .unwrap_err();
        let sticky = codes::RT_DRV_INTERNAL_ERROR;
        drv.set_device(1).unwrap();
        assert_eq!(drv.malloc(8), Err(err(DriverCall::Malloc, sticky)));
        assert_eq!(
            drv.memcpy_to_device(buf, &[1, 2]),
            Err(err(DriverCall::MemcpyToDevice, sticky))
        );
        assert_eq!(
            drv.memcpy_to_host(&mut [0; 2], buf),
            Err(err(DriverCall::MemcpyToHost, sticky))
        );
        assert_eq!(
            drv.launch_aicore(s.aicore, noop, 1, &[], LaunchOrigin::Internal),
            Err(err(DriverCall::LaunchAicore, sticky))
        );
        assert_eq!(
            s.launch(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err(),
            err(DriverCall::LaunchAicore, sticky)
        );
        assert_eq!(
            drv.launch_aicpu(s.aicpu, platform_common::driver::AicpuTask { aicore: s.aicore }),
            Err(err(DriverCall::LaunchAicpu, sticky))
        );
        assert_eq!(drv.hal_res_map(1, 0).unwrap_err().code, codes::HAL_NO_PROCESS);
        assert_eq!(drv.hal_mem_ctl(1).unwrap_err().code, codes::HAL_NO_PROCESS);
        // Teardown calls still work on a sticky context.
        drv.free(buf).unwrap();
        drv.destroy_stream(s.aicpu).unwrap();
        // Sticky is per card: another card of the same process is healthy.
        drv.hal_res_map(2, 0).unwrap();
        let s2 = Session::init(&drv, 2).unwrap();
        let noop2 = Session::register(&drv, "noop").unwrap();
        s2.run(&drv, noop2, 1, &[], LaunchOrigin::Case).unwrap();
    }
}
