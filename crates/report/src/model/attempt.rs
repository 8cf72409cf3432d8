//! One attempt of a case, why it failed, and the case that holds its attempts.
//!
//! This file owns the attempt records of `report.json` (`cases[].attempts[]`) and the error
//! report an attempt carries, with its typed call and code (its captured output is `output`'s). It never derives a verdict (see
//! `outcome`) and never decides whether an attempt is retried (the dispatcher's policy does).

use std::fmt;

use platform_common::driver::{DeviceId, DriverCall};
use platform_common::health::Capability;
use platform_common::{Code, DriverError, FailureClass};
use serde::{Deserialize, Serialize};

use super::outcome::{AttemptOutcome, Outcome};
use super::output::AttemptOutput;

/// Why an attempt failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReport {
    /// `device_runtime`, `result`, `infrastructure` or `usage`.
    pub class: FailureClass,
    /// The driver call that failed, when a call failed (serialised and shown with CANN's name,
    /// e.g. `aclrtSynchronizeStreamWithTimeout`).
    pub call: Option<DriverCall>,
    /// The code, with its space (`{"space": "acl", "raw": 507000}`, HAL rc 62 is
    /// `{"space": "hal", "raw": 62}`), when a call failed.
    pub code: Option<Code>,
    /// The code's symbolic name, when known.
    pub name: Option<String>,
    /// A message for people.
    pub message: String,
    /// What the runtime itself said of the failed call (`aclGetRecentErrMsg`), when it said
    /// anything. Absent: no message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_message: Option<String>,
    /// The post-case health check found it (`--health-check`): the case's own calls all
    /// succeeded and the card was left poisoned after them. Absent: `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub post_case_check: bool,
    /// The card's capability the failure was met in, when the runner knows it (`sdma`: an SDMA
    /// warm-up at init or the SDMA probe; `compute`: the rest of an init or probe). Absent:
    /// not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Capability>,
}

impl ErrorReport {
    /// An error with no driver call behind it (golden mismatch, lane crash, timeout, ...).
    pub fn new(class: FailureClass, message: impl Into<String>) -> Self {
        Self {
            class,
            call: None,
            code: None,
            name: None,
            message: message.into(),
            runtime_message: None,
            post_case_check: false,
            capability: None,
        }
    }

    /// A failed driver call; the class follows from its code.
    pub fn from_driver(err: &DriverError, message: impl Into<String>) -> Self {
        Self {
            class: err.class(),
            call: Some(err.call),
            code: Some(err.code),
            name: Some(err.code.name().to_owned()),
            message: message.into(),
            runtime_message: err.runtime_message.map(|m| m.as_str().to_owned()),
            post_case_check: false,
            capability: None,
        }
    }
}

impl ErrorReport {
    /// The same error naming the capability it was met in.
    pub fn with_capability(mut self, capability: Capability) -> Self {
        self.capability = Some(capability);
        self
    }
}

impl fmt::Display for ErrorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] ", self.class)?;
        if let Some(call) = &self.call {
            write!(f, "{call}: ")?;
        }
        if let Some(code) = self.code {
            // The code's own form: `507000 (NAME)` for ACL, `rc=62 (NAME)` for HAL.
            write!(f, "{code}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(said) = &self.runtime_message {
            // The runtime's words on the same line (they may span several).
            let said: Vec<&str> = said.split_whitespace().collect();
            write!(f, " (runtime: {})", said.join(" "))?;
        }
        Ok(())
    }
}

/// One attempt of a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// The card it ran on; `null` when the case never reached a card (every card quarantined).
    pub device: Option<DeviceId>,
    /// The lane process that ran it; `null` when it never reached a lane.
    pub pid: Option<u32>,
    /// What happened.
    pub outcome: AttemptOutcome,
    /// Wall time of the attempt.
    pub duration_ms: u64,
    /// When it started, in ms since the run started (for the timeline).
    #[serde(default)]
    pub started_ms: u64,
    /// Why it failed; `null` when it passed.
    pub error: Option<ErrorReport>,
    /// What the lane wrote during a failed attempt (`stdout`, `stderr`, flat on the attempt).
    #[serde(flatten)]
    pub output: AttemptOutput,
}

/// One selected case and everything that happened to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseReport {
    /// `Class::case`.
    pub id: String,
    /// The class.
    pub class: String,
    /// The runtime it runs under.
    pub runtime: String,
    /// The final verdict, derived from `attempts` and `skip_reason` by [`verdict`](crate::model::verdict).
    pub outcome: Outcome,
    /// Why it was skipped; `null` unless skipped.
    pub skip_reason: Option<String>,
    /// Every attempt, in order.
    pub attempts: Vec<Attempt>,
}

impl CaseReport {
    /// The case's name after `Class::`.
    pub fn name(&self) -> &str {
        self.id
            .strip_prefix(&self.class)
            .and_then(|s| s.strip_prefix("::"))
            .unwrap_or(&self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::error::codes;

    #[test]
    fn case_name_strips_the_class() {
        let c = CaseReport {
            id: "Cls::one".into(),
            class: "Cls".into(),
            runtime: "rt".into(),
            outcome: Outcome::Passed,
            skip_reason: None,
            attempts: vec![],
        };
        assert_eq!(c.name(), "one");
    }

    #[test]
    fn codes_keep_their_space_in_json_and_in_text() {
        let acl = DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR);
        let hal = DriverError::new(DriverCall::HalResMap, codes::HAL_NO_PROCESS);
        let a = ErrorReport::from_driver(&acl, "op timeout");
        let h = ErrorReport::from_driver(&hal, "sticky");
        let ja = serde_json::to_value(&a).unwrap();
        let jh = serde_json::to_value(&h).unwrap();
        assert_eq!(ja["code"], serde_json::json!({"space": "acl", "raw": 507000}));
        assert_eq!(jh["code"], serde_json::json!({"space": "hal", "raw": 62}));
        assert_eq!(ja["call"], "aclrtSynchronizeStreamWithTimeout");
        assert_eq!(serde_json::from_value::<ErrorReport>(jh).unwrap(), h);
        assert!(
            a.to_string()
                .contains("aclrtSynchronizeStreamWithTimeout: 507000 ("),
            "{a}"
        );
        assert!(h.to_string().contains("halResMap: rc=62 ("), "{h}");
    }

    #[test]
    fn the_runtime_message_is_kept_in_json_and_shown_on_one_line() {
        let plain = DriverError::new(DriverCall::SynchronizeStreamWithTimeout, codes::RT_INTERNAL_ERROR);
        let said = plain.with_runtime_message("EE9999: Inner Error!\n   stream sync failed");
        let a = ErrorReport::from_driver(&said, "op timeout");
        let j = serde_json::to_value(&a).unwrap();
        assert_eq!(
            j["runtime_message"],
            "EE9999: Inner Error!\n   stream sync failed"
        );
        assert_eq!(serde_json::from_value::<ErrorReport>(j).unwrap(), a);
        assert!(
            a.to_string()
                .ends_with("op timeout (runtime: EE9999: Inner Error! stream sync failed)"),
            "{a}"
        );
        let none = ErrorReport::from_driver(&plain, "op timeout");
        let j = serde_json::to_value(&none).unwrap();
        assert!(j.get("runtime_message").is_none(), "{j}");
        assert!(!none.to_string().contains("runtime:"), "{none}");
    }
}
