//! What a lane wrote on its stdout and stderr during one attempt: kept for a failed, crashed or
//! timed-out attempt (never for a passing one), each stream cut to its last [`CAPTURE_LIMIT`]
//! bytes, with the number of bytes dropped before them; and, for an attempt the dispatcher ended
//! for its timeout, the diagnosis taken before the kill ([`Diagnostics`]).
//!
//! This file owns the attempt's `stdout` / `stderr` fields of `report.json` and the journal (flat
//! on the attempt: `stdout`, `stdout_dropped_bytes`, `stderr`, `stderr_dropped_bytes`,
//! `diagnostics`). It never
//! captures anything (the dispatcher does) and never renders JUnit (the writer does).

use serde::{Deserialize, Serialize};

use super::diagnostics::Diagnostics;

/// The most bytes kept of one stream of one attempt: 64 KiB, the last ones.
pub const CAPTURE_LIMIT: usize = 64 * 1024;

/// One attempt's captured output. Empty (every field absent) for a passing attempt and for an
/// attempt whose lane wrote nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptOutput {
    /// The last bytes of the lane's stdout during the attempt (as UTF-8, invalid bytes replaced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// How many earlier bytes of stdout were dropped (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stdout_dropped_bytes: u64,
    /// The last bytes of the lane's stderr during the attempt (the lane's own warnings included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// How many earlier bytes of stderr were dropped (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stderr_dropped_bytes: u64,
    /// Where the attempt was stuck when the dispatcher ended it for its timeout (absent
    /// otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Box<Diagnostics>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl AttemptOutput {
    /// Whether nothing was captured.
    pub fn is_empty(&self) -> bool {
        self.stdout.is_none() && self.stderr.is_none()
    }

    /// Stdout as JUnit's `system-out` shows it: a first line saying how many bytes were dropped
    /// when it was cut.
    pub fn junit_stdout(&self) -> Option<String> {
        junit_text(self.stdout.as_deref(), self.stdout_dropped_bytes)
    }

    /// Stderr as JUnit's `system-err` shows it (see [`junit_stdout`](Self::junit_stdout)).
    pub fn junit_stderr(&self) -> Option<String> {
        junit_text(self.stderr.as_deref(), self.stderr_dropped_bytes)
    }
}

fn junit_text(text: Option<&str>, dropped: u64) -> Option<String> {
    let text = text?;
    Some(if dropped == 0 {
        text.to_owned()
    } else {
        format!(
            "[cardguard: {dropped} earlier bytes dropped; the last {} follow]\n{text}",
            text.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_fields_are_flat_and_absent_when_empty() {
        let empty = AttemptOutput::default();
        assert!(empty.is_empty());
        assert_eq!(serde_json::to_value(&empty).unwrap(), serde_json::json!({}));
        let cut = AttemptOutput {
            stdout: Some("tail".into()),
            stdout_dropped_bytes: 70_000,
            stderr: Some("warn".into()),
            stderr_dropped_bytes: 0,
            diagnostics: None,
        };
        let v = serde_json::to_value(&cut).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"stdout": "tail", "stdout_dropped_bytes": 70_000, "stderr": "warn"})
        );
        assert_eq!(serde_json::from_value::<AttemptOutput>(v).unwrap(), cut);
        assert_eq!(
            cut.junit_stdout().unwrap(),
            "[cardguard: 70000 earlier bytes dropped; the last 4 follow]\ntail"
        );
        assert_eq!(cut.junit_stderr().unwrap(), "warn");
        assert_eq!(empty.junit_stdout(), None);
    }
}
