//! A realistic run for the report tests (the report crate's and the runner's), built the way the
//! dispatcher builds one: from events.
//!
//! Cards 0 and 1. `Paged::a` passes; `Paged::b` hits an op-timeout on card 1 (poison, force reset,
//! probe, recovery) and passes on its retry (flaky); `Vec::mismatch` fails once with a golden
//! mismatch; `Vec::hang` times out three times; `Vec::crash` crashes three times (a fresh process
//! each time, then card 1 is quarantined); `Multi::four` is skipped.

use cardguard_report::{
    AttemptOutcome, ErrorReport, Event, FlakyResult, HealthRecord, Platform, RunBuilder, RunInfo, RunReport,
    RunnerEventKind,
};
use platform_common::driver::{DriverCall, DriverInfo, DriverKind};
use platform_common::error::codes;
use platform_common::health::{DrainReport, HealthEvent, HealthEventKind};
use platform_common::{Arch, DriverError, FailureClass};

pub const MISMATCH_MESSAGE: &str = r#"golden mismatch at [3]: got <1.5> & expected "2.0""#;

pub fn info(run_id: &str, devices: Vec<u32>) -> RunInfo {
    RunInfo {
        devices_physical: std::collections::BTreeMap::new(),
        arch: Arch::DEFAULT,
        platform: Platform::Sim,
        driver: DriverInfo {
            kind: DriverKind::Sim,
            library: None,
        },
        devices,
        run_id: run_id.into(),
        started_at: "2024-05-01T12:00:00.000Z".into(),
    }
}

pub const CASES: [(&str, &str, &str); 6] = [
    ("Paged::a", "Paged", "rt_paged"),
    ("Paged::b", "Paged", "rt_paged"),
    ("Vec::mismatch", "Vec", "rt_vec"),
    ("Vec::hang", "Vec", "rt_vec"),
    ("Vec::crash", "Vec", "rt_vec"),
    ("Multi::four", "Multi", "rt_vec"),
];

/// Where and when an attempt ran: (card, lane pid, attempt number) and (start ms, duration ms).
type Slot = ((u32, u32, u32), (u64, u64));

fn run(events: &mut Vec<Event>, id: &str, slot: Slot, outcome: AttemptOutcome, error: Option<ErrorReport>) {
    let ((device, pid, attempt), (at, dur)) = slot;
    events.push(Event::CaseStarted {
        at_ms: at,
        id: id.into(),
        device,
        attempt,
    });
    events.push(Event::CaseFinished {
        at_ms: at + dur,
        id: id.into(),
        device,
        pid,
        attempt,
        outcome,
        duration_ms: dur,
        error,
        output: Default::default(),
    });
}

/// A device runner's event on card 1 of the fixture, at `at_ms`.
fn device_event(at_ms: u64, kind: HealthEventKind, detail: &str, error: Option<DriverError>) -> HealthRecord {
    let mut ev = HealthEvent::new(1, Arch::DEFAULT, kind, detail);
    ev.unix_ms = 1_700_000_000_000 + at_ms;
    if let Some(e) = error {
        ev = ev.with_error(e);
    }
    HealthRecord::device(at_ms, ev)
}

fn health(events: &mut Vec<Event>, device: u32, record: HealthRecord) {
    events.push(Event::Health {
        at_ms: record.at_ms,
        device,
        record,
    });
}

/// The fixture's events, in the order a dispatcher would emit them.
pub fn events() -> Vec<Event> {
    use AttemptOutcome as A;
    let mut e = vec![
        Event::RunStarted {
            at_ms: 0,
            run_id: "run-1".into(),
            arch: Arch::DEFAULT,
            platform: Platform::Sim,
            devices: vec![0, 1],
            cases: 6,
        },
        Event::LaneStarted {
            at_ms: 1,
            device: 0,
            pid: 100,
        },
        Event::LaneStarted {
            at_ms: 1,
            device: 1,
            pid: 200,
        },
    ];
    run(&mut e, "Paged::a", ((0, 100, 1), (10, 20)), A::Passed, None);
    let op_timeout = ErrorReport {
        class: FailureClass::DeviceRuntime,
        call: Some(DriverCall::SynchronizeStreamWithTimeout),
        code: Some(codes::RT_INTERNAL_ERROR),
        name: Some("ACL_ERROR_RT_INTERNAL_ERROR".into()),
        message: "op-execute timeout reaped the kernel".into(),
        runtime_message: None,
        post_case_check: false,
        capability: None,
    };
    run(
        &mut e,
        "Paged::b",
        ((1, 200, 1), (10, 510)),
        A::Failed,
        Some(op_timeout.clone()),
    );
    health(
        &mut e,
        1,
        device_event(
            515,
            HealthEventKind::Poisoned,
            "op timeout",
            Some(DriverError::new(
                DriverCall::SynchronizeStreamWithTimeout,
                codes::RT_INTERNAL_ERROR,
            )),
        )
        .with_case(Some("Paged::b".into())),
    );
    let drain = DrainReport::Failed {
        code: codes::RT_STREAM_SYNC_TIMEOUT,
    };
    let marked = HealthEventKind::MarkedUnusable { drain };
    health(&mut e, 1, device_event(516, marked, "marked unusable", None));
    let reset = HealthEventKind::ForceReset {
        attempt: 1,
        rc: Some(0),
        duration_ms: 41,
    };
    health(&mut e, 1, device_event(520, reset, "force reset rc=0", None));
    let probe = HealthEventKind::Probe { attempt: 1, ok: true };
    health(&mut e, 1, device_event(561, probe, "probe confirmed", None));
    let recovered = HealthEventKind::Recovered { attempts: 1 };
    health(&mut e, 1, device_event(562, recovered, "recovered", None));
    e.push(Event::RetryScheduled {
        at_ms: 562,
        id: "Paged::b".into(),
        reason: "device_runtime error 507000".into(),
    });
    run(&mut e, "Paged::b", ((1, 200, 2), (570, 30)), A::Passed, None);
    run(
        &mut e,
        "Vec::mismatch",
        ((0, 100, 1), (40, 25)),
        A::Failed,
        Some(ErrorReport::new(FailureClass::Result, MISMATCH_MESSAGE)),
    );
    let timeout = ErrorReport::new(FailureClass::DeviceRuntime, "exceeded --case-timeout 1 s");
    run(
        &mut e,
        "Vec::hang",
        ((0, 100, 1), (100, 1000)),
        A::TimedOut,
        Some(timeout.clone()),
    );
    e.push(Event::LaneExited {
        at_ms: 1101,
        device: 0,
        pid: 100,
        status: cardguard_report::LaneStatus::Signaled(9),
    });
    e.push(Event::SinkRead {
        at_ms: 1102,
        device: 0,
        selectors: vec!["Vec::".into()],
        malformed_lines: Vec::new(),
    });
    health(
        &mut e,
        0,
        HealthRecord::runner(1105, RunnerEventKind::FreshProcess, "replacement lane").with_pid(101),
    );
    run(
        &mut e,
        "Vec::hang",
        ((0, 101, 2), (1110, 1000)),
        A::TimedOut,
        Some(timeout.clone()),
    );
    run(
        &mut e,
        "Vec::hang",
        ((0, 102, 3), (2120, 1000)),
        A::TimedOut,
        Some(timeout),
    );
    // A lane crash counts as a device-class failure of its case (DESIGN section 5, step 6).
    let crash = ErrorReport::new(FailureClass::DeviceRuntime, "lane died (signal 11)");
    run(
        &mut e,
        "Vec::crash",
        ((1, 200, 1), (600, 5)),
        A::Crashed,
        Some(crash.clone()),
    );
    health(
        &mut e,
        1,
        HealthRecord::runner(610, RunnerEventKind::FreshProcess, "replacement lane").with_pid(201),
    );
    run(
        &mut e,
        "Vec::crash",
        ((1, 201, 2), (620, 5)),
        A::Crashed,
        Some(crash.clone()),
    );
    health(
        &mut e,
        1,
        HealthRecord::runner(630, RunnerEventKind::FreshProcess, "replacement lane").with_pid(202),
    );
    run(
        &mut e,
        "Vec::crash",
        ((1, 202, 3), (640, 5)),
        A::Crashed,
        Some(crash),
    );
    health(
        &mut e,
        1,
        HealthRecord::runner(700, RunnerEventKind::InitFailed, "fresh lane could not init")
            .with_error(Some(DriverCall::CreateStream), Some(codes::RT_DRV_INTERNAL_ERROR)),
    );
    health(
        &mut e,
        1,
        HealthRecord::runner(701, RunnerEventKind::Quarantined, "fresh lane could not init"),
    );
    e.push(Event::CaseSkipped {
        at_ms: 5,
        id: "Multi::four".into(),
        reason: "needs 4 cards, the run has 2".into(),
    });
    e
}

/// The fixture run as a finished report.
pub fn report() -> RunReport {
    report_with("run-1", &CASES)
}

/// The fixture run under another run id, keeping only the given cases.
pub fn report_with(run_id: &str, cases: &[(&str, &str, &str)]) -> RunReport {
    let mut b = RunBuilder::new(info(run_id, vec![0, 1]));
    for (id, class, rt) in cases {
        b.add_case(id, class, rt).unwrap();
    }
    for e in events() {
        let keep = match &e {
            Event::CaseStarted { id, .. }
            | Event::CaseFinished { id, .. }
            | Event::CaseSkipped { id, .. } => cases.iter().any(|c| c.0 == id),
            _ => true,
        };
        if keep {
            b.apply(&e).unwrap();
        }
    }
    b.finish(3200, FlakyResult::Pass)
}
