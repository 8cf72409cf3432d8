//! The closing summary for people: the counts, the failed and flaky cases, each card's story.

use cardguard_report::render_summary;
use cardguard_test_support::report_fixture;

#[test]
fn summary_lists_counts_flaky_failed_skipped_and_card_stories() {
    let text = render_summary(&report_fixture::report());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "FAIL 6 case(s) on 2 card(s) [0, 1] in 3.2 s (a5, sim): 1 passed, 1 flaky, 1 failed, 1 skipped, \
         1 timed out, 1 crashed"
    );
    let flaky = text.split("flaky (passed on a retry):\n").nth(1).unwrap();
    assert!(
        flaky.starts_with(
            "  Paged::b\n      attempt 1 on card 1 failed after 510 ms: op-timeout (507000 at stream sync): [device_runtime] \
         aclrtSynchronizeStreamWithTimeout: 507000 (ACL_ERROR_RT_INTERNAL_ERROR): op-execute timeout \
         reaped the kernel\n      attempt 2 on card 1 passed after 30 ms\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!(
        "  Vec::mismatch (failed, 1 attempt(s))\n      attempt 1 on card 0 failed after 25 ms: [result] {}\n",
        report_fixture::MISMATCH_MESSAGE
    )),
        "{text}"
    );
    assert!(text.contains("  Vec::hang (timed_out, 3 attempt(s))\n"), "{text}");
    assert!(text.contains("  Vec::crash (crashed, 3 attempt(s))\n"), "{text}");
    assert!(
        text.contains("skipped:\n  Multi::four: needs 4 cards, the run has 2\n"),
        "{text}"
    );
    assert!(
        text.contains("  card 0: fresh process (pid 101) at 1.1 s (replacement lane)\n"),
        "{text}"
    );
    assert!(text.contains(
        "  card 1: poisoned by op-timeout (507000 at stream sync) in Paged::b at 0.5 s -> marked unusable -> force reset (attempt 1, \
         rc 0, 41 ms) -> probe ok -> recovered -> fresh process (pid 201) at 0.6 s (replacement lane) -> \
         fresh process (pid 202) at 0.6 s (replacement lane) -> init failed with 507899 at 0.7 s (fresh lane could not init) -> \
         quarantined at 0.7 s (fresh lane could not init)\n"
    ), "{text}");
}

#[test]
fn passing_run_summary_says_pass_and_no_faults() {
    let c = report_fixture::CASES;
    let report = report_fixture::report_with("r", &c[..1]);
    let mut report = report;
    report.devices_health.values_mut().for_each(Vec::clear);
    let text = render_summary(&report);
    assert!(text.starts_with("PASS 1 case(s)"), "{text}");
    assert!(!text.contains("failed:"), "{text}");
    assert!(
        text.contains("  card 0: no faults\n  card 1: no faults\n"),
        "{text}"
    );
}

/// Under `ASCEND_RT_VISIBLE_DEVICES` a card's number is not its physical id: the summary and
/// `report.json` show both.
#[test]
fn a_card_seen_under_another_number_is_shown_with_its_physical_id() {
    let mut report = report_fixture::report();
    assert!(!serde_json::to_string(&report)
        .unwrap()
        .contains("devices_physical"));
    report.devices_physical.insert("1".to_owned(), 5);
    let text = render_summary(&report);
    assert!(text.contains("\n  card 1 (physical 5): "), "{text}");
    assert!(text.contains("\n  card 0: "), "{text}");
    let json: serde_json::Value = serde_json::to_value(&report).unwrap();
    assert_eq!(json["devices_physical"]["1"], 5);
}

#[test]
fn a_flaky_case_failed_by_flaky_result_fail_says_why() {
    let mut report = report_fixture::report();
    report.flaky_result = cardguard_report::FlakyResult::Fail;
    report.rederive();
    let text = render_summary(&report);
    assert!(
        text.contains(
            "  Paged::b (failed: flaky (passed on a retry), counted failed by --flaky-result fail, 2 \
             attempt(s))\n"
        ),
        "{text}"
    );
    // A plain failure keeps its plain line.
    assert!(
        text.contains("  Vec::mismatch (failed, 1 attempt(s))\n"),
        "{text}"
    );
}

#[test]
fn unfired_fault_rules_are_listed_before_the_cards() {
    let mut report = report_fixture::report();
    report.faults_unfired.push(cardguard_report::UnfiredFault {
        rule: "dev=0:op_timeout@50".to_owned(),
        card: 0,
        detail: "the card made 10 case launch(es)".to_owned(),
    });
    let text = render_summary(&report);
    assert!(
        text.contains(
            "faults that never fired (the plan did not test what it names):\n  dev=0:op_timeout@50 on \
             card 0: the card made 10 case launch(es)\ncards:\n"
        ),
        "{text}"
    );
}

#[test]
fn an_attempt_line_shows_what_the_runtime_said() {
    let mut report = report_fixture::report();
    let case = report.cases.iter_mut().find(|c| c.id == "Paged::b").unwrap();
    let error = case.attempts[0].error.as_mut().unwrap();
    error.runtime_message = Some("EE9999: Inner Error!\n  stream sync failed".into());
    let text = render_summary(&report);
    assert!(
        text.contains(
            "op-execute timeout reaped the kernel (runtime: EE9999: Inner Error! stream sync failed)\n"
        ),
        "{text}"
    );
}
