//! A fault rule `dev=N` under a non-identity `ASCEND_RT_VISIBLE_DEVICES` map: N is the logical
//! card (what `--devices` takes and a report shows first, `card N (physical P)`), and its faults
//! land on the physical card's state, where the simulated card lives.

use platform_common::driver::Driver;
use platform_common::error::codes;
use platform_common::sim::{
    card_state, start_run_mapped, Fault, FaultPlan, PlanErrorKind, SimConfig, SimDriver, SimError,
};
use platform_common::visible::VisibleDevices;
use platform_common::Arch;

fn machine() -> (tempfile::TempDir, SimConfig) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new(
        cardguard_test_support::entry(Arch::A5).facts,
        dir.path().join("sim"),
    );
    (dir, cfg)
}

fn plan(text: &str) -> FaultPlan {
    text.parse().unwrap()
}

#[test]
fn a_rule_names_the_logical_card_and_fires_on_its_physical_card() {
    let (_dir, cfg) = machine();
    let map = VisibleDevices::parse("5,2").unwrap();
    start_run_mapped(&cfg, &map, &[0, 1], &plan("dev=0:dead")).unwrap();
    // Logical 0 is physical 5: its file holds the rule; physical 0 and 2 hold none.
    assert_eq!(card_state(&cfg, 5).unwrap().faults, vec![Fault::Dead]);
    assert!(card_state(&cfg, 2).unwrap().faults.is_empty());
    assert!(card_state(&cfg, 0).unwrap().faults.is_empty());

    // The fault fires where the process under the map meets logical 0 ...
    let mapped = SimDriver::new(cfg.clone()).with_visible(map);
    mapped.init().unwrap();
    assert_eq!(mapped.set_device(0).unwrap_err().code, codes::RT_DEV_SETUP_ERROR);
    assert_eq!(mapped.set_device(1), Ok(()));
    // ... and on physical 5 for any process, while physical 0 is healthy.
    let direct = SimDriver::new(cfg);
    direct.init().unwrap();
    assert_eq!(direct.set_device(0), Ok(()));
    assert_eq!(direct.set_device(5).unwrap_err().code, codes::RT_DEV_SETUP_ERROR);
}

#[test]
fn a_rule_beyond_the_map_is_out_of_range_and_an_invisible_card_is_named() {
    let (_dir, cfg) = machine();
    let map = VisibleDevices::parse("5,2").unwrap();
    // The map shows two cards: `dev=2` names none of them (the sim has 8 physical cards).
    let e = start_run_mapped(&cfg, &map, &[0], &plan("dev=2:dead")).unwrap_err();
    let SimError::Plan(p) = &e else {
        panic!("expected a plan error, got {e:?}");
    };
    assert_eq!(p.kind, PlanErrorKind::CardOutOfRange { card: 2, cards: 2 });
    let e = start_run_mapped(&cfg, &map, &[2], &FaultPlan::default()).unwrap_err();
    assert!(matches!(e, SimError::NotVisible { card: 2, visible: 2 }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("ASCEND_RT_VISIBLE_DEVICES") && !text.contains('\n'),
        "{text}"
    );
}

#[test]
fn under_the_identity_a_rule_names_the_physical_card_as_before() {
    let (_dir, cfg) = machine();
    start_run_mapped(&cfg, &VisibleDevices::identity(), &[3], &plan("dev=3:dead")).unwrap();
    assert_eq!(card_state(&cfg, 3).unwrap().faults, vec![Fault::Dead]);
}
