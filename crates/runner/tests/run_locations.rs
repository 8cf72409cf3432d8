//! A suite binary run outside any cargo target dir, with no ONBOARD_SIM_ROOT, keeps its simulated
//! cards under the temp dir: the run says where (and where their locks are) on its first line.

mod common;

use common::*;

#[test]
fn a_binary_outside_a_target_dir_says_where_its_cards_live() {
    let sb = Sandbox::with_cards(1);
    let exe = sb.dir.path().join("bin").join("probe-suite");
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    std::fs::copy(cardguard_test_support::bins::probe_suite().unwrap(), &exe).unwrap();
    let out = sb
        .command_with(&exe, "a5", &["--devices", "0", "--case", "Body::chain"])
        .env_remove("ONBOARD_SIM_ROOT")
        .env_remove("ONBOARD_LOCK_DIR")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    let run = sb.finish(out);
    run.consistent_report(0);
    let uid = rustix::process::getuid().as_raw();
    let root = sb.tmp_dir().join(format!("cardguard-{uid}")).join("sim");
    let first = run.stderr.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!(
            "note: simulated cards live in {}, their locks in {} (outside a cargo target dir; \
             ONBOARD_SIM_ROOT and ONBOARD_LOCK_DIR choose others)",
            root.display(),
            root.join("locks").display()
        ),
        "{}",
        run.dump()
    );
    // With the documented default (or a root the caller chose) nothing is said.
    let quiet = sb.run_with(&exe, "a5", &["--devices", "0", "--case", "Body::chain"]);
    quiet.expect_code(0);
    assert!(
        !quiet.stderr.contains("simulated cards live in"),
        "{}",
        quiet.stderr
    );
}
