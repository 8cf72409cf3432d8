//! A hung case's diagnosis as the state machine keeps it (issue 9 item 2): when a running case
//! passes its timeout, before its lane is sent SIGTERM, the lane is asked where it is
//! ([`crate::protocol::ToLane::Where`], answered by the lane's channel reader from its
//! breadcrumb, not by the stuck thread) and, where a stack tool is installed, the process layer
//! captures the native stacks of every lane thread. The lane is ended once both are in, or once
//! [`ends_at`] passes: a lane that cannot answer is still ended in time. The result goes with the
//! timed-out attempt ([`Diagnostics`], kept in the lane's capture).
//!
//! This file owns what a diagnosis has gathered and what it says. It never decides that a case
//! timed out (the clock rules do), never asks or captures anything itself (the state machine asks,
//! the process layer captures) and never blames anyone (the exit handling does).

use std::time::Duration;

use platform_common::driver::DriverCall;

use crate::dispatch::policy::diagnosis::{ends_at, Waiting, ANSWER_WAIT, STACK_BOUND};
use crate::dispatch::policy::KillReason;
use crate::report::model::Diagnostics;

/// The lane's answer to [`crate::protocol::ToLane::Where`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The case its breadcrumb names.
    pub case: Option<String>,
    /// The driver call in flight.
    pub in_call: Option<DriverCall>,
    /// For how long, in ms.
    pub since_ms: Option<u64>,
    /// The case launch in flight or last made.
    pub launch: u64,
    /// The case's launches, when known.
    pub launches: Option<u64>,
}

/// The stack capture of a diagnosis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stacks {
    /// No tool: the breadcrumb alone is reported.
    NoTool,
    /// The tool runs.
    Pending(&'static str),
    /// It finished: the stacks, or why there are none.
    Done(&'static str, Result<String, String>),
}

/// A diagnosis in progress on one lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    /// When it started.
    pub started: Duration,
    /// How the lane is ended afterwards.
    pub reason: KillReason,
    /// The grace between SIGTERM and SIGKILL then.
    pub grace: Duration,
    /// The lane's answer, once in.
    pub answer: Option<Answer>,
    /// The stacks.
    pub stacks: Stacks,
}

/// What a diagnosis says without a stack tool.
pub const NO_TOOL: &str = "no stack tool (eu-stack or gdb) on the stack-tool search path: no native stacks";

impl Diagnosis {
    fn waiting(&self) -> Waiting {
        Waiting {
            started: self.started,
            answer: self.answer.is_none(),
            stacks: matches!(self.stacks, Stacks::Pending(_)),
            stack_bound: STACK_BOUND,
        }
    }

    /// When the lane is ended at the latest.
    pub fn deadline(&self) -> Duration {
        ends_at(&self.waiting()).unwrap_or(self.started)
    }

    /// The record of what was found out, for the attempt of `case`.
    pub fn diagnostics(self, case: Option<&str>) -> Diagnostics {
        let mut d = Diagnostics::default();
        match self.answer {
            Some(a) => {
                d.answered = true;
                d.in_call = a.in_call;
                d.since_ms = a.since_ms;
                d.launch = Some(a.launch);
                d.launches = a.launches;
                if a.case.as_deref() != case {
                    d.notes.push(format!(
                        "the lane's breadcrumb names {} as its running case",
                        a.case.as_deref().unwrap_or("no case")
                    ));
                }
            }
            None => d.notes.push(format!(
                "the lane did not say where it was within {} s",
                ANSWER_WAIT.as_secs_f64()
            )),
        }
        match self.stacks {
            Stacks::NoTool => d.notes.push(NO_TOOL.to_owned()),
            Stacks::Pending(tool) => d.notes.push(format!(
                "{tool} did not report the stacks within {} s",
                STACK_BOUND.as_secs_f64()
            )),
            Stacks::Done(tool, Ok(text)) => {
                d.stacks = Some(text);
                d.stack_tool = Some(tool.to_owned());
            }
            Stacks::Done(_, Err(e)) => d.notes.push(e),
        }
        d
    }
}
