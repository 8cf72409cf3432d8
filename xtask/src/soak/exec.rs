//! Running one test binary once, as cargo would, with a bound on its time.
//!
//! This module owns one run: the binary starts in its package root with `CARGO_MANIFEST_DIR` and
//! `CARGO_PKG_NAME` set and the target's library directories on `LD_LIBRARY_PATH` (as `cargo test`
//! runs it), its stdout and stderr in temporary files (no pipe can fill up). A run past its bound
//! has its whole process tree SIGKILLed. It stays in this process's process group, so a Ctrl-C
//! of the soak reaches the test binary too. It never reads the output beyond handing it back (see
//! `libtest`).

use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use crate::child_wait::{wait_bounded, Waited};
use crate::procs;

/// How to run a binary.
#[derive(Debug, Clone)]
pub struct RunSpec<'a> {
    /// The executable.
    pub exe: &'a Path,
    /// Its arguments (libtest's, e.g. `--test-threads N`).
    pub args: &'a [OsString],
    /// Working directory and `CARGO_MANIFEST_DIR`.
    pub package_root: &'a Path,
    /// `CARGO_PKG_NAME`.
    pub package: &'a str,
    /// Directories put first on `LD_LIBRARY_PATH`.
    pub lib_dirs: &'a [PathBuf],
    /// The bound on the run.
    pub timeout: Duration,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The binary exited (any status, including a signal).
    Exited(ExitStatus),
    /// The binary ran past its bound and its process group was killed.
    TimedOut,
}

/// One run's result.
#[derive(Debug)]
pub struct RunOutput {
    /// How it ended.
    pub ending: Ending,
    /// Everything it wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr.
    pub stderr: String,
}

/// The binary could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A temporary output file could not be made or read.
    #[error("failed to capture the output of {exe}: {source}")]
    Capture {
        /// The binary.
        exe: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The binary could not be started.
    #[error("failed to start {exe}: {source}")]
    Spawn {
        /// The binary.
        exe: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Runs the binary once and waits for its exit or its bound, whichever comes first.
pub fn run_once(spec: &RunSpec<'_>) -> Result<RunOutput, ExecError> {
    let capture = |source| ExecError::Capture {
        exe: spec.exe.to_owned(),
        source,
    };
    let mut out = tempfile::tempfile().map_err(capture)?;
    let mut err = tempfile::tempfile().map_err(capture)?;
    let mut cmd = Command::new(spec.exe);
    cmd.args(spec.args)
        .current_dir(spec.package_root)
        .env("CARGO_MANIFEST_DIR", spec.package_root)
        .env("CARGO_PKG_NAME", spec.package)
        .env("LD_LIBRARY_PATH", library_path(spec.lib_dirs))
        .stdin(Stdio::null())
        .stdout(out.try_clone().map_err(capture)?)
        .stderr(err.try_clone().map_err(capture)?);
    let child = cmd.spawn().map_err(|source| ExecError::Spawn {
        exe: spec.exe.to_owned(),
        source,
    })?;
    let ending = match wait_bounded(child, spec.timeout, procs::kill_tree).map_err(capture)? {
        Waited::Exited(status) => Ending::Exited(status),
        Waited::Killed(_) => Ending::TimedOut,
    };
    let stdout = read_all(&mut out).map_err(capture)?;
    let stderr = read_all(&mut err).map_err(capture)?;
    Ok(RunOutput {
        ending,
        stdout,
        stderr,
    })
}

fn read_all(f: &mut std::fs::File) -> std::io::Result<String> {
    f.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `lib_dirs` in front of this process's `LD_LIBRARY_PATH`, as cargo adds the target's.
fn library_path(lib_dirs: &[PathBuf]) -> OsString {
    let inherited = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = lib_dirs.to_vec();
    dirs.extend(std::env::split_paths(&inherited));
    std::env::join_paths(dirs).unwrap_or(inherited)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration, root: &Path) -> RunOutput {
        let args = [OsString::from("-c"), OsString::from(script)];
        let spec = RunSpec {
            exe: Path::new("/bin/sh"),
            args: &args,
            package_root: root,
            package: "pkg",
            lib_dirs: &[PathBuf::from("/first/lib")],
            timeout,
        };
        run_once(&spec).expect("sh runs")
    }

    #[test]
    fn a_run_sees_its_package_root_and_its_status() {
        let root = tempfile::tempdir().unwrap();
        let out = sh(
            r#"pwd; echo "$CARGO_MANIFEST_DIR $CARGO_PKG_NAME"; echo "$LD_LIBRARY_PATH"; echo oops >&2; exit 101"#,
            Duration::from_secs(600),
            root.path(),
        );
        let root = root.path().canonicalize().unwrap();
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(Path::new(lines[0]).canonicalize().unwrap(), root);
        assert!(lines[1].ends_with(" pkg"), "{:?}", lines[1]);
        assert!(lines[2].starts_with("/first/lib"), "{:?}", lines[2]);
        assert_eq!(out.stderr, "oops\n");
        match out.ending {
            Ending::Exited(s) => assert_eq!(s.code(), Some(101)),
            Ending::TimedOut => panic!("a quick run timed out"),
        }
    }

    #[test]
    fn a_run_past_its_bound_is_killed_with_its_tree() {
        use rustix::event::{poll, PollFd, PollFlags};
        use rustix::process::{pidfd_open, Pid, PidfdFlags};

        let root = tempfile::tempdir().unwrap();
        // The shell and its background child both block for good on a FIFO nobody writes: only
        // the kill of the whole tree ends the child (a kill of the shell alone would leave it).
        let fifo = root.path().join("never");
        let st = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(st.success());
        let script = format!("cat {f} & echo $!; cat {f}", f = fifo.display());
        let out = sh(&script, Duration::from_millis(300), root.path());
        assert_eq!(out.ending, Ending::TimedOut);
        let child: i32 = out.stdout.trim().parse().expect("the background child's pid");
        let child = Pid::from_raw(child).expect("a pid");
        // A pidfd becomes readable when its process has exited: wait for that event (bounded
        // only so that a surviving child fails the test instead of hanging it).
        match pidfd_open(child, PidfdFlags::empty()) {
            Err(e) => assert_eq!(e, rustix::io::Errno::SRCH, "{e}"),
            Ok(fd) => {
                let mut fds = [PollFd::new(&fd, PollFlags::IN)];
                let ready = poll(&mut fds, 120_000).unwrap();
                assert_eq!(ready, 1, "the background child survived the group kill");
            }
        }
    }
}
