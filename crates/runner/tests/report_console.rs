//! The console: the progress bars' state (the closing summary is the report crate's, tested there).

use cardguard_test_support::report_fixture;
use runner::report::{Event, Progress};

#[test]
fn hidden_progress_tracks_each_lane() {
    let mut p = Progress::new(&[0, 1], 6, false);
    assert!(p.is_hidden());
    for e in report_fixture::events() {
        p.on_event(&e);
    }
    assert_eq!(p.lane_attempts(0), Some(5));
    assert_eq!(p.lane_attempts(1), Some(5));
    assert_eq!(p.cases_seen(), 6);
    let msg = p.lane_message(1).unwrap();
    assert!(msg.starts_with("quarantined"), "{msg}");
    let mut q = Progress::hidden(&[0], 1);
    q.on_event(&Event::CaseStarted {
        at_ms: 0,
        id: "C::x".into(),
        device: 0,
        attempt: 2,
    });
    assert_eq!(q.lane_message(0).as_deref(), Some("C::x (attempt 2)"));
}
