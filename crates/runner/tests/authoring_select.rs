//! Selection by tag and exclusion, and `--list --format json`, through the suite binaries: tag
//! and exclude selectors take what they name, a selector that matches nothing is a one-line
//! error (exit 2), and the JSON list parses, one object per line, and matches the plain list's
//! selection (the built-in suite's too).

mod common;

use std::path::PathBuf;

use common::*;

fn probe() -> PathBuf {
    cardguard_test_support::bins::probe_suite().unwrap()
}

/// The plain `--list` ids of the probe suite for `args`.
fn probe_list(sb: &Sandbox, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--list"];
    all.extend_from_slice(args);
    let run = sb.run_with(&probe(), "a5", &all);
    run.expect_code(0);
    run.stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// Exit 2 and one line on stderr that is `want`.
fn usage_error(sb: &Sandbox, args: &[&str], want: &str) {
    let run = sb.run_with(&probe(), "a5", args);
    run.expect_code(2);
    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines, [format!("error: {want}")], "{args:?}");
}

#[test]
fn tag_and_exclude_selectors_take_what_they_name() {
    let sb = Sandbox::new();
    assert_eq!(probe_list(&sb, &["--case", "tag:slow"]), ["Settings::tagged"]);
    assert_eq!(
        probe_list(
            &sb,
            &[
                "--case",
                "Settings",
                "--exclude",
                "tag:sdma",
                "--exclude",
                "Settings::stall"
            ]
        ),
        ["Settings::own_retries", "Settings::skipped"]
    );
    let all = probe_list(&sb, &[]);
    let without = probe_list(&sb, &["--exclude", "Body", "--exclude", "Kernels::absent"]);
    let want: Vec<String> = all
        .iter()
        .filter(|id| !id.starts_with("Body::") && *id != "Kernels::absent")
        .cloned()
        .collect();
    assert_eq!(without, want);
    // A run holds exactly what the list shows.
    let run = sb.run_with(
        &probe(),
        "a5",
        &["--devices", "0", "--case", "tag:sdma", "--case", "Body::chain"],
    );
    let r = run.consistent_report(0);
    let mut ids: Vec<&str> = r.cases.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["Body::chain", "Settings::tagged"]);
}

#[test]
fn a_selector_that_matches_nothing_is_a_one_line_error() {
    let sb = Sandbox::new();
    usage_error(
        &sb,
        &["--case", "tag:gpu"],
        "--case tag:gpu matches no case of the suite (--list shows them)",
    );
    usage_error(
        &sb,
        &["--exclude", "tag:gpu"],
        "--exclude tag:gpu matches no case of the suite (--list shows them)",
    );
    usage_error(
        &sb,
        &["--exclude", "Nope::x"],
        "--exclude Nope::x matches no case of the suite (--list shows them)",
    );
    usage_error(
        &sb,
        &["--case", "tag:slow", "--exclude", "Settings::tagged"],
        "--case tag:slow --exclude Settings::tagged select no case on a5 (--list shows what a filter selects)",
    );
    let run = sb.run_with(&probe(), "a5", &["--exclude", "tag:a b"]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("tag:a b") && run.stderr.lines().count() == 1,
        "{}",
        run.stderr
    );
}

/// The JSON lines of `--list --format json` for `args`, parsed.
fn json_list(sb: &Sandbox, exe: &std::path::Path, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["--list", "--format", "json"];
    all.extend_from_slice(args);
    let run = sb.run_with(exe, "a5", &all);
    run.expect_code(0);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON object per line: {e}: {l}")))
        .collect()
}

#[test]
fn list_format_json_parses_and_matches_the_selection() {
    let sb = Sandbox::new();
    let args = [
        "--case",
        "Settings",
        "--case",
        "Kernels",
        "--exclude",
        "Settings::skipped",
    ];
    let objects = json_list(&sb, &probe(), &args);
    let ids: Vec<&str> = objects.iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, probe_list(&sb, &args));
    let by_id = |id: &str| objects.iter().find(|o| o["id"] == id).unwrap();
    let stall = by_id("Settings::stall");
    assert_eq!(stall["timeout_s"], 1.0);
    assert_eq!(stall["retries"], 0);
    assert_eq!(stall["class"], "Settings");
    assert_eq!(stall["runtime"], "probe");
    assert_eq!(stall["kind"], "pooled");
    assert_eq!(stall["body"], "host");
    assert_eq!(stall["devices"], 1);
    assert_eq!(stall["arch"], serde_json::json!(["a5", "a2a3"]));
    assert_eq!(by_id("Settings::own_retries")["retries"], 3);
    assert_eq!(
        by_id("Settings::own_retries")["timeout_s"],
        300.0,
        "--case-timeout's default applies"
    );
    assert_eq!(
        by_id("Settings::tagged")["tags"],
        serde_json::json!(["slow", "sdma"])
    );
    // On simulated cards, neither kernel of the `Kernels` class has a host blob.
    assert_eq!(
        by_id("Kernels::absent")["missing_kernels"],
        serde_json::json!(["absent_kernel"])
    );
    assert_eq!(
        by_id("Kernels::fake")["missing_kernels"],
        serde_json::json!(["fake_add"])
    );
    assert_eq!(by_id("Settings::stall")["missing_kernels"], serde_json::json!([]));
    // The flags' values apply to cases without their own.
    let objects = json_list(
        &sb,
        &probe(),
        &[
            "--case",
            "Settings::tagged",
            "--case-timeout",
            "12.5",
            "--retries",
            "7",
        ],
    );
    assert_eq!(objects.len(), 1);
    assert_eq!(
        (objects[0]["timeout_s"].clone(), objects[0]["retries"].clone()),
        (12.5.into(), 7.into())
    );
}

#[test]
fn the_built_in_suites_json_list_matches_its_plain_list() {
    let sb = Sandbox::new();
    let exe = PathBuf::from(SUITE);
    let objects = json_list(&sb, &exe, &[]);
    let ids: Vec<String> = objects
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, list(&sb, "a5", &[]));
    assert!(ids.len() >= 40);
    let hang = objects
        .iter()
        .find(|o| o["id"] == "AicoreOpTimeout::hang")
        .unwrap();
    assert_eq!(hang["kind"], "standalone");
    assert_eq!(hang["expect_failure"]["expected"], "op_timeout");
    assert!(
        objects
            .iter()
            .all(|o| o["missing_kernels"] == serde_json::json!([])),
        "every built-in kernel has its blob on sim"
    );
    let multi = objects
        .iter()
        .find(|o| o["id"] == "MultiCard::vector_add_on_two_cards")
        .unwrap();
    assert_eq!(multi["devices"], 2);
}
