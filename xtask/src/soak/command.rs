//! `cargo xtask soak`: the command line, the loop over binaries and runs, and what it prints.
//!
//! This module owns the soak's flow: build every test binary, start the busy loops, run each
//! binary `--runs` times in turn, tally failures per test (and per binary for a run that crashed
//! or ran past its bound), keep the output of every failed run, print, and exit 1 when anything
//! failed. It never parses libtest output or handles processes itself (`libtest`, `exec`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::build::{build_test_binaries, TestBinary};
use super::busy::{cores, BusyLoops};
use super::exec::{run_once, Ending, RunOutput, RunSpec};
use super::libtest::{failed_tests, finished};
use crate::onboard::{target_dir, workspace_root};

/// Writes a line to stdout; a closed stdout (`| head`) never changes what the soak does.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Runs of each test binary.
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Pass `--test-threads N` to every run [default: libtest's own, one thread per core].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    test_threads: Option<u32>,
    /// The bound on one run of one binary, in seconds: a run past it is killed and counted as a
    /// failure of the binary.
    #[arg(long, value_name = "SECS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Only the binaries whose label (`<package>/<target>`, `<package>/lib`) contains this
    /// (repeatable).
    #[arg(long = "bin", value_name = "TEXT")]
    bins: Vec<String>,
}

/// What failed in a binary's runs: a test, or the binary itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    /// A test that libtest reported failed.
    Test(String),
    /// The run crashed, ran past its bound, or failed without naming a failed test.
    Binary(String),
}

impl Failure {
    fn display(&self, label: &str) -> String {
        match self {
            Failure::Test(name) => format!("{label}::{name}"),
            Failure::Binary(why) => format!("{label}::({why})"),
        }
    }
}

/// The failures one run shows: each failed test, and the binary itself when it did not end as
/// libtest ends (a signal, a bound, a failing status with no failed test named).
pub fn run_failures(out: &RunOutput, timeout: Duration) -> Vec<Failure> {
    let mut failures: Vec<Failure> = failed_tests(&out.stdout).into_iter().map(Failure::Test).collect();
    match &out.ending {
        Ending::TimedOut => failures.push(Failure::Binary(format!(
            "timed out after {} s",
            timeout.as_secs()
        ))),
        Ending::Exited(status) => {
            use std::os::unix::process::ExitStatusExt;
            if let Some(sig) = status.signal() {
                failures.push(Failure::Binary(format!("crashed: signal {sig}")));
            } else if !status.success() && failures.is_empty() {
                let why = if finished(&out.stdout) {
                    format!("exited {} with no failed test named", status.code().unwrap_or(-1))
                } else {
                    format!("exited {} before its test result", status.code().unwrap_or(-1))
                };
                failures.push(Failure::Binary(why));
            }
        }
    }
    failures
}

/// Per binary, how many runs showed each failure.
#[derive(Debug, Default)]
pub struct Tally {
    counts: BTreeMap<(String, Failure), u32>,
}

impl Tally {
    /// Counts one run's failures of binary `label`.
    pub fn add(&mut self, label: &str, failures: &[Failure]) {
        for f in failures {
            *self.counts.entry((label.to_owned(), f.clone())).or_default() += 1;
        }
    }

    /// Failed test runs plus failed binary runs: the closing line's F.
    pub fn failed(&self) -> u64 {
        self.counts.values().map(|&c| u64::from(c)).sum()
    }

    /// One `FAIL <binary>::<test>: <k>/<N>` line per failure, sorted by binary then test.
    pub fn fail_lines(&self, runs: u32) -> Vec<String> {
        self.counts
            .iter()
            .map(|((label, f), k)| format!("FAIL {}: {k}/{runs}", f.display(label)))
            .collect()
    }
}

/// The closing line.
pub fn closing_line(binaries: usize, runs: u32, failed: u64) -> String {
    format!("soak: {binaries} binaries x {runs} runs: {failed} failed")
}

/// Runs the command.
pub fn run(args: Args) -> ExitCode {
    let root = workspace_root();
    let mut binaries = match build_test_binaries(&root) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: soak: {e}");
            return ExitCode::from(2);
        }
    };
    if !args.bins.is_empty() {
        binaries.retain(|b| args.bins.iter().any(|f| b.label.contains(f.as_str())));
        if binaries.is_empty() {
            eprintln!("error: soak: --bin {:?} matches no test binary", args.bins);
            return ExitCode::from(2);
        }
    }
    let n = cores();
    let loops = match BusyLoops::start(n) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: soak: failed to start the busy loops: {e}");
            return ExitCode::from(2);
        }
    };
    let threads = args.test_threads.map_or_else(
        || "libtest's default test threads".to_owned(),
        |t| format!("--test-threads {t}"),
    );
    say!(
        "soak: {} test binaries, {} runs each, {} busy loop(s) (one per core), {threads}, {} s bound per run",
        binaries.len(),
        args.runs,
        loops.len(),
        args.timeout
    );
    let logs = log_dir();
    let started = Instant::now();
    let result = soak(&args, &binaries, &logs);
    drop(loops);
    let tally = match result {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: soak: {e}");
            return ExitCode::from(2);
        }
    };
    for line in tally.fail_lines(args.runs) {
        say!("{line}");
    }
    if tally.failed() > 0 {
        say!("soak: the output of each failed run is in {}", logs.display());
    }
    say!("soak: took {:.0} s", started.elapsed().as_secs_f64());
    say!("{}", closing_line(binaries.len(), args.runs, tally.failed()));
    if tally.failed() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn soak(args: &Args, binaries: &[TestBinary], logs: &Path) -> Result<Tally, super::exec::ExecError> {
    let mut extra: Vec<OsString> = Vec::new();
    if let Some(t) = args.test_threads {
        extra.push("--test-threads".into());
        extra.push(t.to_string().into());
    }
    let timeout = Duration::from_secs(args.timeout);
    let mut tally = Tally::default();
    for (i, bin) in binaries.iter().enumerate() {
        let lib_dirs = lib_dirs(&bin.exe);
        let spec = RunSpec {
            exe: &bin.exe,
            args: &extra,
            package_root: &bin.package_root,
            package: &bin.package,
            lib_dirs: &lib_dirs,
            timeout,
        };
        let start = Instant::now();
        let mut failed_runs = 0;
        let mut failed_tests = 0;
        for run in 1..=args.runs {
            let out = run_once(&spec)?;
            let failures = run_failures(&out, timeout);
            if !failures.is_empty() {
                failed_runs += 1;
                failed_tests += failures.len();
                keep_output(logs, &bin.label, run, &out);
            }
            tally.add(&bin.label, &failures);
        }
        let secs = start.elapsed().as_secs_f64();
        if failed_runs == 0 {
            say!(
                "soak: [{}/{}] {}: {}/{} runs passed ({secs:.1} s)",
                i + 1,
                binaries.len(),
                bin.label,
                args.runs,
                args.runs
            );
        } else {
            say!(
                "soak: [{}/{}] {}: {} of {} runs failed, {failed_tests} failed test run(s) ({secs:.1} s)",
                i + 1,
                binaries.len(),
                bin.label,
                failed_runs,
                args.runs
            );
        }
    }
    Ok(tally)
}

/// The executable's directory (`deps`) and its parent, as cargo puts them on the library path.
fn lib_dirs(exe: &Path) -> Vec<PathBuf> {
    let deps = exe.parent().map(Path::to_path_buf);
    let profile = deps.as_deref().and_then(Path::parent).map(Path::to_path_buf);
    deps.into_iter().chain(profile).collect()
}

fn log_dir() -> PathBuf {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    target_dir()
        .join("soak")
        .join(format!("{secs}-{}", std::process::id()))
}

/// Writes a failed run's output as `<label>.run<N>.stdout` / `.stderr` (a write failure warns).
fn keep_output(dir: &Path, label: &str, run: u32, out: &RunOutput) {
    let name = label.replace('/', "__");
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(format!("{name}.run{run}.stdout")), &out.stdout)?;
        std::fs::write(dir.join(format!("{name}.run{run}.stderr")), &out.stderr)
    };
    if let Err(e) = write() {
        eprintln!(
            "warning: soak: cannot keep the output of {label} run {run} in {}: {e}",
            dir.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    use super::*;

    fn out(ending: Ending, stdout: &str) -> RunOutput {
        RunOutput {
            ending,
            stdout: stdout.to_owned(),
            stderr: String::new(),
        }
    }

    const T: Duration = Duration::from_secs(600);
    const FAILED: &str = "test a ... FAILED\n\ntest result: FAILED. 0 passed; 1 failed\n";
    const OK: &str = "test a ... ok\n\ntest result: ok. 1 passed; 0 failed\n";

    #[test]
    fn a_run_fails_by_its_tests_or_by_its_end() {
        let exited = |code: i32| Ending::Exited(ExitStatus::from_raw(code << 8));
        assert!(run_failures(&out(exited(0), OK), T).is_empty());
        assert_eq!(
            run_failures(&out(exited(101), FAILED), T),
            [Failure::Test("a".into())]
        );
        let killed = Ending::Exited(ExitStatus::from_raw(11));
        assert_eq!(
            run_failures(&out(killed, "test a ... ok\n"), T),
            [Failure::Binary("crashed: signal 11".into())]
        );
        assert_eq!(
            run_failures(&out(Ending::TimedOut, FAILED), T),
            [
                Failure::Test("a".into()),
                Failure::Binary("timed out after 600 s".into())
            ]
        );
        assert_eq!(
            run_failures(&out(exited(1), "running 1 test\n"), T),
            [Failure::Binary("exited 1 before its test result".into())]
        );
        assert_eq!(
            run_failures(&out(exited(101), OK), T),
            [Failure::Binary("exited 101 with no failed test named".into())]
        );
    }

    #[test]
    fn the_tally_counts_failed_test_runs() {
        let mut t = Tally::default();
        t.add("p/lib", &[Failure::Test("x".into()), Failure::Test("y".into())]);
        t.add("p/lib", &[Failure::Test("x".into())]);
        t.add("q/it", &[Failure::Binary("crashed: signal 9".into())]);
        t.add("q/it", &[]);
        assert_eq!(t.failed(), 4);
        assert_eq!(
            t.fail_lines(20),
            [
                "FAIL p/lib::x: 2/20",
                "FAIL p/lib::y: 1/20",
                "FAIL q/it::(crashed: signal 9): 1/20"
            ]
        );
        assert_eq!(
            closing_line(7, 20, t.failed()),
            "soak: 7 binaries x 20 runs: 4 failed"
        );
        assert_eq!(Tally::default().failed(), 0);
    }

    #[test]
    fn lib_dirs_are_deps_then_the_profile_dir() {
        assert_eq!(
            lib_dirs(Path::new("/t/debug/deps/x-1")),
            [PathBuf::from("/t/debug/deps"), PathBuf::from("/t/debug")]
        );
    }
}
