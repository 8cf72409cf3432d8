//! The real ACL headers are found where `.ci/run` puts them, and hold the files the conformance
//! tests read.

use cardguard_test_support::real_headers::require_or_skip;

#[test]
fn the_wheel_yields_the_acl_headers() {
    let Some(dir) = require_or_skip("the_wheel_yields_the_acl_headers") else {
        return;
    };
    for f in [
        "acl/acl_rt.h",
        "acl/acl_base.h",
        "acl/error_codes/rt_error_codes.h",
    ] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(
            text.contains("#define") || text.contains("typedef"),
            "{f} is not a header"
        );
    }
    let rt = std::fs::read_to_string(dir.join("acl/acl_rt.h")).unwrap();
    assert!(
        rt.contains("aclrtResetDeviceForce"),
        "acl_rt.h declares aclrtResetDeviceForce"
    );
}
