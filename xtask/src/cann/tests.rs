//! The conformance unit against CANN's real ACL headers, out of the torch-npu wheel `.ci/run`
//! downloads (`cardguard_test_support::real_headers`). Without the wheel each test prints that
//! it did not run; with `CARDGUARD_REQUIRE_REAL_HEADERS` set (CI) it fails instead.

use std::path::PathBuf;

use cardguard_test_support::real_headers::require_or_skip;

use super::header::parse;
use super::install::discover;
use super::unit::{check, RealHeaders};
use crate::bindgen::{workspace_root, HEADER};

fn our_header() -> PathBuf {
    workspace_root().join(HEADER)
}

fn wheel(include: PathBuf) -> RealHeaders {
    RealHeaders {
        include_dirs: vec![include],
        includes: vec!["acl/acl.h".to_owned()],
    }
}

#[test]
fn every_acl_declaration_is_the_wheels() {
    let Some(include) = require_or_skip("every_acl_declaration_is_the_wheels") else {
        return;
    };
    let outcome = check(&our_header(), &wheel(include)).unwrap();
    assert!(
        outcome.mismatches.is_empty(),
        "cardguard_cann.h differs from the wheel's ACL headers:\n{}",
        outcome.mismatches.join("\n")
    );
    // Every acl* call and every ACL_ constant of the header was compared (none absent from the
    // wheel), and nothing else of the header's ACL section went unchecked.
    let decls = parse(&std::fs::read_to_string(our_header()).unwrap());
    let acl_calls = decls.calls.iter().filter(|c| c.starts_with("acl")).count();
    let acl_consts = decls
        .constants
        .iter()
        .filter(|(n, _)| n.starts_with("ACL_"))
        .count();
    let unchecked: Vec<&String> = outcome
        .absent
        .iter()
        .filter(|n| n.starts_with("acl") || n.starts_with("ACL_"))
        .collect();
    assert!(unchecked.is_empty(), "not in the wheel's headers: {unchecked:?}");
    assert!(
        acl_calls >= 19 && acl_consts >= 20,
        "{acl_calls} calls, {acl_consts} constants"
    );
    assert!(outcome.checked >= acl_calls + acl_consts, "{outcome:?}");
}

#[test]
fn a_drifted_declaration_is_one_line_each() {
    let Some(include) = require_or_skip("a_drifted_declaration_is_one_line_each") else {
        return;
    };
    let text = std::fs::read_to_string(our_header()).unwrap();
    let drifts = [
        (
            "CG_API(aclError, aclrtSetDevice, (int32_t deviceId));",
            "CG_API(aclError, aclrtSetDevice, (uint32_t deviceId));",
        ),
        (
            "#define ACL_STOP_ON_FAILURE 0x00000001u",
            "#define ACL_STOP_ON_FAILURE 0x00000002u",
        ),
        (
            "    ACL_MEMCPY_DEVICE_TO_HOST = 2,",
            "    ACL_MEMCPY_DEVICE_TO_HOST = 3,",
        ),
        (
            "CG_API(const char *, aclGetRecentErrMsg, (void));",
            "CG_API(char *, aclGetRecentErrMsg, (void));",
        ),
    ];
    let mut drifted = text.clone();
    for (from, to) in drifts {
        assert!(drifted.contains(from), "the header no longer has `{from}`");
        drifted = drifted.replace(from, to);
    }
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("cardguard_cann.h");
    std::fs::write(&copy, drifted).unwrap();
    let outcome = check(&copy, &wheel(include)).unwrap();
    let mut names: Vec<&str> = outcome
        .mismatches
        .iter()
        .map(|m| m.split(':').next().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "ACL_MEMCPY_DEVICE_TO_HOST",
            "ACL_STOP_ON_FAILURE",
            "aclGetRecentErrMsg",
            "aclrtSetDevice"
        ],
        "{outcome:#?}"
    );
}

#[test]
fn an_install_without_runtime_or_hal_headers_names_what_it_lacks() {
    let Some(include) = require_or_skip("an_install_without_runtime_or_hal_headers_names_what_it_lacks")
    else {
        return;
    };
    let (real, missing) = discover(&[include]);
    assert_eq!(real.includes.len(), 1, "{real:?}");
    assert!(real.includes[0].ends_with("acl_rt.h"), "{real:?}");
    assert_eq!(
        missing,
        [
            "rtKernelLaunchWithHandleV2",
            "rtAicpuKernelLaunchExWithArgs and rtArgsEx_t",
            "the HAL API (halResMap)",
            "struct res_map_info",
        ]
    );
    // Against the ACL headers alone, the runtime and HAL declarations are absent, not wrong.
    let outcome = check(&our_header(), &real).unwrap();
    assert!(outcome.mismatches.is_empty(), "{outcome:#?}");
    for name in ["halResMap", "rtArgsEx_t", "RES_AICORE", "KERNEL_TYPE_AICPU_KFC"] {
        assert!(
            outcome.absent.iter().any(|a| a == name),
            "{name} not reported absent: {outcome:#?}"
        );
    }
    assert!(
        !outcome.absent.iter().any(|a| a.starts_with("acl")),
        "{outcome:#?}"
    );
}
