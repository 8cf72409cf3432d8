//! Every bad flag value, selector, device list, fault plan or environment value is exit 2 with a
//! one-line error naming the bad part; `--list` and partitions select without running.

mod common;

use common::*;
use platform_common::lease::LeaseConfig;
use platform_common::DeviceLease;

fn bad(sb: &Sandbox, args: &[&str], env: &[(&str, &str)], needle: &str) {
    let mut c = sb.bare();
    c.args(["--no-progress", "--report-dir"])
        .arg(sb.report_dir())
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?} {env:?}: one line, got {err:?}");
    assert!(
        lines[0].contains(needle),
        "{args:?} {env:?}: {:?} does not name {needle:?}",
        lines[0]
    );
    assert!(
        !sb.report_dir().join("report.json").exists(),
        "no run for bad input"
    );
}

#[test]
fn every_bad_input_is_exit_2_and_one_line() {
    let sb = Sandbox::new();
    let a5 = ["--arch", "a5", "--platform", "sim"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { a5.iter().chain(extra).copied().collect() };
    bad(&sb, &["--platform", "sim"], &[], "--arch");
    bad(&sb, &["--arch", "a7"], &[], "a7");
    bad(&sb, &["--arch", "a5", "--platform", "tpu"], &[], "tpu");
    bad(&sb, &with(&["--devices", "2-1"]), &[], "2-1");
    bad(&sb, &with(&["--devices", "zero"]), &[], "zero");
    bad(&sb, &with(&["--devices", "9"]), &[], "card 9");
    bad(&sb, &with(&["--devices", "0-4000000000"]), &[], "0-4000000000");
    bad(&sb, &with(&["--device-num", "0"]), &[], "--device-num");
    bad(&sb, &with(&["--device-num", "9"]), &[], "--device-num");
    bad(&sb, &with(&["--case", "NoSuchClass"]), &[], "NoSuchClass");
    bad(&sb, &with(&["--case", "VectorAdd::nope"]), &[], "VectorAdd::nope");
    bad(&sb, &with(&["--case", "a::b::c"]), &[], "a::b::c");
    bad(
        &sb,
        &with(&["--runtime", "no_such_runtime"]),
        &[],
        "no_such_runtime",
    );
    // Filters that each match something but together select nothing.
    bad(
        &sb,
        &with(&["--case", "VectorAdd", "--runtime", "host_build_graph"]),
        &[],
        "--case VectorAdd:: --runtime host_build_graph select no case on a5",
    );
    bad(
        &sb,
        &with(&["--case", "RmsNorm::a2a3_hidden1024"]),
        &[],
        "--case RmsNorm::a2a3_hidden1024 select no case on a5",
    );
    bad(&sb, &with(&["--retries", "many"]), &[], "many");
    bad(&sb, &with(&["--flaky-result", "ok"]), &[], "ok");
    bad(&sb, &with(&["--case-timeout", "-3"]), &[], "-3");
    bad(&sb, &with(&["--partition", "hash:0/2"]), &[], "hash:0/2");
    bad(&sb, &with(&["--partition", "mod:1/2"]), &[], "mod:1/2");
    bad(&sb, &with(&["--faults", "dev=0:explode@1"]), &[], "explode");
    bad(&sb, &with(&["--faults", "dev=7:dead"]), &[], "dev=7");
    bad(&sb, &with(&["--no-such-flag"]), &[], "--no-such-flag");
    bad(&sb, &a5, &[("ONBOARD_SIM_CARDS", "lots")], "ONBOARD_SIM_CARDS");
    bad(
        &sb,
        &a5,
        &[("ONBOARD_OP_EXECUTE_TIMEOUT_US", "soon")],
        "ONBOARD_OP_EXECUTE_TIMEOUT_US",
    );
    bad(
        &sb,
        &a5,
        &[("ONBOARD_STREAM_SYNC_TIMEOUT_MS", "10")],
        "op-execute < stream-sync",
    );
    bad(
        &sb,
        &a5,
        &[("ONBOARD_SIM_FAULTS", "dev=0:op_timeout@x")],
        "op_timeout@x",
    );
}

#[test]
fn a_card_held_by_someone_else_is_exit_2_naming_the_holder() {
    let sb = Sandbox::new();
    let held = DeviceLease::try_acquire(&LeaseConfig { dir: sb.lock_dir() }, 1, "someone-elses-run").unwrap();
    bad(
        &sb,
        &["--arch", "a5", "--platform", "sim", "--devices", "0,1"],
        &[],
        "someone-elses-run",
    );
    // `auto` takes free cards around it.
    let run = sb.run("a5", &["--case", "VectorAdd", "--device-num", "2"]);
    run.expect_code(0);
    assert_eq!(run.report().devices, vec![0, 2]);
    drop(held);
}

#[test]
fn list_selects_without_running_and_partitions_split_the_classes() {
    let sb = Sandbox::new();
    let all = list(&sb, "a5", &[]);
    assert!(all.len() >= 40);
    assert!(!sb.report_dir().exists(), "--list runs nothing");
    let mut joined: Vec<String> = Vec::new();
    for k in 1..=3 {
        let part = list(&sb, "a5", &["--partition", &format!("hash:{k}/3")]);
        for id in &part {
            let class = id.split("::").next().unwrap();
            assert!(
                !joined.iter().any(|j| j.split("::").next().unwrap() == class),
                "class {class} in two partitions"
            );
        }
        joined.extend(part);
    }
    joined.sort();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(joined, sorted);
}

#[test]
fn onboard_without_cann_is_exit_2_naming_the_search_path() {
    let sb = Sandbox::new();
    let out = sb
        .bare()
        .args(["--arch", "a5", "--platform", "onboard", "--no-progress"])
        .env_remove("ONBOARD_ACL_LIB")
        .env("ASCEND_HOME_PATH", sb.dir.path().join("no-cann-here"))
        .env_remove("ASCEND_TOOLKIT_HOME")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || std::path::Path::new("/usr/local/Ascend").exists() {
        // A real CANN install on this machine: nothing to check.
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("no-cann-here"),
        "names the search path: {}",
        lines[0]
    );
}

#[test]
fn an_empty_partition_share_is_no_error() {
    let sb = Sandbox::new();
    // One class over many shares: some share is empty, and listing it succeeds with nothing.
    let empty = (1..=16).find_map(|k| {
        let part = format!("hash:{k}/16");
        let out = sb
            .command("a5", &["--list", "--case", "VectorAdd", "--partition", &part])
            .output()
            .unwrap();
        (out.status.success() && out.stdout.is_empty()).then_some(part)
    });
    assert!(empty.is_some(), "no empty share of 16 for one class");
}
