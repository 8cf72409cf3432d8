//! Native stacks of a hung lane: finding a stack tool (`eu-stack` from elfutils, else `gdb`) on a
//! search path, and running it on the lane's pid, bounded in time.
//!
//! `eu-stack -p PID` or `gdb -p PID -batch -nx -ex 'thread apply all bt'` prints every thread's
//! stack; the tool runs in a process group of its own, its output is read until it ends or the
//! bound passes (then the group is killed and what it printed so far is kept). Attaching needs
//! ptrace rights over the lane (the same user, and a `kernel.yama.ptrace_scope` that allows it,
//! or root): a tool that cannot attach says so on its stderr, and that line is the error. This
//! file never decides when stacks are taken (the state machine does, before it ends a lane for a
//! case timeout) and never ends the lane.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::Signal;

use super::kill::signal_group;
pub use crate::dispatch::policy::diagnosis::STACK_BOUND;

/// The most bytes of stacks kept.
const STACK_LIMIT: usize = 64 * 1024;

/// Environment variable supplying the default search path for the stack tool (else `PATH`).
pub const ENV_STACK_TOOL_PATH: &str = "ONBOARD_STACK_TOOL_PATH";

/// The tools tried, in order.
const TOOLS: [&str; 2] = ["eu-stack", "gdb"];

/// A stack tool found on the search path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackTool {
    /// `eu-stack` or `gdb`.
    pub name: &'static str,
    /// Its path.
    pub path: PathBuf,
}

/// Why no stacks were taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StackError {
    /// The tool could not be started.
    #[error("cannot run {tool}: {reason}")]
    Spawn {
        /// The tool.
        tool: &'static str,
        /// Why.
        reason: String,
    },
    /// The tool printed no stack (it could not attach, or the lane was gone).
    #[error("{tool} printed no stacks ({reason})")]
    Empty {
        /// The tool.
        tool: &'static str,
        /// Its last line on stderr, or its exit status.
        reason: String,
    },
}

/// The search path the dispatcher uses by default: [`ENV_STACK_TOOL_PATH`], else `PATH`.
pub fn default_search_path() -> OsString {
    std::env::var_os(ENV_STACK_TOOL_PATH)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default()
}

/// The first stack tool of [`TOOLS`] found as an executable file in a directory of `search` (a
/// `:`-separated list, as `PATH`); `None` when there is none (an empty search path finds none).
pub fn find(search: &OsStr) -> Option<StackTool> {
    TOOLS.into_iter().find_map(|name| {
        std::env::split_paths(search)
            .filter(|dir| !dir.as_os_str().is_empty())
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
            .map(|path| StackTool { name, path })
    })
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl StackTool {
    /// The tool's command for process `pid`.
    fn command(&self, pid: u32) -> Command {
        let mut c = Command::new(&self.path);
        let pid = pid.to_string();
        match self.name {
            "eu-stack" => {
                c.args(["-p", &pid]);
            }
            _ => {
                c.args(["-p", &pid, "-batch", "-nx", "-ex", "thread apply all bt"]);
            }
        }
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        c
    }

    /// The stacks of every thread of process `pid`, within `bound` (what was printed by then if
    /// the tool takes longer; it is killed).
    pub fn capture(&self, pid: u32, bound: Duration) -> Result<String, StackError> {
        let deadline = Instant::now() + bound;
        let mut child = self.command(pid).spawn().map_err(|e| StackError::Spawn {
            tool: self.name,
            reason: e.to_string(),
        })?;
        let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
            signal_group(child.id(), Signal::Kill);
            let _ = child.wait();
            return Err(StackError::Spawn {
                tool: self.name,
                reason: "no pipes".to_owned(),
            });
        };
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let mut open = [true, true];
        let mut timed_out = false;
        let mut buf = vec![0u8; 16 * 1024];
        while open.iter().any(|o| *o) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                timed_out = true;
                break;
            }
            let ms = i32::try_from(left.as_millis() + 1).unwrap_or(i32::MAX);
            let ready = {
                let mut fds = Vec::new();
                let mut which = Vec::new();
                if open[0] {
                    fds.push(PollFd::new(&out, PollFlags::IN));
                    which.push(0);
                }
                if open[1] {
                    fds.push(PollFd::new(&err, PollFlags::IN));
                    which.push(1);
                }
                match poll(&mut fds, ms) {
                    Ok(_) => which
                        .into_iter()
                        .zip(fds.iter().map(|f| !f.revents().is_empty()))
                        .filter_map(|(w, r)| r.then_some(w))
                        .collect::<Vec<_>>(),
                    Err(Errno::INTR) => continue,
                    Err(_) => break,
                }
            };
            for w in ready {
                let (reader, sink): (&mut dyn Read, &mut Vec<u8>) = if w == 0 {
                    (&mut out, &mut stdout)
                } else {
                    (&mut err, &mut stderr)
                };
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => open[w] = false,
                    Ok(n) => {
                        if sink.len() < STACK_LIMIT {
                            sink.extend_from_slice(&buf[..n.min(STACK_LIMIT - sink.len())]);
                        }
                    }
                }
            }
        }
        if timed_out {
            signal_group(child.id(), Signal::Kill);
        }
        let status = child.wait();
        let text = String::from_utf8_lossy(&stdout).trim_end().to_owned();
        if text.is_empty() || !names_a_frame(&text) {
            let reason = String::from_utf8_lossy(&stderr)
                .lines()
                .map(str::trim)
                .rfind(|l| !l.is_empty())
                .map(str::to_owned)
                .or_else(|| timed_out.then(|| format!("no output within {} s", bound.as_secs_f64())))
                .unwrap_or_else(|| match status {
                    Ok(s) => s.to_string(),
                    Err(e) => e.to_string(),
                });
            return Err(StackError::Empty {
                tool: self.name,
                reason,
            });
        }
        Ok(if timed_out {
            format!(
                "{text}\n[cut: {} did not finish within {} s]",
                self.name,
                bound.as_secs_f64()
            )
        } else {
            text
        })
    }
}

/// Whether a tool's output holds a stack frame (`#0 ...` lines from both tools).
fn names_a_frame(text: &str) -> bool {
    text.lines().any(|l| l.trim_start().starts_with("#0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_search_path_finds_no_tool() {
        assert_eq!(find(OsStr::new("")), None);
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find(dir.path().as_os_str()), None);
    }

    #[test]
    fn the_first_tool_in_order_is_found_where_it_is_executable() {
        let dir = tempfile::tempdir().unwrap();
        let gdb = dir.path().join("gdb");
        std::fs::write(&gdb, "#!/bin/sh\n").unwrap();
        assert_eq!(find(dir.path().as_os_str()), None, "not executable yet");
        std::fs::set_permissions(&gdb, std::fs::Permissions::from_mode(0o755)).unwrap();
        let search = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
        assert_eq!(
            find(&search),
            Some(StackTool {
                name: "gdb",
                path: gdb.clone()
            })
        );
        let eu = dir.path().join("eu-stack");
        std::fs::copy(&gdb, &eu).unwrap();
        assert_eq!(find(&search).unwrap().name, "eu-stack", "eu-stack first");
    }

    /// A fake tool that prints a frame; one that prints nothing names its stderr; one that hangs
    /// is cut at the bound.
    #[test]
    fn output_is_kept_errors_name_the_tool_and_the_bound_holds() {
        let dir = tempfile::tempdir().unwrap();
        let tool = |body: &str| {
            let p = dir.path().join("gdb");
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            find(dir.path().as_os_str()).unwrap()
        };
        let t = tool("echo 'Thread 1'; echo '#0  0x1 in sim_stall_forever ()'");
        let got = t.capture(1, STACK_BOUND).unwrap();
        assert!(got.contains("sim_stall_forever"), "{got}");

        let t = tool("echo 'ptrace: Operation not permitted.' >&2; exit 1");
        let e = t.capture(1, STACK_BOUND).unwrap_err();
        assert_eq!(
            e,
            StackError::Empty {
                tool: "gdb",
                reason: "ptrace: Operation not permitted.".into()
            }
        );

        let t = tool("echo '#0  0x1 in f ()'; exec sleep 60");
        let start = Instant::now();
        let got = t.capture(1, Duration::from_secs(2)).unwrap();
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
        assert!(
            got.contains("#0  0x1 in f ()") && got.contains("[cut: gdb"),
            "{got}"
        );
    }
}
