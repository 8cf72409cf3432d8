//! A setup failure is not a card failure: a suite binary whose probe kernel is absent stops with
//! exit 2 naming the cause before any card is taken: nothing is quarantined, no health record is
//! written, and the cards are free for the next run.

mod common;

use common::*;
use platform_common::kernel::{blob_path, built_blob_dir};
use platform_common::Arch;

fn probe() -> std::path::PathBuf {
    cardguard_test_support::bins::probe_suite().unwrap()
}

#[test]
fn a_missing_probe_kernel_is_the_runs_error_not_the_cards() {
    let sb = Sandbox::with_cards(2);
    // A kernel dir with the suite's kernel but without the probe kernel `noop`.
    let kernels = sb.dir.path().join("kernels");
    std::fs::create_dir_all(kernels.join("a5")).unwrap();
    let blob = blob_path(&built_blob_dir(Arch::A5), "vector_add");
    std::fs::copy(&blob, blob_path(&kernels.join("a5"), "vector_add")).unwrap();
    let out = sb
        .command_with(&probe(), "a5", &["--devices", "0,1", "--case", "Body::chain"])
        .env("ONBOARD_KERNEL_DIR", &kernels)
        .output()
        .unwrap();
    let run = sb.finish(out);
    run.expect_code(2);
    let err = run.stderr.trim_end();
    assert!(
        err.starts_with("error: cannot load the probe kernel: no kernel blob \"noop\" at "),
        "{err}"
    );
    assert!(err.contains("not a card"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line, no WARN about cards: {err}");
    assert!(!run.report_dir.join("report.json").exists());
    // No health record on the host, and no card quarantined: the same cards run at once.
    let records: Vec<String> = std::fs::read_dir(sb.lock_dir())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".health-"))
                .collect()
        })
        .unwrap_or_default();
    assert!(records.is_empty(), "{records:?}");
    let again = sb.run_with(&probe(), "a5", &["--devices", "0,1", "--case", "Body::chain"]);
    let r = again.consistent_report(0);
    assert_eq!(r.devices, [0, 1], "{}", again.dump());
    assert!(r
        .devices_health
        .values()
        .flatten()
        .all(|h| !format!("{h:?}").contains("Quarantined")));
}
