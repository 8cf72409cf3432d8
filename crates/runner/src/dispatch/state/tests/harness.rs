//! The scenario harness: a run of a small suite on a few cards with no process at all. Events are
//! fed at given times (ms of the run's clock), the actions that come back are rendered as short
//! lines (`spawn 0 regular on 0`, `run 0: A::x A::y`, `finished A::x card0 #1 crashed`, ...), and
//! the journal events among them are folded into the report the reporter would build, so a
//! scenario can end on the verdicts.
//!
//! This file owns the harness. The scenarios are the files beside it.

use std::time::Duration;

use platform_common::driver::{DriverInfo, DriverKind};
use platform_common::lease::{CardHealth, HealthStatus};
use platform_common::{Arch, FailureClass};

use crate::case::{CaseSpec, ClassSpec, Runtime, Suite};
use crate::config::Overrides;
use crate::dispatch::policy::{Isolation, LaneKind};
use crate::dispatch::state::{Action, CardSeed, DispatchState, Event, LaneSignal, Settings, Work};
use crate::protocol::{FromLane, ToLane};
use crate::report::model::{
    AttemptOutcome, ErrorReport, Event as Journal, Interruption, LaneStatus, Platform, RunBuilder, RunInfo,
};
use crate::select::{select, Filter};
use crate::sink::{SinkContents, SinkRecord};

/// A suite of pooled classes on one runtime: each class's name and its cases' names.
pub fn suite(classes: &[(&str, &[&str])]) -> Suite {
    let rt = Runtime::new("r");
    classes.iter().fold(Suite::new(), |suite, (class, cases)| {
        let cases = cases.iter().map(|c| CaseSpec::trivial(*c));
        suite.class(ClassSpec::pooled(*class, rt.clone()).cases(cases))
    })
}

/// A suite of pooled classes, each on its own runtime: the class's name, its runtime's name and
/// its cases' names.
pub fn suite_rt(classes: &[(&str, &str, &[&str])]) -> Suite {
    classes.iter().fold(Suite::new(), |suite, (class, rt, cases)| {
        let cases = cases.iter().map(|c| CaseSpec::trivial(*c));
        suite.class(ClassSpec::pooled(*class, Runtime::new(*rt)).cases(cases))
    })
}

/// Two classes: `A` (cases `x`, `y`) and `B` (case `z`).
pub fn suite_ab() -> Suite {
    suite(&[("A", &["x", "y"]), ("B", &["z"])])
}

/// Class `A` (case `x`) and a class `M` of two cases that need two cards each (`m1`, `m2`).
pub fn suite_with_multi() -> Suite {
    let rt = Runtime::new("r");
    suite(&[("A", &["x"])]).class(ClassSpec::pooled("M", rt).cases([
        CaseSpec::trivial("m1").devices(2),
        CaseSpec::trivial("m2").devices(2),
    ]))
}

/// The settings of a scenario: 2 retries, a 10 s case timeout, a 30 s init timeout, a 60 s close
/// timeout, `pool`, no stack tool.
pub fn settings() -> Settings {
    Settings {
        retries: 2,
        case_timeout: Duration::from_secs(10),
        init_timeout: Duration::from_secs(30),
        close_timeout: Duration::from_secs(60),
        isolation: Isolation::Pool,
        run_id: "r1".into(),
        stack_tool: None,
        clock_start_ns: 0,
    }
}

/// A run in a scenario: the state, and the journal it recorded.
#[derive(Debug)]
pub struct Sim {
    /// The state under test.
    pub state: DispatchState,
    journal: Vec<Journal>,
    cases: Vec<(String, String, String)>,
    cards: usize,
}

impl Sim {
    /// A run of `suite` on cards 0 to `cards - 1` with the default settings.
    pub fn new(suite: &Suite, cards: usize) -> Self {
        Self::with(suite, cards, settings(), &[])
    }

    /// A run of `suite` on `cards` cards with `settings`, the cards of `quarantined` remembering a
    /// quarantine from an earlier run.
    pub fn with(suite: &Suite, cards: usize, settings: Settings, quarantined: &[usize]) -> Self {
        let records: Vec<(usize, HealthStatus)> = quarantined
            .iter()
            .map(|&c| (c, HealthStatus::Quarantined))
            .collect();
        Self::with_records(suite, cards, settings, &records)
    }

    /// A run of `suite` on `cards` cards with `settings`, card `c` of each `(c, status)` of
    /// `records` remembering `status` from an earlier run.
    pub fn with_records(
        suite: &Suite,
        cards: usize,
        settings: Settings,
        records: &[(usize, HealthStatus)],
    ) -> Self {
        let sel = select(suite, Arch::A5, &Filter::default()).unwrap();
        let work = Work::new(suite, &sel, &Overrides::default());
        let cases = sel
            .classes
            .iter()
            .flat_map(|sc| {
                let class = &suite.classes[sc.class];
                sc.cases.iter().map(move |&ci| {
                    (
                        class.case_id(&class.cases[ci]),
                        class.name.clone(),
                        class.runtime.name.clone(),
                    )
                })
            })
            .collect();
        let seeds = (0..cards)
            .map(|c| CardSeed {
                device: u32::try_from(c).unwrap(),
                physical: u32::try_from(c).unwrap(),
                health: records.iter().find(|(rc, _)| *rc == c).map(|&(_, status)| {
                    CardHealth::now(u32::try_from(c).unwrap(), status, "r0", "an earlier fault")
                }),
            })
            .collect();
        Self {
            state: DispatchState::new(settings, work, seeds),
            journal: Vec::new(),
            cases,
            cards,
        }
    }

    /// A run of `suite` on `cards` cards following `plan` (`--order smart`): per card, its units
    /// (case indices in the run's order, and their estimate in ms).
    pub fn planned(suite: &Suite, cards: usize, plan: Vec<Vec<(Vec<usize>, u64)>>) -> Self {
        let mut sim = Self::with(suite, cards, settings(), &[]);
        let sel = select(suite, Arch::A5, &Filter::default()).unwrap();
        let mut work = Work::new(suite, &sel, &Overrides::default());
        work.follow_plan(plan);
        let seeds = (0..cards)
            .map(|c| CardSeed {
                device: u32::try_from(c).unwrap(),
                physical: u32::try_from(c).unwrap(),
                health: None,
            })
            .collect();
        sim.state = DispatchState::new(settings(), work, seeds);
        sim
    }

    /// [`Sim::planned`] with the N-card cases in these planned blocks (cases, the cards the
    /// plan has them on).
    pub fn planned_multi(
        suite: &Suite,
        cards: usize,
        plan: Vec<Vec<(Vec<usize>, u64)>>,
        blocks: Vec<(Vec<usize>, Option<Vec<usize>>)>,
    ) -> Self {
        let mut sim = Self::planned(suite, cards, plan);
        sim.state.work.follow_multi_plan(blocks);
        sim
    }

    /// Feeds `event` at `ms`; the actions, rendered.
    pub fn at(&mut self, ms: u64, event: Event) -> Vec<String> {
        let actions = self.state.handle(event, Duration::from_millis(ms));
        for a in &actions {
            if let Action::Record(e) = a {
                self.journal.push(e.clone());
            }
        }
        actions.iter().map(brief).collect()
    }

    /// Feeds every row's event at its time and checks that exactly its actions follow.
    pub fn table(&mut self, rows: Vec<(u64, Event, &[&str])>) {
        for (n, (ms, event, want)) in rows.into_iter().enumerate() {
            let what = format!("{event:?}");
            let got = self.at(ms, event);
            assert_eq!(got, want, "row {} (at {ms} ms, {what})", n + 1);
        }
    }

    /// The report the journal so far folds into.
    pub fn report(&self) -> crate::report::model::RunReport {
        let info = RunInfo {
            arch: Arch::A5,
            platform: Platform::Sim,
            driver: DriverInfo {
                kind: DriverKind::Sim,
                library: None,
            },
            devices: (0..u32::try_from(self.cards).unwrap()).collect(),
            devices_physical: std::collections::BTreeMap::new(),
            run_id: "r1".into(),
            started_at: "2024-01-01T00:00:00.000Z".into(),
        };
        let mut b = RunBuilder::new(info);
        for (id, class, runtime) in &self.cases {
            b.add_case(id, class, runtime).unwrap();
        }
        for e in &self.journal {
            b.apply(e).unwrap();
        }
        b.finish(0, Default::default())
    }

    /// Every case's verdict, as `id outcome`.
    pub fn verdicts(&self) -> Vec<String> {
        self.report()
            .cases
            .iter()
            .map(|c| format!("{} {}", c.id, c.outcome.name()))
            .collect()
    }

    /// Card `card`'s health events in the journal, by name.
    pub fn health(&self, card: u32) -> Vec<&'static str> {
        self.journal
            .iter()
            .filter_map(|e| match e {
                Journal::Health { device, record, .. } if *device == card => Some(record.name()),
                _ => None,
            })
            .collect()
    }
}

/// One action as a short line.
pub fn brief(a: &Action) -> String {
    match a {
        Action::Spawn { lane, cards, kind } => {
            let kind = match kind {
                LaneKind::Regular => "regular",
                LaneKind::Fresh => "fresh",
                LaneKind::Multi => "multi",
                LaneKind::Preflight => "preflight",
            };
            let cards: Vec<String> = cards.iter().map(ToString::to_string).collect();
            format!("spawn {lane} {kind} on {}", cards.join(","))
        }
        Action::Send {
            lane,
            msg: ToLane::Run { cases, .. },
        } => format!("run {lane}: {}", cases.join(" ")),
        Action::Send {
            lane,
            msg: ToLane::Where,
        } => format!("where {lane}"),
        Action::Send {
            lane,
            msg: ToLane::Release,
        } => format!("release {lane}"),
        Action::Close { lane, done: true } => format!("close {lane}"),
        Action::Close { lane, done: false } => format!("close {lane} (interrupted)"),
        Action::Signal {
            lane,
            signal: LaneSignal::Term,
        } => format!("term {lane}"),
        Action::Signal {
            lane,
            signal: LaneSignal::Kill,
        } => format!("kill {lane}"),
        Action::CaptureStacks { lane } => format!("stacks {lane}"),
        Action::Record(e) => journal_brief(e),
        Action::Remember {
            card,
            status: HealthStatus::Quarantined,
            ..
        } => format!("remember card{card}"),
        Action::Remember { card, status, .. } => format!("remember card{card} {}", status.name()),
        Action::Forget { card, .. } => format!("forget card{card}"),
        Action::Finish => "finish".to_owned(),
    }
}

fn journal_brief(e: &Journal) -> String {
    match e {
        Journal::LaneStarted { device, pid, .. } => format!("lane_started card{device} pid {pid}"),
        Journal::LaneExited {
            device, pid, status, ..
        } => format!("lane_exited card{device} pid {pid} ({status})"),
        Journal::CaseStarted {
            id, device, attempt, ..
        } => format!("started {id} card{device} #{attempt}"),
        Journal::CaseFinished {
            id,
            device,
            attempt,
            outcome,
            ..
        } => format!("finished {id} card{device} #{attempt} {}", outcome.name()),
        Journal::RetryScheduled { id, .. } => format!("retry {id}"),
        Journal::CaseSkipped { id, .. } => format!("skipped {id}"),
        Journal::CaseAbandoned { id, .. } => format!("abandoned {id}"),
        Journal::Health { device, record, .. } => format!("health card{device} {}", record.name()),
        Journal::SinkRead {
            device, selectors, ..
        } => format!("sink_read card{device} [{}]", selectors.join(" ")),
        Journal::Worker { device, action, .. } => format!("worker card{device} {}", action.name()),
        Journal::Fixture { device, class, .. } => format!("fixture card{device} {class}"),
        Journal::RunInterrupted { signal, .. } => format!("interrupted ({signal})"),
        Journal::FaultsUnfired { unfired, .. } => format!("faults_unfired ({})", unfired.len()),
        Journal::RunStarted { .. } => "run_started".to_owned(),
        Journal::RunFinished { .. } => "run_finished".to_owned(),
    }
}

// ----- events -----

/// The run begins.
pub fn begin() -> Event {
    Event::Begin
}

/// Lane `lane` started as `pid`.
pub fn spawned(lane: usize, pid: u32) -> Event {
    Event::Spawned { lane, pid }
}

/// Lane `lane` says case `id` started.
pub fn started(lane: usize, id: &str) -> Event {
    Event::Message(
        lane,
        FromLane::Started {
            case: id.to_owned(),
            mark: 0,
        },
    )
}

/// Lane `lane` says it released its further cards.
pub fn released(lane: usize) -> Event {
    Event::Message(lane, FromLane::Released)
}

/// Lane `lane` says case `id` passed.
pub fn passed(lane: usize, id: &str) -> Event {
    finished(lane, id, AttemptOutcome::Passed, None)
}

/// Lane `lane` says case `id` failed with an error of `class`.
pub fn failed(lane: usize, id: &str, class: FailureClass) -> Event {
    let error = ErrorReport::new(class, "it failed");
    finished(lane, id, AttemptOutcome::Failed, Some(error))
}

/// Lane `lane` says case `id` failed with a driver error of code `code` (classified from it).
pub fn failed_with_code(lane: usize, id: &str, code: platform_common::Code) -> Event {
    let mut error = ErrorReport::new(platform_common::error::classify_code(code), "it failed");
    error.code = Some(code);
    finished(lane, id, AttemptOutcome::Failed, Some(error))
}

fn finished(lane: usize, id: &str, outcome: AttemptOutcome, error: Option<ErrorReport>) -> Event {
    Event::Message(
        lane,
        FromLane::Finished {
            case: id.to_owned(),
            outcome,
            duration_us: 1000,
            error,
            mark: 0,
        },
    )
}

/// Lane `lane` starts an init on card `device`.
pub fn init_started(lane: usize, device: u32) -> Event {
    Event::Message(
        lane,
        FromLane::InitStarted {
            device,
            runtime: "r".into(),
        },
    )
}

/// Lane `lane`'s init on card `device` is done.
pub fn init_done(lane: usize, device: u32) -> Event {
    Event::Message(lane, FromLane::InitDone { device })
}

/// Lane `lane`'s init on card `device` failed with a device error.
pub fn init_failed(lane: usize, device: u32) -> Event {
    Event::Message(
        lane,
        FromLane::InitFailed {
            device,
            runtime: "r".into(),
            error: ErrorReport::new(FailureClass::DeviceRuntime, "init failed"),
        },
    )
}

/// Lane `lane` built a pooled worker of `runtime` on card `device` (its init timed by the
/// `init_started` and `init_done` before it, if any).
pub fn built(lane: usize, device: u32, runtime: &str) -> Event {
    Event::Message(
        lane,
        FromLane::Worker {
            device,
            runtime: runtime.into(),
            action: crate::report::model::WorkerAction::Built,
        },
    )
}

/// Lane `lane` answers where it is: in case `id`.
pub fn answer(lane: usize, id: &str) -> Event {
    Event::Message(
        lane,
        FromLane::Where {
            case: Some(id.to_owned()),
            in_call: None,
            since_ms: Some(9000),
            launch: 1,
            launches: Some(1),
        },
    )
}

/// Lane `lane` exited with `status` (no sink, or an empty one).
pub fn exited(lane: usize, status: LaneStatus) -> Event {
    Event::Exited {
        lane,
        status,
        sink: None,
    }
}

/// Lane `lane` exited with `status`, its sink naming `selectors`.
pub fn exited_with_sink(lane: usize, status: LaneStatus, selectors: &[&str]) -> Event {
    let records = selectors
        .iter()
        .map(|s| SinkRecord {
            selector: (*s).to_owned(),
            case: (*s).to_owned(),
            runtime: "r".into(),
            device: 0,
            code: None,
            reason: "poisoned".into(),
        })
        .collect();
    Event::Exited {
        lane,
        status,
        sink: Some(SinkContents {
            records,
            malformed_lines: Vec::new(),
        }),
    }
}

/// SIGINT or SIGTERM reached the run.
pub fn interrupted(signal: Interruption) -> Event {
    Event::Interrupted(signal)
}

/// Time passed.
pub fn tick() -> Event {
    Event::Tick
}

/// A lane process ended by `sig`.
pub const fn signaled(sig: i32) -> LaneStatus {
    LaneStatus::Signaled(sig)
}

/// A lane process exited with `code`.
pub const fn exit(code: i32) -> LaneStatus {
    LaneStatus::Exited(code)
}
