//! Version tolerance per arch (issue 18 item 9): the symbols every arch needs
//! (`REQUIRED_SYMBOLS`), the register-mapping HAL symbols only the arch that calls them needs
//! (`halResMap` on a5; `halGetDeviceInfoByBuff` and `halMemCtl` on a2a3, each arch crate's
//! `hal::REQUIRED`), and a load error that names every absent symbol with the CANN version the
//! library reports.
//!
//! The libraries are real shared objects compiled here from C, so an absent symbol is one the
//! dynamic loader really cannot resolve. Every function they export returns 0 and is only
//! resolved, never called, except `aclsysGetVersionStr`, which has its real signature
//! (`aclError aclsysGetVersionStr(char *pkgName, char *versionStr)`, torch_npu wheel
//! `torch_npu/include/acl/acl_rt.h`) and reports "8.2.RC1".

#![cfg(feature = "onboard")]

use std::path::{Path, PathBuf};

use cardguard_test_support::acl_fixtures::compile_c_library;
use cardguard_test_support::entry;
use platform_common::acl::{AclConfig, AclDriver, AclLoadError, REQUIRED_SYMBOLS};
use platform_common::driver::{Driver, DriverCall};
use platform_common::error::codes;
use platform_common::{Arch, DriverError};

const VERSION_C: &str = r#"
#include <string.h>
int aclsysGetVersionStr(char *pkg, char *out) {
    if (strcmp(pkg, "runtime") != 0) return 100000;
    strcpy(out, "8.2.RC1");
    return 0;
}
"#;

/// A library exporting every shared required symbol, the version call and `hal`, compiled into
/// `dir/name`.
fn library(dir: &Path, name: &str, hal: &[&str]) -> PathBuf {
    let mut source = String::from(VERSION_C);
    for s in REQUIRED_SYMBOLS.iter().chain(hal) {
        source.push_str(&format!("int {s}(void) {{ return 0; }}\n"));
    }
    compile_c_library(dir, name, &source).unwrap()
}

fn missing(e: AclLoadError) -> (Vec<&'static str>, String) {
    let text = e.to_string();
    assert!(!text.contains('\n'), "not one line: {text}");
    match e {
        AclLoadError::MissingSymbols { symbols, .. } => (symbols, text),
        other => panic!("expected MissingSymbols, got {other:?}"),
    }
}

#[test]
fn the_register_mapping_symbols_are_required_only_by_the_arch_that_calls_them() {
    assert!(
        !REQUIRED_SYMBOLS.iter().any(|s| s.starts_with("hal")),
        "{REQUIRED_SYMBOLS:?}"
    );
    assert_eq!(entry(Arch::A5).hal.required, ["halResMap"]);
    assert_eq!(
        entry(Arch::A2a3).hal.required,
        ["halGetDeviceInfoByBuff", "halMemCtl"]
    );

    let dir = tempfile::tempdir().unwrap();
    let none = library(dir.path(), "libnohal.so", &[]);
    // Arch-neutral, nothing of the HAL is needed.
    AclDriver::load(&AclConfig::files([&none])).unwrap();
    // Each arch names exactly its own, with the version the library reports.
    let (a5, text) =
        missing(AclDriver::load_for(&AclConfig::files([&none]), entry(Arch::A5).hal).unwrap_err());
    assert_eq!(a5, ["halResMap"]);
    assert!(
        text.contains("CANN 8.2.RC1") && text.contains("libnohal.so"),
        "{text}"
    );
    let (a2a3, text) =
        missing(AclDriver::load_for(&AclConfig::files([&none]), entry(Arch::A2a3).hal).unwrap_err());
    assert_eq!(a2a3, ["halGetDeviceInfoByBuff", "halMemCtl"]);
    assert!(
        text.contains("CANN 8.2.RC1") && !text.contains("halResMap"),
        "{text}"
    );

    // A library with a5's HAL symbol serves a5 and not a2a3, and the other way round.
    let a5_lib = library(dir.path(), "liba5hal.so", &["halResMap"]);
    AclDriver::load_for(&AclConfig::files([&a5_lib]), entry(Arch::A5).hal).unwrap();
    let (a2a3, _) =
        missing(AclDriver::load_for(&AclConfig::files([&a5_lib]), entry(Arch::A2a3).hal).unwrap_err());
    assert_eq!(a2a3, ["halGetDeviceInfoByBuff", "halMemCtl"]);
    let a2a3_lib = library(
        dir.path(),
        "liba2a3hal.so",
        &["halGetDeviceInfoByBuff", "halMemCtl"],
    );
    AclDriver::load_for(&AclConfig::files([&a2a3_lib]), entry(Arch::A2a3).hal).unwrap();
    let (a5, _) =
        missing(AclDriver::load_for(&AclConfig::files([&a2a3_lib]), entry(Arch::A5).hal).unwrap_err());
    assert_eq!(a5, ["halResMap"]);
}

#[test]
fn a_load_error_lists_the_shared_symbols_first_then_the_arch_ones() {
    let dir = tempfile::tempdir().unwrap();
    // Only the version call and aclInit: everything else is absent.
    let source = format!("{VERSION_C}int aclInit(void) {{ return 0; }}\n");
    let lib = compile_c_library(dir.path(), "libbare.so", &source).unwrap();
    let (symbols, text) =
        missing(AclDriver::load_for(&AclConfig::files([&lib]), entry(Arch::A2a3).hal).unwrap_err());
    let mut expected: Vec<&str> = REQUIRED_SYMBOLS
        .iter()
        .copied()
        .filter(|s| *s != "aclInit")
        .collect();
    expected.extend(["halGetDeviceInfoByBuff", "halMemCtl"]);
    assert_eq!(symbols, expected);
    assert!(text.contains("CANN 8.2.RC1"), "{text}");
}

#[test]
fn a_mapping_call_the_arch_does_not_make_is_a_loader_error() {
    let dir = tempfile::tempdir().unwrap();
    let lib = library(
        dir.path(),
        "liball.so",
        &["halResMap", "halGetDeviceInfoByBuff", "halMemCtl"],
    );
    let symbol_missing = |call| DriverError::new(call, codes::LOADER_SYMBOL_MISSING);
    let a5 = AclDriver::load_for(&AclConfig::files([&lib]), entry(Arch::A5).hal).unwrap();
    assert_eq!(
        a5.hal_mem_ctl(0).unwrap_err(),
        symbol_missing(DriverCall::HalMemCtl)
    );
    let a2a3 = AclDriver::load_for(&AclConfig::files([&lib]), entry(Arch::A2a3).hal).unwrap();
    assert_eq!(
        a2a3.hal_res_map(0, 0).unwrap_err(),
        symbol_missing(DriverCall::HalResMap)
    );
    // Loaded without an arch, the driver maps nothing, and looks nothing of the HAL up.
    let neutral = AclDriver::load(&AclConfig::files([&lib])).unwrap();
    assert_eq!(
        neutral.hal_res_map(0, 0).unwrap_err(),
        symbol_missing(DriverCall::HalResMap)
    );
    assert_eq!(
        neutral.hal_mem_ctl(0).unwrap_err(),
        symbol_missing(DriverCall::HalMemCtl)
    );
    assert!(neutral.resolved_arch_symbols().is_empty());
}
