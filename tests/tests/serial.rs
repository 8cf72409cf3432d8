//! `#[serial]` on simulated cards: the mechanism of the hardware test binaries
//! (`crates/platform-*/tests/onboard.rs`), where every test is `#[serial]` on top of the card's
//! lease, shown to keep two tests from ever overlapping inside one binary, whatever
//! `--test-threads` says.
//!
//! The `serial_marked_*` tests are the sim-backed variant: each is `#[serial]`, takes card 0's lease
//! (blocking, as the hardware tests do), runs the seed's within-process probe on a simulated card
//! (hang, then a noop refused at the guard, finalize force-resets) and records when it entered and
//! left on the monotonic clock (`CLOCK_MONOTONIC`, nanoseconds) as one line of a shared log
//! (appended in one write). Run as part of `cargo test` they use a private sim root and log of
//! their own and check only their own work.
//!
//! `cargo test` cannot give one binary `--test-threads 8`, so
//! `no_two_tests_marked_serial_overlap_under_eight_test_threads` starts this very binary again as
//! a child with `--test-threads 8`, only the `serial_marked_` tests selected, and the log and sim root named in
//! [`ENV_LOG`] and [`ENV_SIM_ROOT`] (set on the child only; this process's environment is never
//! changed), waits for it to exit, and reads the log: every marked test ran once, and sorted by
//! entry each one left before the next entered. Without `#[serial]` the eight would start
//! together (the lease alone makes them queue inside their bodies, after they entered), which is
//! what the check would catch.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use cardguard_test_support::SimBench;
use platform_common::lease::DeviceLease;
use platform_common::runner_base::{RunError, RunRequest};
use platform_common::Arch;
use serial_test::serial;

/// The shared log the child's marked tests append to (set by the checking test on the child).
const ENV_LOG: &str = "CARDGUARD_SERIAL_TEST_LOG";
/// The sim root (and lock dir parent) the child's marked tests share.
const ENV_SIM_ROOT: &str = "CARDGUARD_SERIAL_TEST_SIM_ROOT";
/// How many `serial_marked_` tests this file has (each arch's four).
const MARKED: usize = 8;
/// The libtest filter that selects exactly the marked tests in the child (no other test's name
/// contains it).
const CHILD_FILTER: &str = "serial_marked_";

/// Where the marked tests write and simulate: the child's settings, or a private temp dir for
/// this process.
struct Shared {
    log: PathBuf,
    sim_root: PathBuf,
    _own: Option<tempfile::TempDir>,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(
        || match (std::env::var_os(ENV_LOG), std::env::var_os(ENV_SIM_ROOT)) {
            (Some(log), Some(root)) => Shared {
                log: log.into(),
                sim_root: root.into(),
                _own: None,
            },
            _ => {
                let dir = tempfile::tempdir().unwrap();
                Shared {
                    log: dir.path().join("serial.log"),
                    sim_root: dir.path().join("sim"),
                    _own: Some(dir),
                }
            }
        },
    )
}

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every thread (and process) of the machine.
fn monotonic_ns() -> u128 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u128::try_from(t.tv_sec).unwrap() * 1_000_000_000 + u128::try_from(t.tv_nsec).unwrap()
}

/// One marked test's body: enter, take card 0's lease, hang, refused noop, force reset, leave.
fn marked_body(name: &str, arch: Arch) {
    let enter = monotonic_ns();
    let s = shared();
    let root = s.sim_root.join(arch.name());
    let locks = s.sim_root.join("locks");
    std::fs::create_dir_all(&root).unwrap();
    let bench = SimBench::new(cardguard_test_support::entry(arch), &root, &locks);
    // Blocking, as the hardware tests take a real card's: the lease serialises processes.
    let lease = DeviceLease::acquire(&bench.leases, 0, name).unwrap();
    bench.start_run(&[0], "").unwrap();
    let process = bench.process();
    let mut runner = bench
        .runner(&Arc::clone(&process), bench.config(0, None).unwrap())
        .unwrap();
    let hang = runner.run(&RunRequest::new("hang", 1, Vec::new()));
    assert!(matches!(hang, Err(RunError::Device(_))), "{hang:?}");
    let noop = runner.run(&RunRequest::new("noop", 1, Vec::new()));
    assert!(matches!(noop, Err(RunError::Unusable(_))), "{noop:?}");
    let report = runner.finalize(&lease).unwrap();
    assert!(report
        .reset
        .is_some_and(|r| r.attempts.last().is_some_and(|a| a.confirmed())));
    drop(lease);
    let leave = monotonic_ns();
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&s.log)
        .unwrap();
    // One write per line (O_APPEND): lines of concurrent writers never interleave.
    log.write_all(format!("{name} {enter} {leave}\n").as_bytes())
        .unwrap();
}

macro_rules! marked_tests {
    ($($name:ident: $arch:expr;)*) => {
        $(
            #[test]
            #[serial]
            fn $name() {
                marked_body(stringify!($name), $arch);
            }
        )*
    };
}

marked_tests! {
    serial_marked_a5_1: Arch::A5;
    serial_marked_a5_2: Arch::A5;
    serial_marked_a5_3: Arch::A5;
    serial_marked_a5_4: Arch::A5;
    serial_marked_a2a3_1: Arch::A2a3;
    serial_marked_a2a3_2: Arch::A2a3;
    serial_marked_a2a3_3: Arch::A2a3;
    serial_marked_a2a3_4: Arch::A2a3;
}

/// One logged test: name, entry and exit (monotonic ns).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Span {
    name: String,
    enter: u128,
    leave: u128,
}

fn parse_log(text: &str) -> Vec<Span> {
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 3, "bad log line {l:?}");
            Span {
                name: f[0].to_owned(),
                enter: f[1].parse().unwrap(),
                leave: f[2].parse().unwrap(),
            }
        })
        .collect()
}

/// The first pair of spans that overlap (sorted by entry, one entered before the previous left).
fn first_overlap(spans: &[Span]) -> Option<(Span, Span)> {
    let mut sorted = spans.to_vec();
    sorted.sort_by_key(|s| s.enter);
    sorted
        .windows(2)
        .find(|w| w[1].enter < w[0].leave)
        .map(|w| (w[0].clone(), w[1].clone()))
}

#[test]
fn the_overlap_check_finds_overlaps_and_passes_disjoint_spans() {
    let span = |name: &str, enter, leave| Span {
        name: name.into(),
        enter,
        leave,
    };
    let disjoint = [span("b", 20, 30), span("a", 0, 10), span("c", 30, 31)];
    assert_eq!(first_overlap(&disjoint), None);
    let overlapping = [span("a", 0, 10), span("c", 40, 50), span("b", 9, 20)];
    assert_eq!(
        first_overlap(&overlapping),
        Some((span("a", 0, 10), span("b", 9, 20)))
    );
    assert_eq!(
        parse_log("x 1 2\ny 3 4\n"),
        vec![span("x", 1, 2), span("y", 3, 4)]
    );
}

fn run_marked_child(dir: &Path, threads: u32) -> std::process::Output {
    let exe = std::env::current_exe().unwrap();
    Command::new(exe)
        .args([CHILD_FILTER, "--test-threads", &threads.to_string()])
        .env(ENV_LOG, dir.join("serial.log"))
        .env(ENV_SIM_ROOT, dir.join("sim"))
        .output()
        .unwrap()
}

#[test]
fn no_two_tests_marked_serial_overlap_under_eight_test_threads() {
    // Inside the child this test is filtered out; never start a child from a child.
    if std::env::var_os(ENV_LOG).is_some() {
        panic!("{ENV_LOG} is set: this test runs only in the parent");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = run_marked_child(dir.path(), 8);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("{MARKED} passed")),
        "the child did not run the {MARKED} marked tests:\n{stdout}"
    );
    let spans = parse_log(&std::fs::read_to_string(dir.path().join("serial.log")).unwrap());
    let mut names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!((spans.len(), names.len()), (MARKED, MARKED), "{spans:?}");
    if let Some((a, b)) = first_overlap(&spans) {
        panic!("{} entered before {} left: {a:?} {b:?}", b.name, a.name);
    }
}
