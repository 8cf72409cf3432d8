//! `ASCEND_RT_VISIBLE_DEVICES` through the C ABI (issue 18 item 5): `libsim_acl.so` honours the
//! variable as the real runtime does (ACL calls take logical ids, card state is the physical
//! card's, the `hal*` exports take physical ids), and the `acl` driver hands its HAL calls the
//! physical id (upstream's `acl_to_hal_device_id`, hw-native-sys/simpler
//! src/common/platform/include/common/acl_hal_device.h).

use platform_common::acl::{AclConfig, AclDriver};
use platform_common::driver::Driver;
use platform_common::error::{codes, Code};
use platform_common::sim::{card_state, start_run, Fault, FaultPlan, SimConfig, SimDriver};
use platform_common::visible::{VisibleDevices, ENV_VISIBLE_DEVICES};
use platform_common::Arch;

use cardguard_test_support::locate::{built_library, instance, settings_for};

/// A process of `cfg`'s machine through the C ABI, its library (and, unless `driver_map` says
/// otherwise, its driver) under `ASCEND_RT_VISIBLE_DEVICES=map`.
///
/// The driver is kept loaded to the end of the test process: the library's thread-locals of the
/// calling thread have destructors that run at that thread's exit, after a drop would have
/// unloaded their code.
fn process(dir: &std::path::Path, cfg: &SimConfig, map: &str, driver_map: &str) -> &'static AclDriver {
    let mut settings = settings_for(cfg);
    settings.push((ENV_VISIBLE_DEVICES, map.to_owned()));
    let lib = instance(&built_library().unwrap(), dir, &settings).unwrap();
    Box::leak(Box::new(
        AclDriver::load_for(
            &AclConfig::files([&lib]),
            cardguard_test_support::entry(cfg.arch.arch).hal,
        )
        .unwrap()
        .with_visible(VisibleDevices::parse(driver_map).unwrap()),
    ))
}

fn machine(arch: Arch) -> (tempfile::TempDir, SimConfig) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new(cardguard_test_support::entry(arch).facts, dir.path().join("sim"));
    std::fs::create_dir_all(dir.path().join("libs")).unwrap();
    (dir, cfg)
}

#[test]
fn logical_zero_under_a_map_is_the_physical_card_for_every_call() {
    for arch in [Arch::A5, Arch::A2a3] {
        let (dir, cfg) = machine(arch);
        let libs = dir.path().join("libs");
        // The same physical card 3, seen directly (identity) and as logical 0 under `3`.
        let direct = SimDriver::new(cfg.clone());
        direct.init().unwrap();
        direct.set_device(3).unwrap();
        let d = process(&libs, &cfg, "3", "3");
        d.init().unwrap();
        d.set_device(0).unwrap();
        assert_eq!(
            d.set_device(1).unwrap_err().code,
            codes::INVALID_DEVICEID,
            "{arch}: beyond the map"
        );
        // The arch's HAL calls land on physical 3: the same registers as the direct process's
        // card 3.
        if arch == Arch::A5 {
            assert_eq!(d.hal_res_map(0, 1), direct.hal_res_map(3, 1), "{arch}");
            assert!(d.hal_res_map(0, 1).is_ok(), "{arch}");
        } else {
            assert_eq!(d.hal_mem_ctl(0), direct.hal_mem_ctl(3), "{arch}");
            assert!(d.hal_mem_ctl(0).is_ok(), "{arch}");
        }
    }
}

#[test]
fn an_untranslated_hal_id_is_refused_as_the_real_hal_refuses_a_card_outside_the_map() {
    let invalid_device = Code::hal(2); // DRV_ERROR_INVALID_DEVICE
    for arch in [Arch::A5, Arch::A2a3] {
        let (dir, cfg) = machine(arch);
        // The library sees `3`, the driver (wrongly) the identity: it passes 0 to the HAL.
        let d = process(&dir.path().join("libs"), &cfg, "3", "");
        d.init().unwrap();
        d.set_device(0).unwrap();
        let e = if arch == Arch::A5 {
            d.hal_res_map(0, 1).unwrap_err()
        } else {
            d.hal_mem_ctl(0).unwrap_err()
        };
        assert_eq!(e.code, invalid_device, "{arch}");
    }
}

#[test]
fn card_state_is_the_physical_cards() {
    let (dir, cfg) = machine(Arch::A5);
    start_run(&cfg, &[3], &"dev=3:dead".parse::<FaultPlan>().unwrap()).unwrap();
    // Physical 3 is dead: logical 0 under `3` is refused, logical 0 under `2,4` is not.
    let libs = dir.path().join("libs");
    let on3 = process(&libs, &cfg, "3", "3");
    on3.init().unwrap();
    assert_eq!(on3.set_device(0).unwrap_err().code, codes::RT_DEV_SETUP_ERROR);
    let other = process(&libs, &cfg, "2,4", "2,4");
    other.init().unwrap();
    assert_eq!(other.set_device(0), Ok(()));
    assert_eq!(other.set_device(1), Ok(()));
}

#[test]
fn a_bad_map_fails_every_call_of_the_library() {
    let (dir, cfg) = machine(Arch::A5);
    let mut settings = settings_for(&cfg);
    settings.push((ENV_VISIBLE_DEVICES, "1,1".to_owned()));
    let lib = instance(&built_library().unwrap(), &dir.path().join("libs"), &settings).unwrap();
    let d = AclDriver::open(&AclConfig::files([&lib])).unwrap();
    assert!(d.init().is_err(), "a card named twice is no map to simulate");
}

#[test]
fn a_fault_rule_through_cg_sim_start_run_names_the_logical_card() {
    let (dir, cfg) = machine(Arch::A5);
    let d = process(&dir.path().join("libs"), &cfg, "3", "3");
    // The run's card and the rule's `dev=0` are logical 0, which is physical 3 under `3`.
    assert!(d.start_sim_run(&[0], Some("dev=0:dead")).unwrap());
    assert_eq!(card_state(&cfg, 3).unwrap().faults, vec![Fault::Dead]);
    assert!(card_state(&cfg, 0).unwrap().faults.is_empty());
    d.init().unwrap();
    assert_eq!(d.set_device(0).unwrap_err().code, codes::RT_DEV_SETUP_ERROR);
    // A rule for a card the map does not show is refused (the library names it on stderr).
    assert!(d.start_sim_run(&[0], Some("dev=1:dead")).is_err());
}
