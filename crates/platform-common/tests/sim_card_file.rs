//! Card files: a card file that cannot be read (garbled, not UTF-8, empty) is reset to a fresh
//! card with one warning naming the file, and the run goes on; a writer killed at any moment
//! of a rewrite never leaves a file that lost the run's plan, fired marks or reset generation.
//!
//! The kill test kills a writer 250 times at varying moments; with the old truncate-then-write
//! rewrite it caught an empty card file (plan, marks and generation gone) in 5 of 6 runs.

#![cfg(feature = "sim")]

mod sim_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use platform_common::sim::{card_state, start_run, CardState, Fault, FaultPlan};
use platform_common::{Arch, Driver};
use serde_json::Value;
use sim_support::{Machine, Session};

/// The log lines a closure's calls wrote at `warn` and above, on this thread.
fn warnings_of<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let sink = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    (out, text.lines().map(str::to_owned).collect())
}

#[test]
fn an_unreadable_card_file_is_reset_to_a_fresh_card_with_one_warning_naming_it() {
    for (what, bytes) in [
        ("garbled", &b"{\"generation\": 7, \"faults\": [{\"fault\":"[..]),
        ("not UTF-8", &b"\xff\xfe\x00\x9f{}"[..]),
        ("empty", &b""[..]),
    ] {
        let m = Machine::with_plan(Arch::A5, "dev=0:corrupt@3");
        let path = m.cfg.card_path(0);
        std::fs::write(&path, bytes).unwrap();
        let (state, warnings) = warnings_of(|| card_state(&m.cfg, 0).unwrap());
        assert_eq!(state, CardState::default(), "{what}");
        let named: Vec<_> = warnings
            .iter()
            .filter(|l| l.contains(&path.display().to_string()))
            .collect();
        assert_eq!(
            named.len(),
            1,
            "{what}: one warning naming the file: {warnings:?}"
        );
        assert!(named[0].contains("reset to a fresh card"), "{what}: {}", named[0]);
        // The file is a fresh record now: a second read warns no more.
        let (again, warnings) = warnings_of(|| card_state(&m.cfg, 0).unwrap());
        assert_eq!(again, CardState::default());
        assert!(warnings.is_empty(), "{what}: {warnings:?}");
        // And the run goes on: a process opens the card, a new run installs its plan.
        std::fs::write(&path, bytes).unwrap();
        let drv = m.driver();
        let ((), _) = warnings_of(|| {
            Session::init(&drv, 0).unwrap();
        });
        m.start("dev=0:corrupt@3");
        assert_eq!(
            card_state(&m.cfg, 0).unwrap().faults,
            [Fault::Corrupt { at: 3 }],
            "{what}"
        );
    }
}

#[test]
fn a_directory_in_place_of_a_card_file_is_an_error_not_a_fresh_card() {
    let m = Machine::new(Arch::A2a3);
    std::fs::create_dir_all(m.cfg.card_path(1)).unwrap();
    let e = card_state(&m.cfg, 1).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    assert!(m.driver().set_device(1).is_err());
}

/// What a killed writer's card file must still say.
#[derive(Debug, Default)]
struct Seen {
    generation: u64,
    case_launches: u64,
}

#[test]
fn a_writer_killed_mid_rewrite_never_loses_the_plan_the_fired_marks_or_the_generation() {
    const KILLS: usize = 250;
    let m = Machine::new(Arch::A5);
    let plan = "dev=0:corrupt@1;dev=0:op_timeout@1000000000;dev=0:init_delay_ms=1";
    m.start(plan);
    let faults = plan.parse::<FaultPlan>().unwrap().faults_for(0);
    let mut seen = Seen::default();
    for kill in 0..KILLS {
        let mut child = Command::new(cardguard_test_support::bins::sim_agent().unwrap())
            .arg("rewrite-loop")
            .args(["--root", m.cfg.root.to_str().unwrap()])
            .args(["--arch", m.cfg.arch.name()])
            .args(["--card", "0"])
            .args(["--lock-dir", m.lock_dir().to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // Let it run a varying number of launches, then kill it wherever it is: it rewrites the
        // card file at every launch and force reset, so mostly inside a rewrite.
        let launches: u64 = 1 + (kill as u64 * 7) % 12;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut launched, mut rounds) = (0u64, 0u64);
        while launched < launches {
            let line = lines.next().expect("the agent ended early").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            match v["event"].as_str() {
                Some("launched") => launched += 1,
                Some("round") if v["ok"] == true => rounds += 1,
                _ => panic!("kill {kill}: {line}"),
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let state = card_state(&m.cfg, 0).unwrap();
        assert_eq!(state.faults, faults, "kill {kill}: the plan survives: {state:?}");
        assert_eq!(
            state.fired,
            [0],
            "kill {kill}: corrupt@1 fired once and stays marked"
        );
        assert!(
            state.generation >= seen.generation + rounds,
            "kill {kill}: generation {} after {} then {rounds} resets",
            state.generation,
            seen.generation
        );
        assert!(
            state.counters.case_launches >= seen.case_launches + launched,
            "kill {kill}: {state:?} after {seen:?} and {launched} launches"
        );
        seen = Seen {
            generation: state.generation,
            case_launches: state.counters.case_launches,
        };
    }
    // A new run cleans up the temp files killed writers left and starts from the same generation.
    start_run(&m.cfg, &[0], &plan.parse().unwrap()).unwrap();
    let strays: Vec<_> = std::fs::read_dir(&m.cfg.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(strays.is_empty(), "{strays:?}");
    let state = card_state(&m.cfg, 0).unwrap();
    assert_eq!(state.generation, seen.generation);
    assert_eq!(state.counters.case_launches, 0);
    assert!(state.fired.is_empty());
}
