//! What a lane wrote on its stdout and stderr during one attempt, and what the device runtime
//! logged in the lane's private `ASCEND_PROCESS_LOG_PATH` meanwhile: kept for a failed, crashed
//! or timed-out attempt (never for a passing one), each stream cut to its last [`CAPTURE_LIMIT`]
//! bytes, with the number of bytes dropped before them; and, for an attempt the dispatcher ended
//! for its timeout, the diagnosis taken before the kill ([`Diagnostics`]).
//!
//! This file owns the attempt's `stdout` / `stderr` / `device_log` fields of `report.json` and
//! the journal (flat on the attempt: `stdout`, `stdout_dropped_bytes`, `stderr`,
//! `stderr_dropped_bytes`, `device_log`, `device_log_dropped_bytes`, `diagnostics`). It never
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
    /// The last bytes the device runtime logged under the lane's `ASCEND_PROCESS_LOG_PATH` during
    /// the attempt (its plog files, in name order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_log: Option<String>,
    /// How many earlier bytes of the device log were dropped (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub device_log_dropped_bytes: u64,
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
        self.stdout.is_none() && self.stderr.is_none() && self.device_log.is_none()
    }

    /// Stdout as JUnit's `system-out` shows it: a first line saying how many bytes were dropped
    /// when it was cut.
    pub fn junit_stdout(&self) -> Option<String> {
        junit_text(self.stdout.as_deref(), self.stdout_dropped_bytes)
    }

    /// Stderr as JUnit's `system-err` shows it (see [`junit_stdout`](Self::junit_stdout)), then
    /// the device log under a line that introduces it.
    pub fn junit_stderr(&self) -> Option<String> {
        let err = junit_text(self.stderr.as_deref(), self.stderr_dropped_bytes);
        let log = junit_text(self.device_log.as_deref(), self.device_log_dropped_bytes)
            .map(|log| format!("[cardguard: device log (ASCEND_PROCESS_LOG_PATH)]\n{log}"));
        match (err, log) {
            (Some(err), Some(log)) if err.ends_with('\n') => Some(format!("{err}{log}")),
            (Some(err), Some(log)) => Some(format!("{err}\n{log}")),
            (err, log) => err.or(log),
        }
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
            ..Default::default()
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

    #[test]
    fn the_device_log_is_flat_and_follows_stderr_in_junit() {
        let log = AttemptOutput {
            stderr: Some("warn\n".into()),
            device_log: Some("[ERROR] RUNTIME(7,lane):x\n".into()),
            device_log_dropped_bytes: 10,
            ..Default::default()
        };
        assert!(!log.is_empty());
        let v = serde_json::to_value(&log).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"stderr": "warn\n", "device_log": "[ERROR] RUNTIME(7,lane):x\n",
                "device_log_dropped_bytes": 10})
        );
        assert_eq!(serde_json::from_value::<AttemptOutput>(v).unwrap(), log);
        assert_eq!(
            log.junit_stderr().unwrap(),
            "warn\n[cardguard: device log (ASCEND_PROCESS_LOG_PATH)]\n\
             [cardguard: 10 earlier bytes dropped; the last 26 follow]\n[ERROR] RUNTIME(7,lane):x\n"
        );
        let only_log = AttemptOutput {
            device_log: Some("l".into()),
            ..Default::default()
        };
        assert_eq!(
            only_log.junit_stderr().unwrap(),
            "[cardguard: device log (ASCEND_PROCESS_LOG_PATH)]\nl"
        );
    }
}
