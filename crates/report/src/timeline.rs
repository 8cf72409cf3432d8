//! `timeline.svg`: a picture of the run, so a person sees at a glance what a fault cost.
//!
//! One row per card over time; a box per attempt coloured by its outcome (the passing attempt of a
//! flaky case outlined), where attempts narrower than a pixel side by side are merged into one
//! box of their colour (a failure or a flaky case's attempt never is: `timeline_rows`), so the
//! file stays bounded at any size of run; markers for poisoned, force reset, fresh process and quarantine (the row
//! greyed from then on); a time axis and a legend. Every shape has a `<title>` tooltip. The SVG is
//! written by hand, every text escaped, and is well-formed XML. This module never reads anything but
//! the finished report.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use platform_common::driver::DeviceId;

use super::error::ReportError;
use crate::atomic::write_atomic;
use platform_common::health::HealthEventKind;

use super::model::{
    AttemptOutcome, CardEvent, CaseReport, HealthRecord, Outcome, RunReport, RunnerEventKind,
};
use super::timeline_rows::{rows, Shape};

/// The timeline's file name inside a report directory.
pub const TIMELINE_SVG: &str = "timeline.svg";

const LEFT: f64 = 90.0;
const PLOT_W: f64 = 900.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 58.0;
const ROW_H: f64 = 30.0;
const BOX_H: f64 = 18.0;

/// Fill colour of an attempt box.
fn colour(outcome: AttemptOutcome) -> &'static str {
    match outcome {
        AttemptOutcome::Passed => "#43a047",
        AttemptOutcome::Failed => "#e53935",
        AttemptOutcome::TimedOut => "#fb8c00",
        AttemptOutcome::Crashed => "#8e24aa",
        AttemptOutcome::Skipped => "#9e9e9e",
    }
}

const FLAKY_STROKE: &str = "#fdd835";

/// Escapes text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters other than tab and newlines are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The cards shown: the run's devices plus any card an attempt or health event names.
fn cards(report: &RunReport) -> Vec<DeviceId> {
    let mut set: BTreeSet<DeviceId> = report.devices.iter().copied().collect();
    set.extend(
        report
            .cases
            .iter()
            .flat_map(|c| c.attempts.iter().filter_map(|a| a.device)),
    );
    set.extend(
        report
            .devices_health
            .keys()
            .filter_map(|k| k.parse::<DeviceId>().ok()),
    );
    set.into_iter().collect()
}

fn health_of(report: &RunReport, card: DeviceId) -> &[HealthRecord] {
    report
        .devices_health
        .get(&card.to_string())
        .map_or(&[], Vec::as_slice)
}

/// A tick step of 1, 2 or 5 times a power of ten giving at most about ten ticks.
fn tick_step(span_ms: u64) -> u64 {
    let raw = (span_ms as f64 / 10.0).max(1.0);
    let pow = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * pow)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * pow);
    step.max(1.0) as u64
}

fn fmt_secs(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        let s = format!("{:.3}", ms as f64 / 1000.0);
        format!("{} s", s.trim_end_matches('0'))
    }
}

/// Renders the timeline of a run.
pub fn to_svg(report: &RunReport) -> String {
    let cards = cards(report);
    let end_ms = report
        .cases
        .iter()
        .flat_map(|c| c.attempts.iter().map(|a| a.started_ms + a.duration_ms))
        .chain(report.devices_health.values().flatten().map(|h| h.at_ms))
        .chain([report.duration_ms, 1])
        .max()
        .unwrap_or(1);
    let scale = PLOT_W / end_ms as f64;
    let x = |ms: u64| LEFT + ms as f64 * scale;
    let rows_h = ROW_H * cards.len() as f64;
    let axis_y = TOP + rows_h + 4.0;
    let legend_y = axis_y + 36.0;
    let width = LEFT + PLOT_W + RIGHT;
    let height = legend_y + 50.0;

    let shapes = rows(report, scale);
    let mut svg = String::new();
    let _ = writeln!(svg, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let s = &report.summary;
    let heading = format!(
        "cardguard {} {} run {}: {} cases in {}",
        report.arch.name(),
        report.platform,
        report.run_id,
        s.total,
        fmt_secs(report.duration_ms),
    );
    let counts = format!(
        "{} passed, {} flaky, {} failed, {} skipped, {} timed out, {} crashed",
        s.passed, s.flaky, s.failed, s.skipped, s.timed_out, s.crashed
    );
    let _ = writeln!(svg, r#"<title>{}: {}</title>"#, escape(&heading), escape(&counts));
    let _ = writeln!(svg, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(
        svg,
        r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#,
        escape(&heading)
    );
    let _ = writeln!(svg, r#"<text x="10" y="38">{}</text>"#, escape(&counts));

    for (i, card) in cards.iter().enumerate() {
        let y = TOP + ROW_H * i as f64;
        let box_y = y + (ROW_H - BOX_H) / 2.0;
        let _ = writeln!(svg, r#"<g class="row" data-card="{card}">"#);
        let shade = if i % 2 == 0 { "#f5f5f5" } else { "#ffffff" };
        let _ = writeln!(
            svg,
            r#"<rect x="{LEFT}" y="{y}" width="{PLOT_W}" height="{ROW_H}" fill="{shade}"/>"#
        );
        let _ = writeln!(
            svg,
            r#"<text x="10" y="{:.1}">card {card}</text>"#,
            y + ROW_H / 2.0 + 4.0
        );
        for shape in shapes.get(card).map_or(&[][..], Vec::as_slice) {
            match shape {
                Shape::One { case, attempt } => attempt_box(&mut svg, case, *attempt, box_y, &x, scale),
                Shape::Run {
                    outcome,
                    start_ms,
                    end_ms,
                    count,
                    first,
                    last,
                } => {
                    let x0 = x(*start_ms);
                    let w = (x(*end_ms) - x0).max(1.0);
                    let tip = format!(
                        "{count} {outcome} attempts from {} to {}, each narrower than a pixel: {first} ... {last}",
                        fmt_secs(*start_ms),
                        fmt_secs(*end_ms)
                    );
                    let _ = writeln!(
                        svg,
                        r#"<rect class="run {outcome}" data-count="{count}" x="{x0:.2}" y="{box_y}" width="{w:.2}" height="{BOX_H}" fill="{}"><title>{}</title></rect>"#,
                        colour(*outcome),
                        escape(&tip)
                    );
                }
            }
        }
        for h in health_of(report, *card) {
            marker(&mut svg, h, x(h.at_ms), y, x(end_ms));
        }
        let _ = writeln!(svg, "</g>");
    }

    // Time axis.
    let _ = writeln!(svg, r#"<g class="axis">"#);
    let _ = writeln!(
        svg,
        r##"<line x1="{LEFT}" y1="{axis_y}" x2="{:.2}" y2="{axis_y}" stroke="#424242"/>"##,
        LEFT + PLOT_W
    );
    let step = tick_step(end_ms);
    let mut t = 0;
    while t <= end_ms {
        let tx = x(t);
        let _ = writeln!(
            svg,
            r##"<line x1="{tx:.2}" y1="{axis_y}" x2="{tx:.2}" y2="{:.1}" stroke="#424242"/><text x="{tx:.2}" y="{:.1}" text-anchor="middle">{}</text>"##,
            axis_y + 5.0,
            axis_y + 18.0,
            fmt_secs(t)
        );
        t += step;
    }
    let _ = writeln!(svg, "</g>");

    legend(&mut svg, legend_y);
    let _ = writeln!(svg, "</svg>");
    svg
}

/// One attempt's box, with its tooltip; the passing attempt of a flaky case outlined.
fn attempt_box(
    svg: &mut String,
    case: &CaseReport,
    k: usize,
    box_y: f64,
    x: &dyn Fn(u64) -> f64,
    scale: f64,
) {
    let a = &case.attempts[k];
    let n = case.attempts.len();
    let w = (a.duration_ms as f64 * scale).max(1.0);
    let stroke = if case.outcome == Outcome::Flaky && k + 1 == n {
        format!(r#" stroke="{FLAKY_STROKE}" stroke-width="2""#)
    } else {
        String::new()
    };
    let mut tip = format!(
        "{} attempt {} of {}: {} after {} ms (starts at {})",
        case.id,
        k + 1,
        n,
        a.outcome,
        a.duration_ms,
        fmt_secs(a.started_ms)
    );
    if let Some(e) = &a.error {
        let _ = write!(tip, "\n{e}");
    }
    let _ = writeln!(
        svg,
        r#"<rect class="attempt {}" x="{:.2}" y="{box_y}" width="{w:.2}" height="{BOX_H}" fill="{}"{stroke}><title>{}</title></rect>"#,
        a.outcome,
        x(a.started_ms),
        colour(a.outcome),
        escape(&tip)
    );
}

fn marker(svg: &mut String, h: &HealthRecord, mx: f64, row_y: f64, end_x: f64) {
    let tip = escape(&format!("{} (at {} ms)", crate::summary::health_step(h), h.at_ms));
    let top = row_y + 2.0;
    let mid = row_y + ROW_H / 2.0;
    let bottom = row_y + ROW_H - 2.0;
    let shape = match &h.event {
        CardEvent::Device(e) if e.kind == HealthEventKind::Poisoned => {
            format!(
                r##"<path d="M{:.2},{top} l12,0 l-6,9 z" fill="#b71c1c"/>"##,
                mx - 6.0
            )
        }
        CardEvent::Device(e) if matches!(e.kind, HealthEventKind::ForceReset { .. }) => format!(
            r##"<path d="M{mx:.2},{:.1} l5,6 l-5,6 l-5,-6 z" fill="#1e88e5" stroke="#0d47a1"/>"##,
            mid - 6.0
        ),
        CardEvent::Runner(r) if r.kind == RunnerEventKind::FreshProcess => format!(
            r##"<line x1="{mx:.2}" y1="{top}" x2="{mx:.2}" y2="{bottom}" stroke="#00897b" stroke-width="2"/><circle cx="{mx:.2}" cy="{top}" r="3" fill="#00897b"/>"##
        ),
        CardEvent::Runner(r)
            if matches!(
                r.kind,
                RunnerEventKind::Quarantined | RunnerEventKind::QuarantinedAtStart
            ) =>
        {
            format!(
                r##"<rect x="{mx:.2}" y="{top}" width="{:.2}" height="{:.1}" fill="#616161" fill-opacity="0.35"/><path d="M{:.2},{:.1} l10,10 m0,-10 l-10,10" stroke="#212121" stroke-width="2"/>"##,
                (end_x - mx).max(0.0),
                ROW_H - 4.0,
                mx - 5.0,
                mid - 5.0
            )
        }
        _ => return,
    };
    let _ = writeln!(
        svg,
        r#"<g class="marker {}"><title>{tip}</title>{shape}</g>"#,
        h.name()
    );
}

fn legend(svg: &mut String, y: f64) {
    let _ = writeln!(svg, r#"<g class="legend">"#);
    let mut lx = LEFT;
    let items = [
        AttemptOutcome::Passed,
        AttemptOutcome::Failed,
        AttemptOutcome::TimedOut,
        AttemptOutcome::Crashed,
        AttemptOutcome::Skipped,
    ];
    for o in items {
        let _ = writeln!(
            svg,
            r#"<rect x="{lx}" y="{y}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            colour(o),
            lx + 16.0,
            y + 10.0,
            o
        );
        lx += 95.0;
    }
    let _ = writeln!(
        svg,
        r##"<rect x="{lx}" y="{y}" width="12" height="12" fill="#43a047" stroke="{FLAKY_STROKE}" stroke-width="2"/><text x="{}" y="{}">flaky pass</text>"##,
        lx + 16.0,
        y + 10.0
    );
    let y2 = y + 22.0;
    let mut lx = LEFT;
    let markers: [(&str, String); 4] = [
        (
            "poisoned",
            format!(r##"<path d="M{lx},{y2} l12,0 l-6,9 z" fill="#b71c1c"/>"##),
        ),
        (
            "force reset",
            format!(
                r##"<path d="M{},{y2} l5,6 l-5,6 l-5,-6 z" fill="#1e88e5"/>"##,
                lx + 120.0 + 6.0
            ),
        ),
        (
            "fresh process",
            format!(
                r##"<line x1="{0}" y1="{y2}" x2="{0}" y2="{1}" stroke="#00897b" stroke-width="2"/>"##,
                lx + 240.0 + 6.0,
                y2 + 12.0
            ),
        ),
        (
            "quarantined",
            format!(
                r##"<path d="M{},{y2} l10,10 m0,-10 l-10,10" stroke="#212121" stroke-width="2"/>"##,
                lx + 360.0 + 1.0
            ),
        ),
    ];
    for (label, shape) in markers {
        let _ = writeln!(
            svg,
            r#"{shape}<text x="{}" y="{}">{label}</text>"#,
            lx + 16.0,
            y2 + 10.0
        );
        lx += 120.0;
    }
    let _ = writeln!(svg, "</g>");
}

/// Writes `timeline.svg` for `report` to `path`, replacing it atomically.
pub fn write_timeline(path: &Path, report: &RunReport) -> Result<(), ReportError> {
    write_atomic(path, to_svg(report).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            escape(r#"a<b>&"c"'d'"#),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;"
        );
        assert_eq!(escape("x\u{1}y\nz"), "x y\nz");
    }

    #[test]
    fn ticks_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(tick_step(1), 1);
        assert_eq!(tick_step(95), 10);
        assert_eq!(tick_step(3200), 500);
        assert_eq!(tick_step(12_000), 2000);
        assert_eq!(tick_step(100_000), 10_000);
    }

    #[test]
    fn seconds_are_printed_without_trailing_zeros() {
        assert_eq!(fmt_secs(0), "0 s");
        assert_eq!(fmt_secs(2000), "2 s");
        assert_eq!(fmt_secs(500), "0.5 s");
        assert_eq!(fmt_secs(1250), "1.25 s");
    }
}
