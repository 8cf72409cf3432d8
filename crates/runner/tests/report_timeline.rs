//! timeline.svg: valid XML, one row per card, a box per attempt, the markers, the legend.

mod report_fixture;

use runner::report::timeline::to_svg;
use runner::report::{write_timeline, Attempt, AttemptOutcome, FlakyResult, RunBuilder};

fn rows<'a>(doc: &'a roxmltree::Document<'a>) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("row"))
        .collect()
}

fn classed<'a>(node: roxmltree::Node<'a, 'a>, class: &str) -> usize {
    node.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .count()
}

#[test]
fn timeline_is_valid_xml_with_one_row_per_card() {
    let svg = to_svg(&report_fixture::report());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let rows = rows(&doc);
    let cards: Vec<&str> = rows.iter().map(|r| r.attribute("data-card").unwrap()).collect();
    assert_eq!(cards, ["0", "1"]);
    // Card 0 ran Paged::a, Vec::mismatch and three Vec::hang attempts.
    assert_eq!(classed(rows[0], "attempt passed"), 1);
    assert_eq!(classed(rows[0], "attempt failed"), 1);
    assert_eq!(classed(rows[0], "attempt timed_out"), 3);
    // Card 1 ran Paged::b twice and Vec::crash three times.
    assert_eq!(classed(rows[1], "attempt failed"), 1);
    assert_eq!(classed(rows[1], "attempt passed"), 1);
    assert_eq!(classed(rows[1], "attempt crashed"), 3);
}

#[test]
fn timeline_marks_poison_reset_fresh_process_and_quarantine() {
    let svg = to_svg(&report_fixture::report());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let rows = rows(&doc);
    assert_eq!(classed(rows[0], "marker fresh_process"), 1);
    assert_eq!(classed(rows[0], "marker poisoned"), 0);
    assert_eq!(classed(rows[1], "marker poisoned"), 1);
    assert_eq!(classed(rows[1], "marker force_reset"), 1);
    assert_eq!(classed(rows[1], "marker fresh_process"), 2);
    assert_eq!(classed(rows[1], "marker quarantined"), 1);
    // Each marker has a tooltip.
    let poisoned = rows[1]
        .descendants()
        .find(|n| n.attribute("class") == Some("marker poisoned"))
        .unwrap();
    let title = poisoned.children().find(|n| n.has_tag_name("title")).unwrap();
    assert!(title.text().unwrap().contains("poisoned by 507000 in Paged::b"));
    // Legend and axis are present.
    let legend = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("legend"))
        .unwrap();
    let labels: Vec<&str> = legend
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    for l in [
        "passed",
        "failed",
        "timed_out",
        "crashed",
        "poisoned",
        "force reset",
        "fresh process",
        "quarantined",
    ] {
        assert!(labels.contains(&l), "legend lacks {l}: {labels:?}");
    }
    let axis = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("axis"))
        .unwrap();
    assert!(axis.descendants().any(|n| n.text() == Some("0 s")));
}

#[test]
fn timeline_escapes_text_and_shows_cards_only_attempts_name() {
    let mut b = RunBuilder::new(report_fixture::info("<run & \"id\">", vec![0]));
    b.add_case("A<&>::b'\"", "A<&>", "rt").unwrap();
    b.push_attempt(
        "A<&>::b'\"",
        Attempt {
            device: Some(3),
            pid: Some(1),
            outcome: AttemptOutcome::Failed,
            duration_ms: 10,
            started_ms: 0,
            error: Some(runner::report::ErrorReport::new(
                platform_common::FailureClass::Result,
                report_fixture::MISMATCH_MESSAGE,
            )),
            output: Default::default(),
        },
    )
    .unwrap();
    let report = b.finish(10, FlakyResult::Pass);
    let svg = to_svg(&report);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let cards: Vec<&str> = rows(&doc)
        .iter()
        .map(|r| r.attribute("data-card").unwrap())
        .collect();
    assert_eq!(cards, ["0", "3"]);
    let tip = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("attempt failed"))
        .and_then(|n| n.children().find(|c| c.has_tag_name("title")))
        .and_then(|t| t.text())
        .unwrap();
    assert!(tip.starts_with("A<&>::b'\" attempt 1 of 1"), "{tip}");
    assert!(tip.contains(report_fixture::MISMATCH_MESSAGE), "{tip}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("timeline.svg");
    write_timeline(&path, &report).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), svg);
}
