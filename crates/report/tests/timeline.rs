//! timeline.svg: valid XML, one row per card, a box per attempt, the markers, the legend.

use cardguard_report::timeline::to_svg;
use cardguard_report::{write_timeline, Attempt, AttemptOutcome, FlakyResult, RunBuilder};
use cardguard_test_support::report_fixture;

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
    assert!(title
        .text()
        .unwrap()
        .contains("poisoned by op-timeout (507000 at stream sync) in Paged::b"));
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
            error: Some(cardguard_report::ErrorReport::new(
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

/// A 100,000-case run on 8 cards: boxes narrower than a pixel merge into runs, a failed and a
/// flaky case keep their own boxes, the file stays under 5 MiB, and it renders to a PNG
/// (`rsvg-convert`, which `.ci/run` installs) of the SVG's size.
#[test]
fn a_hundred_thousand_case_timeline_is_bounded_and_renders() {
    const CASES: u64 = 100_000;
    const CARDS: u64 = 8;
    let mut b = RunBuilder::new(report_fixture::info("big", (0..CARDS as u32).collect()));
    let id = |i: u64| format!("C{:03}::c{:03}", i / 100, i % 100);
    for i in 0..CASES {
        b.add_case(&id(i), &format!("C{:03}", i / 100), "rt").unwrap();
    }
    let attempt = |card: u64, started_ms: u64, outcome: AttemptOutcome| Attempt {
        device: Some(card as u32),
        pid: Some(100 + card as u32),
        outcome,
        duration_ms: 0,
        started_ms,
        error: (outcome != AttemptOutcome::Passed).then(|| {
            cardguard_report::ErrorReport::new(platform_common::FailureClass::DeviceRuntime, "poisoned")
        }),
        output: Default::default(),
    };
    // Each card runs its share back to back, one case every 0.1 ms.
    let (failed, flaky) = (12_345, 67_890);
    for i in 0..CASES {
        let (card, t) = (i % CARDS, i / CARDS / 10);
        let first = if i == failed || i == flaky {
            AttemptOutcome::Failed
        } else {
            AttemptOutcome::Passed
        };
        b.push_attempt(&id(i), attempt(card, t, first)).unwrap();
        if i == flaky {
            b.push_attempt(&id(i), attempt(card, t + 1, AttemptOutcome::Passed))
                .unwrap();
        }
    }
    let report = b.finish(CASES / CARDS / 10 + 1, FlakyResult::Pass);
    let svg = to_svg(&report);
    assert!(svg.len() < 5 << 20, "timeline.svg is {} bytes", svg.len());
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let rows = rows(&doc);
    assert_eq!(rows.len(), CARDS as usize);
    let runs: usize = rows
        .iter()
        .flat_map(|r| r.descendants())
        .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("run ")))
        .count();
    assert!(runs > 0, "narrow boxes were merged into runs");
    let merged: u64 = rows
        .iter()
        .flat_map(|r| r.descendants())
        .filter_map(|n| n.attribute("data-count"))
        .map(|c| c.parse::<u64>().unwrap())
        .sum();
    assert!(merged > CASES / 2, "most attempts are in runs: {merged}");
    let failed_boxes: usize = rows.iter().map(|r| classed(*r, "attempt failed")).sum();
    assert_eq!(
        failed_boxes, 2,
        "the failed case's and the flaky case's failed attempts"
    );
    let tips: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("attempt failed"))
        .filter_map(|n| n.children().find(|c| c.has_tag_name("title")))
        .filter_map(|t| t.text())
        .collect();
    for i in [failed, flaky] {
        assert!(
            tips.iter().any(|t| t.starts_with(&id(i))),
            "{} kept its box: {tips:?}",
            id(i)
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let (svg_path, png_path) = (dir.path().join("timeline.svg"), dir.path().join("timeline.png"));
    write_timeline(&svg_path, &report).unwrap();
    let out = std::process::Command::new("rsvg-convert")
        .arg("-o")
        .arg(&png_path)
        .arg(&svg_path)
        .output()
        .expect("rsvg-convert runs (Debian package librsvg2-bin; .ci/run installs it)");
    assert!(
        out.status.success(),
        "rsvg-convert: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&png_path).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    let root = doc.root_element();
    let size = |a: &str| root.attribute(a).unwrap().parse::<f64>().unwrap().round() as u32;
    assert_eq!(
        (be(16), be(20)),
        (size("width"), size("height")),
        "the PNG has the SVG's size"
    );
}
