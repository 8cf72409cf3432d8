//! `cardguard-suite --archive FILE ARGS...`: unpack a suite archive into a private temporary
//! directory, check it, and exec the archived binary with the remaining arguments, so the
//! archive's binary (with its own kernel blobs beside it), not the caller, is what runs.
//!
//! The unpack directory (`$TMPDIR/cardguard-archive-XXXXXX`, mode 0700) holds a marker with the
//! pid that execs; the archived binary, which keeps that pid, removes the directory when its
//! `main` returns ([`remove_launch_dir`]), after its last lane is gone. A run ended by a second
//! signal or SIGKILL leaves the directory behind. This file owns the flag, the marker and the
//! exec; it never checks a member itself (`unpack.rs` does) and never runs a suite in-process.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use cardguard_archive::unpack;

/// The flag.
pub const ARCHIVE_FLAG: &str = "--archive";

/// The marker file in the unpack directory: the pid of the process that execs the archived
/// binary (which keeps the pid).
const LAUNCH_MARKER: &str = ".cardguard-launch";

/// What the command line says about `--archive`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchRequest {
    /// No `--archive`: run this binary.
    NotAsked,
    /// Unpack `archive` and exec its binary with `rest` (the arguments without `--archive FILE`).
    Launch {
        /// The archive.
        archive: PathBuf,
        /// The other arguments, in order.
        rest: Vec<OsString>,
    },
    /// A bad `--archive` (no value, empty, or given twice): a one-line usage error.
    Usage(String),
}

/// Finds `--archive FILE` or `--archive=FILE` in `args` (the program name first).
pub fn launch_request(args: &[OsString]) -> LaunchRequest {
    let mut archive: Option<PathBuf> = None;
    let mut rest = Vec::new();
    let mut it = args.iter().skip(1);
    while let Some(arg) = it.next() {
        let value = if arg == ARCHIVE_FLAG {
            match it.next() {
                Some(v) => v.clone(),
                None => return LaunchRequest::Usage(format!("{ARCHIVE_FLAG} needs a FILE")),
            }
        } else if let Some(v) = arg.as_bytes().strip_prefix(b"--archive=") {
            OsStr::from_bytes(v).to_owned()
        } else {
            rest.push(arg.clone());
            continue;
        };
        if value.is_empty() {
            return LaunchRequest::Usage(format!("{ARCHIVE_FLAG}: the FILE is empty"));
        }
        if archive.is_some() {
            return LaunchRequest::Usage(format!("{ARCHIVE_FLAG} is given twice"));
        }
        archive = Some(PathBuf::from(value));
    }
    match archive {
        None => LaunchRequest::NotAsked,
        Some(archive) => LaunchRequest::Launch { archive, rest },
    }
}

/// Unpacks `archive`, checks it and execs its binary with `rest`; returns only when that fails:
/// exit 2 with a one-line error naming the archive and, for a bad member, the member.
pub fn launch(archive: &Path, rest: &[OsString]) -> ExitCode {
    let fail = |msg: String| {
        crate::output::err(format_args!("error: {ARCHIVE_FLAG}: {msg}"));
        ExitCode::from(2)
    };
    let shown = archive.display();
    let tmp = match tempfile::Builder::new().prefix("cardguard-archive-").tempdir() {
        Ok(t) => t,
        Err(e) => return fail(format!("{shown}: cannot make a directory to unpack into: {e}")),
    };
    let unpacked = match unpack(archive, tmp.path()) {
        Ok(u) => u,
        Err(e) => return fail(crate::cli::error_chain(&e)),
    };
    if let Err(e) = std::fs::write(tmp.path().join(LAUNCH_MARKER), std::process::id().to_string()) {
        return fail(format!("{shown}: cannot write the launch marker: {e}"));
    }
    let dir = tmp.keep();
    let binary = unpacked.binary();
    tracing::debug!(binary = %binary.display(), "exec the archived suite binary");
    let e = Command::new(&binary).args(rest).exec();
    let _ = std::fs::remove_dir_all(&dir);
    fail(format!(
        "cannot run the archived binary {}: {e}",
        binary.display()
    ))
}

/// In the archived binary that [`launch`] exec'd: removes the unpack directory (the running
/// executable's grandparent) when its marker names this process. Elsewhere, and in lanes, it
/// does nothing.
pub fn remove_launch_dir() {
    let Some(dir) = launch_dir() else { return };
    let marker = dir.join(LAUNCH_MARKER);
    let ours = std::fs::read_to_string(&marker).is_ok_and(|t| t.trim() == std::process::id().to_string());
    if ours {
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            tracing::warn!(dir = %dir.display(), "cannot remove the unpacked archive: {e}");
        }
    }
}

fn launch_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        std::iter::once("cardguard-suite")
            .chain(a.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_archive_flag_is_taken_out_and_the_rest_kept_in_order() {
        assert_eq!(launch_request(&args(&["--arch", "a5"])), LaunchRequest::NotAsked);
        let want = LaunchRequest::Launch {
            archive: "s.tar.zst".into(),
            rest: vec!["--arch".into(), "a5".into(), "--list".into()],
        };
        assert_eq!(
            launch_request(&args(&["--arch", "a5", "--archive", "s.tar.zst", "--list"])),
            want
        );
        assert_eq!(
            launch_request(&args(&["--archive=s.tar.zst", "--arch", "a5", "--list"])),
            want
        );
    }

    #[test]
    fn a_bad_archive_flag_is_one_line_naming_it() {
        for bad in [
            vec!["--arch", "a5", "--archive"],
            vec!["--archive="],
            vec!["--archive", "a", "--archive", "b"],
        ] {
            match launch_request(&args(&bad)) {
                LaunchRequest::Usage(m) => assert!(m.contains("--archive") && !m.contains('\n'), "{m}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
}
