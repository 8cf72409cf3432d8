//! What the compiler printed, per source: a [`cc::BuildMessageLogger`] that keeps every line of
//! stderr `cc` forwards and every command that failed, keyed by the kernel source on the
//! command line.
//!
//! This file owns attributing `cc`'s messages to our sources; it never decides whether a build
//! failed (`cc`'s result does) and never prints anything.

use std::any::Any;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use cc::{BuildMessage, BuildMessageKind, BuildMessageLogger};

/// The messages of one `cc` build, by source.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    sources: Vec<PathBuf>,
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// (source index, line) of every stderr line of a command naming that source.
    lines: Vec<(Option<usize>, String)>,
    /// Sources whose compile command failed, in the order reported.
    failed: Vec<Option<usize>>,
}

impl Messages {
    /// A logger for a build of `sources`.
    pub(crate) fn new(sources: &[PathBuf]) -> Self {
        Self {
            sources: sources.to_vec(),
            seen: Mutex::default(),
        }
    }

    fn source_of(&self, cmd: &Command) -> Option<usize> {
        cmd.get_args()
            .find_map(|a| self.sources.iter().position(|s| s.as_os_str() == a))
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Everything the compiler printed about `source` (warnings on success, errors on failure).
    pub(crate) fn lines_of(&self, source: &Path) -> String {
        let index = self.sources.iter().position(|s| s == source);
        self.seen()
            .lines
            .iter()
            .filter(|(s, _)| *s == index && index.is_some())
            .map(|(_, line)| format!("{line}\n"))
            .collect()
    }

    /// Every stderr line that names none of the sources (e.g. a compiler that failed to start).
    pub(crate) fn other_lines(&self) -> String {
        self.seen()
            .lines
            .iter()
            .filter(|(s, _)| s.is_none())
            .map(|(_, line)| format!("{line}\n"))
            .collect()
    }

    /// The first source whose compile command exited unsuccessfully, if any did.
    pub(crate) fn first_failed(&self) -> Option<PathBuf> {
        let failed = self.seen().failed.iter().flatten().next().copied();
        failed.map(|i| self.sources[i].clone())
    }
}

impl BuildMessageLogger for Messages {
    fn log(&self, kind: BuildMessageKind, msg: BuildMessage<'_>, extra: &dyn Any) {
        let Some(cmd) = extra.downcast_ref::<Command>() else {
            return;
        };
        let source = self.source_of(cmd);
        match kind {
            BuildMessageKind::StderrForwarding => self.seen().lines.push((source, msg.to_string())),
            BuildMessageKind::CommandFailed {
                is_detection_cmd: false,
                ..
            } => self.seen().failed.push(source),
            _ => {}
        }
    }
}
