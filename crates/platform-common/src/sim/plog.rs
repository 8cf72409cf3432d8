//! The simulator's device log: where the real runtime would write its plog, the simulated card
//! writes one plausible line per failing call, so the runner's device-log capture is exercised
//! end to end (`libsim_acl.so` and `--platform sim` alike).
//!
//! The layout follows CANN's log reference ("Log Overview", "Viewing Logs":
//! hiascend.com/document/detail/en/canncommercial/850/maintenref/logreference/logreference_0001.html
//! and the application-log page of the same reference): with `ASCEND_PROCESS_LOG_PATH` set, a
//! process's host-side logs go to `$ASCEND_PROCESS_LOG_PATH/debug/plog/plog-<pid>_<time>.log`,
//! one line per record, `[Level] ModuleName(PID,PName):DateTimeMS [FileName:LineNumber]LogContent`
//! with the time as `yyyy-mm-dd-hh:mm:ss.SSS.uuu`. The simulator writes UTC (the real one writes
//! local time), module `RUNTIME` for ACL and runtime calls and `DRV` for HAL calls, and names
//! itself as the file, so no one mistakes its lines for CANN's.
//!
//! This file owns the file and the line. Nothing is written when the variable is unset or empty;
//! a log that cannot be written is given up on (once, at `debug`), never an error of the call.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use crate::code_table::lookup;
use crate::error::Code;

/// The variable CANN's runtime takes its log directory from.
pub const ENV_PROCESS_LOG_PATH: &str = "ASCEND_PROCESS_LOG_PATH";

/// A process's simulated plog.
#[derive(Debug)]
pub struct Plog {
    root: PathBuf,
    /// The open file (`None` before the first line, or after the log was given up on).
    file: Mutex<State>,
}

#[derive(Debug)]
enum State {
    Unopened,
    Open(File),
    GivenUp,
}

impl Plog {
    /// The plog under `$ASCEND_PROCESS_LOG_PATH`, when the variable names a directory.
    pub fn from_env() -> Option<Self> {
        let root = std::env::var_os(ENV_PROCESS_LOG_PATH).filter(|v| !v.is_empty())?;
        Some(Self::under(Path::new(&root)))
    }

    /// The plog under `root` (its file is made on the first line).
    pub fn under(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            file: Mutex::new(State::Unopened),
        }
    }

    /// Logs that `call` failed with `code`.
    pub fn call_failed(&self, call: &str, code: Code) {
        let line = line(std::process::id(), &process_name(), SystemTime::now(), call, code);
        let mut state = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if let State::Unopened = *state {
            *state = match self.open() {
                Ok(f) => State::Open(f),
                Err(e) => {
                    tracing::debug!(root = %self.root.display(), "cannot write the simulated plog: {e}");
                    State::GivenUp
                }
            };
        }
        if let State::Open(f) = &mut *state {
            if let Err(e) = f.write_all(line.as_bytes()) {
                tracing::debug!(root = %self.root.display(), "cannot write the simulated plog: {e}");
                *state = State::GivenUp;
            }
        }
    }

    fn open(&self) -> std::io::Result<File> {
        let dir = self.root.join("debug").join("plog");
        fs::create_dir_all(&dir)?;
        let stamp: String = rfc3339(SystemTime::now())
            .chars()
            .filter(char::is_ascii_digit)
            .take(17)
            .collect();
        let name = format!("plog-{}_{stamp}.log", std::process::id());
        OpenOptions::new().create(true).append(true).open(dir.join(name))
    }
}

/// One plog line (see the module docs).
pub fn line(pid: u32, pname: &str, at: SystemTime, call: &str, code: Code) -> String {
    let module = if call.starts_with("hal") { "DRV" } else { "RUNTIME" };
    let t = rfc3339(at);
    // `2026-12-03T07:12:17.123456Z` -> `2026-12-03-07:12:17.123.456`.
    let time = format!("{}-{}.{}.{}", &t[..10], &t[11..19], &t[20..23], &t[23..26]);
    let desc = lookup(code.space, code.raw).map_or_else(
        || "unknown code".to_owned(),
        |c| format!("{}: {}", c.name, c.meaning),
    );
    format!(
        "[ERROR] {module}({pid},{pname}):{time} [cardguard_sim:0]{pid} {call}: ErrCode={}, desc=[{desc}] \
         (simulated by cardguard)\n",
        code.raw
    )
}

fn rfc3339(at: SystemTime) -> String {
    humantime::format_rfc3339_micros(at).to_string()
}

/// The process's name as CANN's log shows it (its executable's file name).
fn process_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn a_line_has_the_plog_layout() {
        let at = UNIX_EPOCH + Duration::from_micros(1_796_282_337_123_456);
        let l = line(
            42,
            "lane",
            at,
            "aclrtSynchronizeStreamWithTimeout",
            Code::acl(507054),
        );
        assert!(
            l.starts_with("[ERROR] RUNTIME(42,lane):2026-12-03-07:18:57.123.456 [cardguard_sim:0]42 "),
            "{l}"
        );
        assert!(
            l.contains("aclrtSynchronizeStreamWithTimeout: ErrCode=507054, desc=[ACL_ERROR_RT_"),
            "{l}"
        );
        assert!(l.ends_with("(simulated by cardguard)\n"));
        let hal = line(1, "x", at, "halResMap", Code::acl(1));
        assert!(hal.starts_with("[ERROR] DRV(1,x):"), "{hal}");
    }

    #[test]
    fn lines_go_to_debug_plog_under_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Plog::under(tmp.path());
        p.call_failed("aclrtMalloc", Code::acl(207001));
        p.call_failed("aclrtFree", Code::acl(107000));
        let dir = tmp.path().join("debug/plog");
        let files: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("plog-{}_", std::process::id())) && name.ends_with(".log"),
            "{name}"
        );
        let text = fs::read_to_string(&files[0]).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains("aclrtMalloc: ErrCode=207001") && text.contains("aclrtFree: ErrCode=107000"));
    }
}
