//! The config file through the suite binary: found from the current directory upward,
//! `--show-config` (exit 0), a bad value (exit 2, one line naming file, line and key), run
//! settings from a profile, the environment and a flag reaching a run's attempts, and per-case
//! overrides applied to exactly the cases their selector takes (their attempts and timeouts in
//! the report).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use runner::report::model::AttemptOutcome as A;

/// Writes `text` as the sandbox's `.config/cardguard.toml` (the sandbox dir is the runs' current
/// directory).
fn write_config(sb: &Sandbox, text: &str) -> PathBuf {
    let dir = sb.dir.path().join(".config");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cardguard.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(sb: &Sandbox, mut c: Command) -> Run {
    sb.finish(c.output().unwrap())
}

/// Both cases launch once on card 0; launches 1 and 2 fail, so each case's first attempt fails
/// and any retry passes.
const TWO_FAILS: [&str; 8] = [
    "--devices",
    "0",
    "--case",
    "Noop::once",
    "--case",
    "VectorAdd::single_element",
    "--faults",
    "dev=0:launch_fail@1;dev=0:launch_fail@2",
];

const CONFIG: &str = "\
[profile.default]
retries = 0

[[profile.default.overrides]]
filter = \"Noop::\"
retries = 1

[profile.ci]
retries = 2
";

#[test]
fn overrides_and_profile_retries_reach_the_right_cases() {
    let sb = Sandbox::with_cards(1);
    write_config(&sb, CONFIG);
    let r = sb.run("a5", &TWO_FAILS).consistent_report(1);
    assert_eq!(
        attempts(&r, "Noop::once"),
        [A::Failed, A::Passed],
        "the override's 1 retry"
    );
    assert_eq!(
        attempts(&r, "VectorAdd::single_element"),
        [A::Failed],
        "the profile's retries = 0"
    );
}

#[test]
fn the_environment_beats_the_profile_and_the_flag_beats_both() {
    let sb = Sandbox::with_cards(1);
    write_config(&sb, CONFIG);
    let mut c = sb.command("a5", &TWO_FAILS);
    c.env("CARDGUARD_RETRIES", "1");
    let r = run(&sb, c).consistent_report(0);
    assert_eq!(attempts(&r, "VectorAdd::single_element"), [A::Failed, A::Passed]);
    let mut args = TWO_FAILS.to_vec();
    args.extend(["--retries", "0"]);
    let mut c = sb.command("a5", &args);
    c.env("CARDGUARD_RETRIES", "1");
    let r = run(&sb, c).consistent_report(1);
    assert_eq!(attempts(&r, "VectorAdd::single_element"), [A::Failed]);
    // The override still wins for its case: it names the case, the flag does not.
    assert_eq!(attempts(&r, "Noop::once"), [A::Failed, A::Passed]);
}

#[test]
fn a_profile_selected_by_the_environment_applies_to_the_run() {
    let sb = Sandbox::with_cards(1);
    write_config(&sb, CONFIG);
    let mut c = sb.command("a5", &TWO_FAILS);
    c.env("CARDGUARD_PROFILE", "ci");
    let r = run(&sb, c).consistent_report(0);
    assert_eq!(
        attempts(&r, "VectorAdd::single_element"),
        [A::Failed, A::Passed],
        "ci's retries = 2 (one used)"
    );
    // ci inherits default's override.
    assert_eq!(attempts(&r, "Noop::once"), [A::Failed, A::Passed]);
}

#[test]
fn an_override_timeout_times_out_its_case_under_a_long_flag() {
    let sb = Sandbox::with_cards(1);
    write_config(
        &sb,
        "[[profile.default.overrides]]\nfilter = \"Noop::once\"\ntimeout = 1\nretries = 0\n",
    );
    let start = Instant::now();
    let r = sb
        .run(
            "a5",
            &[
                "--devices",
                "0",
                "--case",
                "Noop::once",
                "--case",
                "Noop::twice",
                "--faults",
                "dev=0:stall@1",
                "--case-timeout",
                "300",
            ],
        )
        .consistent_report(1);
    let took = start.elapsed();
    assert_eq!(attempts(&r, "Noop::once"), [A::TimedOut]);
    let e = case(&r, "Noop::once").attempts[0].error.clone().unwrap();
    assert!(
        e.message.starts_with("exceeded its own timeout of 1 s"),
        "{}",
        e.message
    );
    assert_eq!(
        attempts(&r, "Noop::twice"),
        [A::Passed],
        "not taken by the filter"
    );
    // 1 s, the 2 s grace, a fresh lane and reports; far from --case-timeout's 300 s.
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

#[test]
fn list_json_shows_what_the_overrides_give_each_case() {
    let sb = Sandbox::with_cards(1);
    write_config(
        &sb,
        "[profile.default]\ncase-timeout = 40\n[[profile.default.overrides]]\nfilter = \"Noop::twice\"\ntimeout = 7\n",
    );
    let mut c = sb.bare();
    c.args([
        "--arch",
        "a5",
        "--platform",
        "sim",
        "--list",
        "--format",
        "json",
        "--case",
        "Noop",
    ]);
    let out = run(&sb, c);
    out.expect_code(0);
    let timeouts: Vec<(String, f64)> = out
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_owned(),
                v["timeout_s"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(
        timeouts.contains(&("Noop::twice".to_owned(), 7.0)),
        "{timeouts:?}"
    );
    assert!(
        timeouts.contains(&("Noop::once".to_owned(), 40.0)),
        "{timeouts:?}"
    );
}

#[test]
fn show_config_prints_the_resolved_settings_and_exits_0() {
    let sb = Sandbox::with_cards(1);
    let path = write_config(&sb, CONFIG);
    let sub = sb.dir.path().join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let mut c = sb.bare();
    c.current_dir(&sub).env("CARDGUARD_INIT_TIMEOUT", "9").args([
        "--arch",
        "a2a3",
        "--show-config",
        "--profile",
        "ci",
        "--no-progress",
    ]);
    let out = run(&sb, c);
    out.expect_code(0);
    let text = &out.stdout;
    let p = path.display();
    assert!(
        text.starts_with(&format!(
            "config file: {p} (found upward from {})\n",
            sub.display()
        )),
        "{text}"
    );
    let rows: Vec<String> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    for want in [
        "profile: ci (flag --profile)".to_owned(),
        format!("retries 2 profile ci at {p}:9"),
        "init-timeout 9 s env CARDGUARD_INIT_TIMEOUT".to_owned(),
        "no-progress true flag --no-progress".to_owned(),
        "case-timeout 300 s default".to_owned(),
        format!("filter \"Noop::\": retries 1 (profile default at {p}:4; takes 4 case(s) on a2a3)"),
    ] {
        assert!(rows.contains(&want), "{want:?} in\n{text}");
    }
}

#[test]
fn a_bad_value_is_one_line_naming_file_line_and_key_exit_2() {
    let sb = Sandbox::with_cards(1);
    let path = write_config(&sb, "[profile.ci]\n# a comment\nretries = -1\n");
    let mut c = sb.bare();
    c.args(["--arch", "a5", "--show-config"]);
    let out = run(&sb, c);
    out.expect_code(2);
    assert_eq!(
        out.stderr.trim_end(),
        format!(
            "error: {}:3: profile.ci.retries: \"-1\" is not a whole number",
            path.display()
        )
    );
    // `--config` names a file anywhere.
    let other = sb.dir.path().join("other.toml");
    std::fs::write(&other, "[profile.default]\nbogus = 1\n").unwrap();
    let mut c = sb.bare();
    c.args(["--arch", "a5", "--list", "--config"]).arg(&other);
    let out = run(&sb, c);
    out.expect_code(2);
    let line = out.stderr.trim_end();
    assert!(
        line.starts_with(&format!(
            "error: {}:2: profile.default.bogus: unknown field `bogus`",
            other.display()
        )),
        "{line}"
    );
    assert!(!line.contains('\n'));
}

#[test]
fn a_profile_fault_plan_is_checked_naming_its_line() {
    let sb = Sandbox::with_cards(1);
    let path = write_config(&sb, "[profile.default]\nfaults = \"dev=7:op_timeout@1\"\n");
    let mut c = sb.bare();
    c.args(["--arch", "a5", "--platform", "sim", "--list"]);
    let out = run(&sb, c);
    out.expect_code(2);
    let want = format!("error: {}:2: profile.default.faults: ", path.display());
    assert!(out.stderr.starts_with(&want), "{}", out.stderr);
}
