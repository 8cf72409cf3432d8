//! Kernels per platform: the kernel registry looks each kernel up for the run's platform and
//! arch. A case whose kernel has no binary there stops the run on sim (exit 2 naming the kernel,
//! the case and the dirs searched) and is `skipped` with that reason on onboard (before
//! hand-out: never an attempt, never in a poison sink), `--missing-kernel` choosing otherwise;
//! `--list` shows them. On `--platform
//! onboard` through `libsim_acl.so` (the CANN ABI with the simulated card behind it) with a fake
//! device binary (a host blob's bytes under a device binary's name: that library runs them),
//! found through a `manifest.json` entry or as `<name>.o` in `ONBOARD_KERNEL_DIR`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use platform_common::kernel::{blob_path, built_blob_dir};
use platform_common::Arch;
use runner::report::model::Outcome;

fn probe() -> PathBuf {
    cardguard_test_support::bins::probe_suite().unwrap()
}

/// Timeouts valid for both profiles (real cards also need stream-sync > scheduler + 1500 ms).
const TIMEOUTS: [(&str, &str); 3] = [
    ("ONBOARD_SCHEDULER_TIMEOUT_MS", "20"),
    ("ONBOARD_OP_EXECUTE_TIMEOUT_US", "60000"),
    ("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "1600"),
];

/// The probe suite on `--platform onboard` with `libsim_acl.so` and `ONBOARD_KERNEL_DIR=kernels`.
fn onboard(sb: &Sandbox, kernels: &Path, args: &[&str]) -> Command {
    let mut c = sb.bare_with(&probe());
    for (k, v) in TIMEOUTS {
        c.env(k, v);
    }
    c.env("ONBOARD_CARDS", sb.cards.to_string())
        .env("ONBOARD_SIM_ARCH", "a5")
        .env(
            "ONBOARD_ACL_LIB",
            cardguard_test_support::locate::built_library().unwrap(),
        )
        .env("ONBOARD_KERNEL_DIR", kernels)
        .env_remove("ASCEND_HOME_PATH")
        .env_remove("ASCEND_TOOLKIT_HOME")
        .args([
            "--arch",
            "a5",
            "--platform",
            "onboard",
            "--no-progress",
            "--report-dir",
        ])
        .arg(sb.report_dir())
        .args(args);
    c
}

/// A kernel dir whose a5 directory holds `fake_add` as a device binary: a copy of the
/// `vector_add` host blob, named in `manifest.json` (or, with `manifest` false, as `fake_add.o`).
fn fake_device_binaries(sb: &Sandbox, manifest: bool) -> PathBuf {
    let root = sb.dir.path().join("kernels");
    let a5 = root.join("a5");
    std::fs::create_dir_all(&a5).unwrap();
    let blob = blob_path(&built_blob_dir(Arch::A5), "vector_add");
    if manifest {
        std::fs::copy(&blob, a5.join("fake_add.bin")).unwrap();
        std::fs::write(
            a5.join("manifest.json"),
            r#"{"kernels": {"fake_add": {"file": "fake_add.bin", "block_dim": 8, "num_args": 4}}}"#,
        )
        .unwrap();
    } else {
        std::fs::copy(&blob, a5.join("fake_add.o")).unwrap();
    }
    root
}

#[test]
fn on_sim_a_kernel_without_a_host_blob_stops_the_run_naming_kernel_case_and_dirs() {
    let sb = Sandbox::with_cards(1);
    let selection = ["--devices", "0", "--case", "Kernels", "--case", "Body::chain"];
    // A declared kernel no build made is a typo or a packaging mistake: never a green run.
    let run = sb.run_with(&probe(), "a5", &selection);
    run.expect_code(2);
    let err = run.stderr.trim_end();
    assert!(
        err.starts_with(
            "error: case Kernels::absent: no kernel binary for this platform: no a5 host blob of \
             kernel \"absent_kernel\" (looked for absent_kernel.so in "
        ),
        "{err}"
    );
    assert!(err.contains("/a5"), "the dirs searched: {err}");
    assert!(err.contains("1 more case(s) lack a kernel binary too"), "{err}");
    assert!(err.contains("--missing-kernel skip"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!run.report_dir.join("report.json").exists(), "no run started");
    // `--missing-kernel skip` (or the config key) makes them skips with the same reason.
    let mut skip = selection.to_vec();
    skip.extend(["--missing-kernel", "skip"]);
    let run = sb.run_with(&probe(), "a5", &skip);
    let r = run.consistent_report(0);
    for (id, kernel) in [
        ("Kernels::fake", "fake_add"),
        ("Kernels::absent", "absent_kernel"),
    ] {
        let c = case(&r, id);
        assert_eq!(c.outcome, Outcome::Skipped, "{id}");
        assert!(c.attempts.is_empty());
        let why = c.skip_reason.clone().unwrap();
        assert!(
            why.starts_with(&format!(
                "no kernel binary for this platform: no a5 host blob of kernel {kernel:?}"
            )),
            "{why}"
        );
    }
    assert_eq!(outcome(&r, "Body::chain"), Outcome::Passed);
    // `--list` shows them (and is no error).
    let listed = sb.run_with(&probe(), "a5", &["--list", "--case", "Kernels"]);
    listed.expect_code(0);
    assert_eq!(
        listed.stdout.lines().collect::<Vec<_>>(),
        [
            "Kernels::fake  (probe, pooled)  [no binary: fake_add]",
            "Kernels::absent  (probe, pooled)  [no binary: absent_kernel]"
        ]
    );
}

#[test]
fn onboard_can_be_told_to_fail_on_a_missing_kernel() {
    let sb = Sandbox::with_cards(1);
    let kernels = fake_device_binaries(&sb, true);
    let out = onboard(
        &sb,
        &kernels,
        &["--devices", "0", "--case", "Kernels", "--missing-kernel", "fail"],
    )
    .output()
    .unwrap();
    let run = sb.finish(out);
    run.expect_code(2);
    assert!(
        run.stderr.contains(
            "error: case Kernels::absent: no kernel binary for this platform: no a5 device binary of \
             kernel \"absent_kernel\""
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn onboard_registers_a_device_binary_from_its_manifest_and_skips_what_has_none() {
    let sb = Sandbox::with_cards(2);
    let kernels = fake_device_binaries(&sb, true);
    let out = onboard(
        &sb,
        &kernels,
        &[
            "--devices",
            "0,1",
            "--case",
            "Kernels",
            "--case",
            "Body::chain",
            "--faults",
            "dev=0:launch_fail@1",
        ],
    )
    .output()
    .unwrap();
    let run = sb.finish(out);
    let r = run.consistent_report(0);
    assert_eq!(r.driver.kind, platform_common::driver::DriverKind::Acl);
    let fake = case(&r, "Kernels::fake");
    assert!(
        matches!(fake.outcome, Outcome::Passed | Outcome::Flaky),
        "the fake device binary ran: {:?}\n{}",
        fake.attempts,
        run.dump()
    );
    let absent = case(&r, "Kernels::absent");
    assert_eq!(absent.outcome, Outcome::Skipped);
    let why = absent.skip_reason.clone().unwrap();
    assert!(
        why.contains("no a5 device binary of kernel \"absent_kernel\" (looked for a manifest.json entry and absent_kernel.o"),
        "{why}"
    );
    // `vector_add` has no device binary here: behind libsim_acl.so its host blob stands in.
    assert!(matches!(
        outcome(&r, "Body::chain"),
        Outcome::Passed | Outcome::Flaky
    ));
    // The launch fault hit one of the two cases on card 0; nothing skipped reached the sink.
    assert!(run
        .sink_reads(None)
        .concat()
        .iter()
        .all(|s| !s.contains("absent")));
    // `--list` sees the same.
    let out = onboard(
        &sb,
        &kernels,
        &["--list", "--format", "json", "--case", "Kernels"],
    )
    .output()
    .unwrap();
    let listed = sb.finish(out);
    listed.expect_code(0);
    let missing: Vec<(String, serde_json::Value)> = listed
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_owned(), v["missing_kernels"].clone())
        })
        .collect();
    assert_eq!(
        missing,
        [
            ("Kernels::fake".to_owned(), serde_json::json!([])),
            ("Kernels::absent".to_owned(), serde_json::json!(["absent_kernel"]))
        ]
    );
}

#[test]
fn onboard_finds_a_dot_o_and_needs_its_metadata() {
    let sb = Sandbox::with_cards(1);
    let kernels = fake_device_binaries(&sb, false);
    // `fake_add.o` has no manifest entry and no host blob to read its metadata from.
    let out = onboard(&sb, &kernels, &["--list", "--case", "Kernels::fake"])
        .output()
        .unwrap();
    let listed = sb.finish(out);
    listed.expect_code(0);
    assert_eq!(
        listed.stdout.trim(),
        "Kernels::fake  (probe, pooled)  [no binary: fake_add]"
    );
    let out = onboard(&sb, &kernels, &["--devices", "0", "--case", "Kernels::fake"])
        .output()
        .unwrap();
    let r = sb.finish(out).consistent_report(0);
    let why = case(&r, "Kernels::fake").skip_reason.clone().unwrap();
    assert!(
        why.contains("fake_add.o has no manifest.json entry and no host blob"),
        "{why}"
    );
    // A `.o` of a kernel that has a host blob takes its metadata from it: `vector_add.o` (a copy
    // of the host blob here) is what `Body::chain` registers.
    std::fs::copy(
        blob_path(&built_blob_dir(Arch::A5), "vector_add"),
        kernels.join("a5").join("vector_add.o"),
    )
    .unwrap();
    let out = onboard(&sb, &kernels, &["--devices", "0", "--case", "Body::chain"])
        .output()
        .unwrap();
    let r = sb.finish(out).consistent_report(0);
    assert_eq!(outcome(&r, "Body::chain"), Outcome::Passed);
}

#[test]
fn a_broken_manifest_stops_the_run_naming_it() {
    let sb = Sandbox::with_cards(1);
    let kernels = fake_device_binaries(&sb, true);
    std::fs::write(kernels.join("a5").join("manifest.json"), "{\"kernels\": [").unwrap();
    let out = onboard(&sb, &kernels, &["--devices", "0", "--case", "Kernels"])
        .output()
        .unwrap();
    let run = sb.finish(out);
    run.expect_code(2);
    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", run.dump());
    assert!(
        lines[0].starts_with("error: kernel manifest ") && lines[0].contains("manifest.json"),
        "{}",
        lines[0]
    );
}

#[test]
fn kernel_files_refuses_a_suite_whose_declared_kernel_has_no_blob() {
    // What `cargo xtask archive` packs: the probe suite declares kernels no build makes, so an
    // archive of it would lack them and is refused, naming the kernel and the case.
    let sb = Sandbox::with_cards(1);
    let out = sb
        .bare_with(&probe())
        .args(["--arch", "a5", "--kernel-files"])
        .output()
        .unwrap();
    let run = sb.finish(out);
    run.expect_code(2);
    let err = run.stderr.trim_end();
    assert!(
        err.starts_with(
            "error: kernel \"absent_kernel\": declared by case Kernels::absent: no a5 host blob of kernel \
             \"absent_kernel\""
        ),
        "{err}"
    );
    assert!(err.ends_with("; an archive would lack it"), "{err}");
    // The built-in suite's binary names its kernels and the probe.
    let out = sb
        .bare()
        .args(["--arch", "a5", "--kernel-files"])
        .output()
        .unwrap();
    let listed = sb.finish(out);
    listed.expect_code(0);
    assert!(
        listed.stdout.lines().any(|l| l.ends_with("/noop.so")),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.lines().any(|l| l.ends_with("/vector_add.so")),
        "{}",
        listed.stdout
    );
}
