//! An init that hangs is the card's problem, not a case's (issue 8, item 3): a card whose init
//! takes longer than `--init-timeout` gets an `init_timed_out` health event, no case gets an
//! attempt for it, its cases go back to the queue, and when its fresh lane times out in init
//! too, the card is quarantined; every case passes on the other card at its first attempt.

mod common;

use common::*;
use runner::report::model::AttemptOutcome;

#[test]
fn a_card_whose_inits_hang_is_quarantined_and_no_case_pays() {
    let sb = Sandbox::new();
    // Card 0 is slow to init but within the bound; card 1 far past it, and past the case
    // timeout too: an init is never a case's watchdog kill (it used to give the next case
    // `timed_out` attempts until it failed).
    let plan = "dev=0:init_delay_ms=300;dev=1:init_delay_ms=30000";
    let (ids, run) = sb.list_and_run(
        "a5",
        "0,1",
        &["VectorAdd", "Softmax", "RmsNorm", "Matmul"],
        &["--init-timeout", "2", "--case-timeout", "1.2", "--faults", plan],
    );
    let r = run.consistent_report(0);
    assert_eq!(r.cases.len(), ids.len());
    for c in &r.cases {
        let on: Vec<_> = c.attempts.iter().map(|a| (a.device, a.outcome)).collect();
        assert_eq!(
            on,
            [(Some(0), AttemptOutcome::Passed)],
            "{}: {}",
            c.id,
            run.dump()
        );
    }
    assert_eq!(
        health(&r, 1),
        ["init_timed_out", "fresh_process", "init_timed_out", "quarantined"],
        "{}",
        run.dump()
    );
    let first = &r.devices_health["1"][0];
    assert!(
        first.detail().contains("--init-timeout of 2 s") && first.pid.is_some(),
        "{first:?}"
    );
    assert!(
        !health(&r, 0).contains(&"init_timed_out"),
        "card 0 inits within the bound: {:?}",
        health(&r, 0)
    );
}
