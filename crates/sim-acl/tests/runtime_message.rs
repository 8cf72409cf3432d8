//! A failing call through the C ABI carries the runtime's words: `libsim_acl.so` leaves a
//! message for `aclGetRecentErrMsg`, and the `acl` driver reads it right after the failure.

use platform_common::driver::{Driver, DriverCall};
use platform_common::error::codes;
use platform_common::sim::SimConfig;
use platform_common::Arch;

#[test]
fn a_failed_call_carries_the_message_libsim_acl_left_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new(
        cardguard_test_support::entry(Arch::A5).facts,
        dir.path().join("sim"),
    );
    let libs = dir.path().join("libs");
    std::fs::create_dir_all(&libs).unwrap();
    let driver = cardguard_test_support::locate::acl_process(&libs, &cfg).unwrap();
    driver.init().unwrap();
    driver.set_device(0).unwrap();
    let e = driver.set_device(4096).unwrap_err();
    assert_eq!((e.call, e.code), (DriverCall::SetDevice, codes::INVALID_DEVICEID));
    let said = e.runtime_message.expect("a runtime message").as_str();
    assert!(said.starts_with("EE9999:"), "{said}");
    assert!(
        said.contains("aclrtSetDevice") && said.contains("107001"),
        "{said}"
    );
}
