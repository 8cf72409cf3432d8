//! What the dispatcher found out about a case it ended for its timeout, before it ended it: the
//! lane's breadcrumb (the driver call in flight, for how long, the case launch) and the native
//! stacks of every lane thread (`attempts[].diagnostics` of `report.json`, flat in the journal's
//! `case_finished`).
//!
//! This file owns that record and its one-line summary (`stuck 10.0 s in
//! rtKernelLaunchWithHandleV2 (launch 3 of 5)`). It never asks a lane nor runs a stack tool (the
//! dispatcher does).

use std::fmt::Write as _;

use platform_common::driver::DriverCall;
use serde::{Deserialize, Serialize};

/// The diagnosis of a timed-out attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// Whether the lane answered the dispatcher's question in time (`false`: the fields of the
    /// breadcrumb are unknown).
    pub answered: bool,
    /// The driver call in flight (CANN's name), `null` when none was (or no answer came).
    pub in_call: Option<DriverCall>,
    /// How long that call had been in flight, in ms.
    pub since_ms: Option<u64>,
    /// The case launch in flight or last made (from 1; 0: none yet), `null` without an answer.
    pub launch: Option<u64>,
    /// How many launches the case makes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<u64>,
    /// The native stacks of every lane thread, as the stack tool printed them (`null`: none).
    pub stacks: Option<String>,
    /// The stack tool that printed them (`eu-stack` or `gdb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_tool: Option<String>,
    /// What could not be found out, and why (no answer in time, no stack tool, a tool that could
    /// not attach).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Diagnostics {
    /// One line: where the case was stuck (`stuck 10.0 s in rtKernelLaunchWithHandleV2 (launch 3
    /// of 5)`), or that the lane did not say.
    pub fn summary(&self) -> String {
        if !self.answered {
            return "the lane did not say where it was stuck".to_owned();
        }
        let mut s = match (self.in_call, self.since_ms) {
            (Some(call), Some(ms)) => format!("stuck {:.1} s in {call}", ms as f64 / 1000.0),
            (Some(call), None) => format!("stuck in {call}"),
            (None, _) => "stuck outside any driver call".to_owned(),
        };
        match (self.launch, self.launches) {
            (Some(0) | None, _) => s.push_str(" (no launch yet)"),
            (Some(k), Some(n)) => {
                let _ = write!(s, " (launch {k} of {n})");
            }
            (Some(k), None) => {
                let _ = write!(s, " (launch {k})");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(
        in_call: Option<DriverCall>,
        since_ms: Option<u64>,
        launch: u64,
        launches: Option<u64>,
    ) -> Diagnostics {
        Diagnostics {
            answered: true,
            in_call,
            since_ms,
            launch: Some(launch),
            launches,
            ..Diagnostics::default()
        }
    }

    #[test]
    fn summaries_say_where_and_which_launch() {
        let rows = [
            (
                d(Some(DriverCall::LaunchAicore), Some(10_000), 3, Some(5)),
                "stuck 10.0 s in rtKernelLaunchWithHandleV2 (launch 3 of 5)",
            ),
            (
                d(
                    Some(DriverCall::SynchronizeStreamWithTimeout),
                    Some(1_250),
                    1,
                    None,
                ),
                "stuck 1.2 s in aclrtSynchronizeStreamWithTimeout (launch 1)",
            ),
            (
                d(None, None, 0, None),
                "stuck outside any driver call (no launch yet)",
            ),
            (Diagnostics::default(), "the lane did not say where it was stuck"),
        ];
        for (diag, want) in rows {
            assert_eq!(diag.summary(), want);
        }
    }

    #[test]
    fn the_four_named_fields_are_always_there() {
        let v = serde_json::to_value(Diagnostics::default()).unwrap();
        for key in ["in_call", "since_ms", "launch", "stacks"] {
            assert!(v.get(key).is_some(), "{key}: {v}");
        }
        let full = d(Some(DriverCall::LaunchAicore), Some(1), 2, Some(3));
        let v = serde_json::to_value(&full).unwrap();
        assert_eq!(v["in_call"], "rtKernelLaunchWithHandleV2");
        assert_eq!(serde_json::from_value::<Diagnostics>(v).unwrap(), full);
    }
}
