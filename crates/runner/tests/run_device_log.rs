//! Device logs (issue 18 item 8): each lane runs with a private `ASCEND_PROCESS_LOG_PATH` under the
//! run's private directory; a failed attempt keeps what the runtime logged there during it
//! (`report.json` `device_log`, JUnit `system-err`), a passing attempt keeps none, and the
//! directory is gone when the run ends. The simulated runtime writes CANN's plog layout, in
//! process (`--platform sim`) and through `libsim_acl.so` (`--platform onboard`).

mod common;

use common::*;
use runner::report::model::{AttemptOutcome, Outcome, RunReport};

/// The op-timeout on card 0's second case: the trigger's failed attempt and everything else.
fn check(sb: &Sandbox, r: &RunReport, ids: &[String]) {
    let trigger = &ids[1];
    let t = case(r, trigger);
    assert_eq!(t.outcome, Outcome::Flaky, "{:?}", t.attempts);
    let failed = &t.attempts[0];
    assert_eq!(failed.outcome, AttemptOutcome::Failed);
    let log = failed
        .output
        .device_log
        .as_deref()
        .unwrap_or_else(|| panic!("the failed attempt kept no device log: {:?}", failed.output));
    let code = failed.error.as_ref().unwrap().code.unwrap().raw;
    let first = log.lines().next().unwrap();
    assert!(first.starts_with("[ERROR] RUNTIME("), "{log}");
    assert!(
        log.contains(&format!("ErrCode={code}")),
        "the log names the attempt's code {code}: {log}"
    );
    assert!(log.contains("aclrtSynchronizeStreamWithTimeout"), "{log}");
    for c in &r.cases {
        for a in &c.attempts {
            if a.outcome == AttemptOutcome::Passed {
                assert_eq!(
                    a.output.device_log, None,
                    "{}: a passing attempt keeps none",
                    c.id
                );
            }
        }
    }
    let xml = std::fs::read_to_string(sb.report_dir().join("junit.xml")).unwrap();
    assert!(
        xml.contains("[cardguard: device log (ASCEND_PROCESS_LOG_PATH)]"),
        "JUnit system-err carries the device log"
    );
    let left: Vec<String> = std::fs::read_dir(sb.tmp_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !left.iter().any(|n| n.starts_with("cardguard-sinks-")),
        "the run's private directory (and the lanes' logs) is gone: {left:?}"
    );
}

#[test]
fn a_failed_attempt_keeps_the_device_log_of_the_in_process_sim() {
    let sb = Sandbox::new();
    let (ids, run) = sb.run_faulted("a5", &["VectorAdd"], "dev=0:op_timeout@2");
    let r = run.consistent_report(0);
    check(&sb, &r, &ids);
}

#[test]
fn a_failed_attempt_keeps_the_device_log_of_libsim_acl() {
    let lib = cardguard_test_support::locate::built_library().unwrap();
    let sb = Sandbox::new();
    let ids = list(&sb, "a5", &selectors(&["VectorAdd"]));
    let mut c = sb.bare();
    c.env("ONBOARD_CARDS", "2")
        .env("ONBOARD_SIM_ARCH", "a5")
        .env("ONBOARD_ACL_LIB", &lib)
        .env("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "1600")
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
        .args([
            "--devices",
            "0,1",
            "--faults",
            "dev=0:op_timeout@2",
            "--case",
            "VectorAdd",
        ]);
    let run = sb.finish(c.output().unwrap());
    let r = run.consistent_report(0);
    check(&sb, &r, &ids);
}
