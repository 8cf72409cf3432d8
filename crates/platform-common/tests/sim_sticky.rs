//! The sticky context: after a fault, in that process and on that card, every call fails with the
//! code measured on hardware. a5 maps registers first (halResMap rc=62), a2a3 allocates first
//! (aclrtMalloc 507899); stream creation fails 507899 and the op-execute timeout 507000.

mod sim_support;

use platform_common::driver::{DriverCall, LaunchOrigin};
use platform_common::error::codes;
use platform_common::{Arch, Driver};
use sim_support::{blob, err, Machine, Session};

/// Poisons card `card` of a fresh driver with a launch failure; returns the driver and session.
fn poisoned(m: &Machine, card: u32) -> (platform_common::sim::SimDriver, Session) {
    let drv = m.driver();
    let s = Session::init(&drv, card).unwrap();
    let noop = Session::register(&drv, "noop").unwrap();
    assert_eq!(
        s.run(&drv, noop, 1, &[], LaunchOrigin::Case).unwrap_err().code,
        codes::RT_MEMORY_ALLOCATION
    );
    (drv, s)
}

#[test]
fn a5_surfaces_at_register_mapping_with_rc_62() {
    let m = Machine::with_plan(Arch::A5, "dev=0:launch_fail@1");
    let (drv, _) = poisoned(&m, 0);
    // The a5 runner maps registers at the start of every run: that is the first call to fail.
    for core in 0..4 {
        assert_eq!(
            drv.hal_res_map(0, core),
            Err(err(DriverCall::HalResMap, codes::HAL_RES_MAP_REFUSED))
        );
    }
    assert_eq!(
        drv.create_stream(),
        Err(err(DriverCall::CreateStream, codes::RT_DRV_INTERNAL_ERROR))
    );
    assert_eq!(
        drv.set_op_execute_timeout(500_000),
        Err(err(DriverCall::SetOpExecuteTimeout, codes::RT_INTERNAL_ERROR))
    );
}

#[test]
fn a2a3_surfaces_at_malloc_with_507899() {
    let m = Machine::with_plan(Arch::A2a3, "dev=0:launch_fail@1");
    let (drv, _) = poisoned(&m, 0);
    // a2a3 mapped its registers once at init; a run's first failing call is the allocation.
    assert_eq!(
        drv.malloc(4096),
        Err(err(DriverCall::Malloc, codes::RT_DRV_INTERNAL_ERROR))
    );
    assert_eq!(
        drv.register_kernel(&blob(Arch::A2a3, "noop")),
        Err(err(DriverCall::RegisterKernel, codes::RT_DRV_INTERNAL_ERROR)),
        "the registration buffer is a device allocation"
    );
    assert_eq!(
        drv.hal_mem_ctl(0),
        Err(err(DriverCall::HalMemCtl, codes::HAL_RES_MAP_REFUSED))
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
        assert_eq!(
            drv.hal_res_map(1, 0).unwrap_err().code,
            codes::HAL_RES_MAP_REFUSED
        );
        assert_eq!(drv.hal_mem_ctl(1).unwrap_err().code, codes::HAL_RES_MAP_REFUSED);
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
