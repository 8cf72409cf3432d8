//! Loading the `acl` driver: every way the libraries can be missing or wrong is a typed,
//! one-line error naming what was searched, which file or which symbols; symbols resolve lazily
//! and an absent one fails only its own call, with a typed error, never a panic.
//!
//! The "partial CANN" is a real shared object compiled here from C: it exports `aclInit`,
//! `aclrtSetDevice` and `halResMap` (with CANN's codes for a repeated init, a bad device id and a
//! refused mapping), the V1 op-execute timeout (seconds; it accepts only 2, as a probe of the
//! driver's rounding) and `aclrtGetVersion` (8.1.0, as CANN 8.1 has no V2 timeout), and nothing
//! else.

#![cfg(feature = "onboard")]

use std::path::{Path, PathBuf};

use cardguard_test_support::acl_fixtures::{compile_c_library, loaded_libc};
use cardguard_test_support::entry;
use platform_common::acl::{AclConfig, AclDriver, AclLoadError, REQUIRED_SYMBOLS};
use platform_common::driver::{Driver, DriverCall, DriverKind};
use platform_common::error::{codes, FailureClass};
use platform_common::{Arch, DriverError};

const PARTIAL_C: &str = r#"
#include <stdint.h>
static int inits = 0;
int aclInit(const char *config) { (void)config; return inits++ ? 100002 : 0; }
int aclrtSetDevice(int32_t device) { return device > 7 ? 107001 : 0; }
int halResMap(unsigned int dev, void *info, unsigned long *va, unsigned int *len) {
    (void)dev; (void)info; (void)va; (void)len; return 62;
}
int aclrtSetOpExecuteTimeOut(uint32_t seconds) { return seconds == 2 ? 0 : 100000; }
int aclrtGetVersion(int32_t *major, int32_t *minor, int32_t *patch) {
    *major = 8; *minor = 1; *patch = 0; return 0;
}
"#;

/// Compiles [`PARTIAL_C`] into `dir/libpartial.so`.
fn partial_cann(dir: &Path) -> PathBuf {
    compile_c_library(dir, "libpartial.so", PARTIAL_C).unwrap()
}

fn libc_path() -> PathBuf {
    loaded_libc().expect("libc is mapped")
}

fn one_line(e: &AclLoadError) -> String {
    let text = e.to_string();
    assert!(!text.contains('\n'), "not one line: {text}");
    assert_eq!(e.class(), FailureClass::Infrastructure);
    text
}

#[test]
fn a_listed_file_that_does_not_exist_is_named() {
    let e = AclDriver::load(&AclConfig::files(["/nonexistent/cann/libascendcl.so"])).unwrap_err();
    assert!(matches!(e, AclLoadError::Missing { .. }), "{e:?}");
    let text = one_line(&e);
    assert!(
        text.contains("ONBOARD_ACL_LIB") && text.contains("/nonexistent/cann/libascendcl.so"),
        "{text}"
    );
}

#[test]
fn no_cann_on_the_search_path_names_every_directory() {
    let dir = tempfile::tempdir().unwrap();
    let e = AclDriver::load(&AclConfig::search([dir.path().to_owned()])).unwrap_err();
    assert!(matches!(e, AclLoadError::NotFound { .. }), "{e:?}");
    let text = one_line(&e);
    assert!(
        text.contains("libascendcl.so") && text.contains(&dir.path().display().to_string()),
        "{text}"
    );
}

#[test]
fn a_file_that_is_not_a_shared_object_is_refused_by_the_loader() {
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("libascendcl.so");
    std::fs::write(&bogus, "this is not an ELF file\n").unwrap();
    let e = AclDriver::load(&AclConfig::files([&bogus])).unwrap_err();
    assert!(matches!(e, AclLoadError::Open { .. }), "{e:?}");
    let text = one_line(&e);
    assert!(text.contains(&bogus.display().to_string()), "{text}");
}

#[test]
fn a_real_library_that_is_not_cann_is_named_as_such() {
    let libc = libc_path();
    let e = AclDriver::load(&AclConfig::files([&libc])).unwrap_err();
    assert!(
        matches!(
            e,
            AclLoadError::NotCann {
                symbol: "aclInit",
                ..
            }
        ),
        "{e:?}"
    );
    let text = one_line(&e);
    assert!(
        text.contains(&libc.display().to_string()) && text.contains("aclInit"),
        "{text}"
    );
}

#[test]
fn load_lists_every_missing_symbol_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let lib = partial_cann(dir.path());
    let e = AclDriver::load(&AclConfig::files([&lib])).unwrap_err();
    let AclLoadError::MissingSymbols { symbols, .. } = &e else {
        panic!("expected MissingSymbols, got {e:?}");
    };
    let expected: Vec<&str> = REQUIRED_SYMBOLS
        .iter()
        .copied()
        .filter(|s| {
            ![
                "aclInit",
                "aclrtSetDevice",
                "halResMap",
                "aclrtSetOpExecuteTimeOut",
            ]
            .contains(s)
        })
        .collect();
    assert_eq!(symbols, &expected);
    let text = one_line(&e);
    assert!(
        text.contains("aclrtResetDeviceForce")
            && text.contains(&lib.display().to_string())
            && text.contains("CANN 8.1.0"),
        "{text}"
    );
    // The V2 timeout is optional: CANN 8.1 lacks it.
    assert!(!symbols.contains(&"aclrtSetOpExecuteTimeOutV2"), "{symbols:?}");
}

#[test]
fn without_the_v2_timeout_the_v1_call_gets_whole_seconds_rounded_up() {
    let dir = tempfile::tempdir().unwrap();
    let lib = partial_cann(dir.path());
    let d = AclDriver::open(&AclConfig::files([&lib])).unwrap();
    assert_eq!(d.cann_version().as_deref(), Some("8.1.0"));
    // 1.5 s and exactly 2 s both become 2 s (the library accepts only 2).
    d.set_op_execute_timeout(1_500_000).unwrap();
    d.set_op_execute_timeout(2_000_000).unwrap();
    // 2 s and a microsecond become 3 s, which the library refuses: the driver did round up.
    let e = d.set_op_execute_timeout(2_000_001).unwrap_err();
    assert_eq!(e.call, DriverCall::SetOpExecuteTimeout);
    assert_eq!(e.code, codes::INVALID_PARAM);
}

#[test]
fn symbols_resolve_lazily_and_an_absent_one_fails_only_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let lib = partial_cann(dir.path());
    let d = AclDriver::open(&AclConfig::files([&lib]))
        .unwrap()
        .with_arch(entry(Arch::A5).hal);
    assert_eq!(d.resolved_symbols(), vec!["aclInit"], "open probes aclInit only");
    assert!(d.resolved_arch_symbols().is_empty(), "with_arch looks nothing up");
    assert!(!d.has_sim_extensions());

    assert_eq!(d.init(), Ok(()));
    assert_eq!(d.init().unwrap_err().code, codes::REPEAT_INITIALIZE);
    assert_eq!(d.set_device(2), Ok(()));
    assert_eq!(
        d.set_device(9),
        Err(DriverError::new(DriverCall::SetDevice, codes::INVALID_DEVICEID))
    );
    assert_eq!(
        d.hal_res_map(2, 0),
        Err(DriverError::new(DriverCall::HalResMap, codes::HAL_NO_PROCESS))
    );

    let e = d.create_stream().unwrap_err();
    assert_eq!(
        e,
        DriverError::new(DriverCall::CreateStream, codes::LOADER_SYMBOL_MISSING)
    );
    assert_eq!(e.class(), FailureClass::Infrastructure);
    assert_eq!(
        e.to_string(),
        "aclrtCreateStream failed: loader error 1 (CG_LOADER_SYMBOL_MISSING)"
    );
    assert_eq!(
        d.malloc(64).unwrap_err(),
        DriverError::new(DriverCall::Malloc, codes::LOADER_SYMBOL_MISSING)
    );
    let resolved = d.resolved_symbols();
    for s in ["aclInit", "aclrtSetDevice", "aclrtCreateStream", "aclrtMalloc"] {
        assert!(resolved.contains(&s), "{s} not looked up: {resolved:?}");
    }
    assert_eq!(d.resolved_arch_symbols(), vec!["halResMap"]);
    assert!(
        !resolved.contains(&"aclrtFree"),
        "looked up before use: {resolved:?}"
    );
}

#[test]
fn info_names_the_driver_and_the_files_it_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let lib = partial_cann(dir.path());
    let d = AclDriver::open(&AclConfig::files([&lib])).unwrap();
    let info = d.info();
    assert_eq!(info.kind, DriverKind::Acl);
    assert_eq!(info.library, Some(vec![lib.display().to_string()]));
    assert_eq!(d.libraries(), &[lib]);
}

#[test]
fn lookups_span_every_library_in_load_order() {
    let dir = tempfile::tempdir().unwrap();
    let lib = partial_cann(dir.path());
    // libc first: it lacks every CANN symbol, so each is found in the partial library after it.
    let d = AclDriver::open(&AclConfig::files([libc_path(), lib]))
        .unwrap()
        .with_arch(entry(Arch::A5).hal);
    assert_eq!(d.set_device(1), Ok(()));
    assert_eq!(d.hal_res_map(1, 0).unwrap_err().code, codes::HAL_NO_PROCESS);
}

const SAYS_C: &str = r#"
#include <stdint.h>
int aclInit(const char *config) { (void)config; return 0; }
int aclrtSetDevice(int32_t device) { return device > 7 ? 107001 : 0; }
const char *aclGetRecentErrMsg(void) { return "EE1001: The argument is invalid.\n  device id 9"; }
int aclrtSetOpExecuteTimeOutV2(uint64_t t, uint64_t *applied) { *applied = t; return 0; }
"#;

#[test]
fn a_failure_carries_the_runtime_message_where_the_library_exports_it() {
    let dir = tempfile::tempdir().unwrap();
    let says = compile_c_library(dir.path(), "libsays.so", SAYS_C).unwrap();
    let d = AclDriver::open(&AclConfig::files([&says])).unwrap();
    assert_eq!(d.set_device(2), Ok(()));
    let e = d.set_device(9).unwrap_err();
    assert_eq!(e.code, codes::INVALID_DEVICEID);
    let said = e.runtime_message.expect("a runtime message");
    assert_eq!(said.as_str(), "EE1001: The argument is invalid.\n  device id 9");

    // Without the symbol (the partial CANN exports none), the error carries no message.
    let partial = AclDriver::open(&AclConfig::files([partial_cann(dir.path())])).unwrap();
    assert_eq!(partial.set_device(9).unwrap_err().runtime_message, None);
}

#[test]
fn the_applied_op_execute_timeout_is_whole_seconds_without_v2() {
    let dir = tempfile::tempdir().unwrap();
    let d = AclDriver::open(&AclConfig::files([partial_cann(dir.path())])).unwrap();
    assert_eq!(d.applied_op_execute_us(1_200_000), 2_000_000);
    assert_eq!(d.applied_op_execute_us(1), 1_000_000);
    assert_eq!(d.applied_op_execute_us(3_000_000), 3_000_000);
    // With V2 (microseconds), as requested.
    let says = AclDriver::open(&AclConfig::files([compile_c_library(
        dir.path(),
        "libsays.so",
        SAYS_C,
    )
    .unwrap()]))
    .unwrap();
    assert_eq!(says.applied_op_execute_us(1_200_000), 1_200_000);
}
