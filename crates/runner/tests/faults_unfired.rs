//! A fault plan that does not test what it names is never a silent pass: a rule naming a card the
//! run does not hold is exit 2, a rule that did not fire by the end of the run is listed in the
//! summary and in report.json's `faults_unfired`, and `--faults-must-fire` makes that exit 1.

mod common;

use common::*;
use runner::report::model::Outcome;

fn probe() -> std::path::PathBuf {
    cardguard_test_support::bins::probe_suite().unwrap()
}

#[test]
fn a_rule_for_a_card_outside_the_run_is_bad_input() {
    let sb = Sandbox::with_cards(4);
    let run = sb.run_with(
        &probe(),
        "a5",
        &[
            "--devices",
            "0,1",
            "--case",
            "Body::chain",
            "--faults",
            "dev=3:op_timeout@1",
        ],
    );
    run.expect_code(2);
    assert_eq!(
        run.stderr.trim_end(),
        "error: --faults: fault rule \"dev=3:op_timeout@1\" names card 3, which this run does not \
         hold (its cards: 0, 1); it could never fire",
        "{}",
        run.dump()
    );
    assert!(!run.report_dir.join("report.json").exists());
    // The cards were freed: the same cards run at once.
    let again = sb.run_with(&probe(), "a5", &["--devices", "0,1", "--case", "Body::chain"]);
    again.expect_code(0);
}

#[test]
fn a_rule_that_never_fired_is_reported_and_fails_under_faults_must_fire() {
    let sb = Sandbox::with_cards(2);
    // One case launch on card 0: the rule for its 50th launch cannot fire, the one for its 1st
    // fires (and the case passes on its retry).
    let args = [
        "--devices",
        "0",
        "--case",
        "Body::chain",
        "--faults",
        "dev=0:op_timeout@50;dev=0:launch_fail@1",
    ];
    let run = sb.run_with(&probe(), "a5", &args);
    let r = run.consistent_report(0);
    assert!(
        matches!(outcome(&r, "Body::chain"), Outcome::Flaky | Outcome::Passed),
        "{}",
        run.dump()
    );
    assert_eq!(r.faults_unfired.len(), 1, "{:?}", r.faults_unfired);
    let u = &r.faults_unfired[0];
    assert_eq!((u.rule.as_str(), u.card), ("dev=0:op_timeout@50", 0));
    assert!(u.detail.starts_with("the card made "), "{}", u.detail);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.report_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["faults_unfired"][0]["rule"], "dev=0:op_timeout@50");
    assert!(
        run.stdout
            .contains("faults that never fired (the plan did not test what it names):\n  dev=0:op_timeout@50 on card 0: the card made "),
        "{}",
        run.stdout
    );
    let mut strict = args.to_vec();
    strict.push("--faults-must-fire");
    let run = sb.run_with(&probe(), "a5", &strict);
    run.expect_code(1);
    assert!(
        run.stderr
            .contains("error: 1 fault rule(s) never fired, and --faults-must-fire is set"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_plan_whose_rules_all_fired_lists_nothing() {
    let sb = Sandbox::with_cards(1);
    let run = sb.run_with(
        &probe(),
        "a5",
        &[
            "--devices",
            "0",
            "--case",
            "Body::chain",
            "--faults",
            "dev=*:launch_fail@1",
            "--faults-must-fire",
        ],
    );
    let r = run.consistent_report(0);
    assert!(r.faults_unfired.is_empty(), "{:?}", r.faults_unfired);
    assert!(!run.stdout.contains("never fired"), "{}", run.stdout);
}

/// Under `ASCEND_RT_VISIBLE_DEVICES=3` the run's card 0 is physical card 3: `dev=0` names the
/// run's card 0, its rules are armed on physical card 3 (where the lane's launches count) and
/// read back from it, so the one that can fire does and only the other is listed.
#[test]
fn a_rule_names_the_runs_card_under_a_visible_devices_map() {
    let sb = Sandbox::with_cards(4);
    let args = [
        "--devices",
        "0",
        "--case",
        "Body::chain",
        "--faults",
        "dev=0:op_timeout@50;dev=0:launch_fail@1",
    ];
    let out = sb
        .command_with(&probe(), "a5", &args)
        .env("ASCEND_RT_VISIBLE_DEVICES", "3")
        .output()
        .unwrap();
    let run = sb.finish(out);
    let r = run.consistent_report(0);
    assert!(
        matches!(outcome(&r, "Body::chain"), Outcome::Flaky | Outcome::Passed),
        "{}",
        run.dump()
    );
    assert_eq!(
        r.faults_unfired.len(),
        1,
        "{:?}\n{}",
        r.faults_unfired,
        run.dump()
    );
    let u = &r.faults_unfired[0];
    assert_eq!((u.rule.as_str(), u.card), ("dev=0:op_timeout@50", 0));
    // The rules live in physical card 3's file; physical card 0, never touched, holds none.
    let card =
        |n: u32| std::fs::read_to_string(sb.sim_root().join(format!("card-{n}.json"))).unwrap_or_default();
    assert!(card(3).contains("launch_fail"), "{}", card(3));
    assert!(!card(0).contains("launch_fail"), "{}", card(0));
}
