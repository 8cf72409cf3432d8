//! junit.xml: suites per class, flakyFailure / rerunFailure where nextest and Surefire put them.

use cardguard_report::{to_junit_string, write_junit, FlakyResult, RunBuilder};
use cardguard_test_support::report_fixture;

fn testcase<'a>(doc: &'a roxmltree::Document<'a>, class: &str, name: &str) -> roxmltree::Node<'a, 'a> {
    doc.descendants()
        .find(|n| {
            n.has_tag_name("testcase")
                && n.attribute("name") == Some(name)
                && n.attribute("classname") == Some(class)
        })
        .unwrap_or_else(|| panic!("no testcase {class}::{name}"))
}

fn children<'a>(node: roxmltree::Node<'a, 'a>) -> Vec<String> {
    node.children()
        .filter(|n| n.is_element())
        .map(|n| n.tag_name().name().to_owned())
        .collect()
}

#[test]
fn one_suite_per_class_in_first_seen_order() {
    let xml = to_junit_string(&report_fixture::report()).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("tests"), Some("6"));
    let suites: Vec<(&str, &str)> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|n| (n.attribute("name").unwrap(), n.attribute("tests").unwrap()))
        .collect();
    assert_eq!(suites, [("Paged", "2"), ("Vec", "3"), ("Multi", "1")]);
}

#[test]
fn flaky_case_passes_with_a_flaky_failure_per_failed_attempt() {
    let xml = to_junit_string(&report_fixture::report()).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let b = testcase(&doc, "Paged", "b");
    assert_eq!(children(b), ["flakyFailure"]);
    let flaky = b.children().find(|n| n.has_tag_name("flakyFailure")).unwrap();
    assert!(flaky.attribute("message").unwrap().contains("507000"));
    assert_eq!(flaky.attribute("type"), Some("failed: device_runtime"));
    assert!(flaky
        .text()
        .unwrap()
        .contains("attempt 1 of 2 on card 1, pid 200"));
    // A plain pass has no child at all.
    assert!(children(testcase(&doc, "Paged", "a")).is_empty());
}

#[test]
fn failed_case_has_failure_for_the_last_attempt_and_reruns_for_the_earlier_ones() {
    let xml = to_junit_string(&report_fixture::report()).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let hang = testcase(&doc, "Vec", "hang");
    assert_eq!(children(hang), ["failure", "rerunFailure", "rerunFailure"]);
    let failure = hang.children().find(|n| n.has_tag_name("failure")).unwrap();
    assert_eq!(failure.attribute("type"), Some("timed_out: device_runtime"));
    assert!(failure
        .text()
        .unwrap()
        .starts_with("attempt 3 of 3 on card 0, pid 102"));

    // A golden mismatch: one attempt, one failure, no rerun; the message survives escaping.
    let mismatch = testcase(&doc, "Vec", "mismatch");
    assert_eq!(children(mismatch), ["failure"]);
    let failure = mismatch.children().find(|n| n.has_tag_name("failure")).unwrap();
    assert_eq!(
        failure.attribute("message"),
        Some(format!("[result] {}", report_fixture::MISMATCH_MESSAGE).as_str())
    );

    let crash = testcase(&doc, "Vec", "crash");
    assert_eq!(children(crash), ["failure", "rerunFailure", "rerunFailure"]);
}

#[test]
fn skipped_case_carries_its_reason() {
    let xml = to_junit_string(&report_fixture::report()).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let four = testcase(&doc, "Multi", "four");
    let skipped = four.children().find(|n| n.has_tag_name("skipped")).unwrap();
    assert_eq!(skipped.attribute("message"), Some("needs 4 cards, the run has 2"));
}

#[test]
fn junit_text_snapshot_of_the_flaky_and_failed_elements() {
    let xml = to_junit_string(&report_fixture::report()).unwrap();
    // Snapshot-style: the exact element openings a CI system reads.
    for needle in [
        r#"<testcase name="b" classname="Paged" time="0.030">"#,
        r#"<flakyFailure time="0.510" message="op-timeout (507000 at stream sync): [device_runtime] aclrtSynchronizeStreamWithTimeout: 507000 (ACL_ERROR_RT_INTERNAL_ERROR): op-execute timeout reaped the kernel" type="failed: device_runtime">"#,
        r#"<testcase name="hang" classname="Vec" time="1.000">"#,
        r#"<failure message="[device_runtime] exceeded --case-timeout 1 s" type="timed_out: device_runtime">"#,
        r#"<rerunFailure time="1.000" message="[device_runtime] exceeded --case-timeout 1 s" type="timed_out: device_runtime">"#,
        r#"<skipped message="needs 4 cards, the run has 2"/>"#,
    ] {
        assert!(xml.contains(needle), "missing {needle}\n{xml}");
    }
    // Flaky failures only in the flaky case, reruns only in failed ones.
    assert_eq!(xml.matches("<flakyFailure").count(), 1);
    assert_eq!(xml.matches("<rerunFailure").count(), 4);
    assert_eq!(xml.matches("<rerunError").count(), 0);
}

#[test]
fn flaky_counted_as_failed_keeps_its_failed_attempts_as_reruns() {
    let mut b = RunBuilder::new(report_fixture::info("r", vec![0, 1]));
    b.add_case("Paged::b", "Paged", "rt_paged").unwrap();
    for e in report_fixture::events() {
        if matches!(&e, cardguard_report::Event::CaseStarted { id, .. } | cardguard_report::Event::CaseFinished { id, .. } if id == "Paged::b")
        {
            b.apply(&e).unwrap();
        }
    }
    let report = b.finish(10, FlakyResult::Fail);
    let xml = to_junit_string(&report).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = testcase(&doc, "Paged", "b");
    assert_eq!(children(case), ["failure", "rerunFailure"]);
    let failure = case.children().find(|n| n.has_tag_name("failure")).unwrap();
    assert!(failure
        .attribute("message")
        .unwrap()
        .contains("passed on attempt 2"));
}

#[test]
fn junit_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    write_junit(&path, &report_fixture::report()).unwrap();
    let xml = std::fs::read_to_string(&path).unwrap();
    roxmltree::Document::parse(&xml).unwrap();
}

#[test]
fn infrastructure_failures_are_junit_errors() {
    let mut b = RunBuilder::new(report_fixture::info("r", vec![0]));
    b.add_case("C::lost", "C", "rt").unwrap();
    b.abandon("C::lost", 5, "every card is quarantined").unwrap();
    let xml = to_junit_string(&b.finish(10, FlakyResult::Pass)).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = testcase(&doc, "C", "lost");
    assert_eq!(children(case), ["error"]);
    let error = case.children().find(|n| n.has_tag_name("error")).unwrap();
    assert_eq!(
        error.attribute("message"),
        Some("[infrastructure] every card is quarantined")
    );
    assert!(error
        .text()
        .unwrap()
        .starts_with("attempt 1 of 1 on no card: failed after 0 ms"));
}

#[test]
fn a_failure_shows_what_the_runtime_said() {
    let mut report = report_fixture::report();
    let case = report.cases.iter_mut().find(|c| c.id == "Paged::b").unwrap();
    let error = case.attempts[0].error.as_mut().unwrap();
    error.runtime_message = Some("EE9999: Inner Error!\n  stream sync failed".into());
    let xml = to_junit_string(&report).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let b = testcase(&doc, "Paged", "b");
    let flaky = b.children().find(|n| n.has_tag_name("flakyFailure")).unwrap();
    let message = flaky.attribute("message").unwrap();
    assert!(
        message.ends_with("reaped the kernel (runtime: EE9999: Inner Error! stream sync failed)"),
        "{message}"
    );
}
