//! DESIGN section 5 steps 3 and 4 inside a lane: whether the post-case health check runs after a
//! case (`--health-check`), what a case's result means for the pooled worker (keep it, or retire
//! it: close = force reset, and the next case rebuilds it), and when the lane gives up on its card
//! in-process and escalates to a fresh process.
//!
//! This file owns those decisions as pure functions of what happened. It never closes a worker,
//! writes a sink or exits (the session does, with what these return).

use std::fmt::Display;

use platform_common::{Code, DeviceId, FailureClass};

use crate::report::model::ErrorReport;

pub use crate::settings::HealthCheck;

/// Whether the post-case health check runs after a case: never after a case that touched no
/// device, nor when the worker is retired anyway (its runner unusable, or a device-runtime
/// error: the close force-resets and probes the card); otherwise as `mode` says. `error` is the
/// raw attempt's, before an expectation is judged.
pub fn check_after(mode: HealthCheck, touched: bool, error: Option<&ErrorReport>, unusable: bool) -> bool {
    if !touched || unusable {
        return false;
    }
    match (mode, error.map(|e| e.class)) {
        (_, Some(FailureClass::DeviceRuntime)) | (HealthCheck::Off, _) => false,
        (HealthCheck::Each, _) => true,
        (HealthCheck::OnFailure, class) => class.is_some(),
    }
}

/// What happens to the pooled worker after a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolStep {
    /// Keep it for the next case.
    Keep,
    /// Retire it: close (which force-resets an unusable card), rebuilt by the next case.
    Retire,
}

/// Step 3: a device-runtime error retires the pooled worker, and so does a runner left marked
/// unusable whatever the attempt says; nothing else does (a result mismatch, a usage or an
/// infrastructure error, a panic leave the worker as it is), except `always`: a worker created
/// with SDMA is retired after every case, pass or not (upstream drops a worker that touched SDMA
/// from its pool; `--keep-sdma-workers` keeps it, see [`retire_always`]). `error` is the raw
/// attempt's, before an expectation is judged: a device fault a case expected still retires the
/// worker.
pub fn after_case(error: Option<&ErrorReport>, unusable: bool, always: bool) -> PoolStep {
    match error {
        _ if unusable || always => PoolStep::Retire,
        Some(e) if e.class == FailureClass::DeviceRuntime => PoolStep::Retire,
        _ => PoolStep::Keep,
    }
}

/// Whether a pooled worker is retired after every case, pass or not: a worker created with SDMA
/// (`sdma`), unless the run keeps them (`keep_sdma`, `--keep-sdma-workers`).
pub fn retire_always(sdma: bool, keep_sdma: bool) -> bool {
    sdma && !keep_sdma
}

/// When a close happened relative to the case the lane is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseAt {
    /// Before the current case started (a runtime switch, or making room for a standalone or
    /// multi-card case): the current case goes to the sink too.
    BeforeCase,
    /// After the current case finished (a retire, a standalone case's own close): the current
    /// case has its attempt; only the ones after it go to the sink.
    AfterCase,
}

/// The card cannot be recovered in this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    /// Why, for the sink and the logs.
    pub reason: String,
    /// The code of the error behind it, if one is known.
    pub code: Option<Code>,
    /// Whether the current case is among the remaining ones (it did not run).
    pub include_current: bool,
}

/// What the lane does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Go on with the next case.
    Next,
    /// Write the remaining cases to the sink and exit with the "needs fresh process" code.
    Escalate(Escalation),
}

/// Step 4 after a close: a close the probe confirmed (or no worker to close) goes on; a close
/// that left the card unusable (every reset attempt failed to confirm) escalates.
pub fn after_close<T, E: Display>(closed: Option<&Result<T, E>>, at: CloseAt) -> Step {
    match closed {
        Some(Err(e)) => Step::Escalate(Escalation {
            reason: e.to_string(),
            code: None,
            include_current: at == CloseAt::BeforeCase,
        }),
        Some(Ok(_)) | None => Step::Next,
    }
}

/// Step 4 after a failed (re)build: the lane escalates with the current case (it never ran),
/// naming the first card that failed. A card's init failure is reported as that card's health
/// event, never as an attempt.
pub fn after_init_failure(failures: &[(DeviceId, String, Option<Code>)]) -> Step {
    let (reason, code) = failures.first().map_or_else(
        || ("a worker failed to init".to_owned(), None),
        |(device, why, code)| (format!("card {device}: {why}"), *code),
    );
    Step::Escalate(Escalation {
        reason,
        code,
        include_current: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::error::codes;

    /// Step 3: which results retire the pooled worker.
    #[test]
    fn pool_heal_table() {
        #[rustfmt::skip]
        let rows: &[(&str, Option<FailureClass>, bool, bool, PoolStep)] = &[
            // what,                                         raw class,                          unusable, SDMA, step
            ("a pass keeps the worker",                      None,                               false, false, PoolStep::Keep),
            ("a device-runtime error retires it",            Some(FailureClass::DeviceRuntime),  true,  false, PoolStep::Retire),
            ("a device-runtime refusal retires it",          Some(FailureClass::DeviceRuntime),  false, false, PoolStep::Retire),
            ("a result mismatch never retires anything",     Some(FailureClass::Result),         false, false, PoolStep::Keep),
            ("a usage error keeps it",                       Some(FailureClass::Usage),          false, false, PoolStep::Keep),
            ("an infrastructure error keeps it",             Some(FailureClass::Infrastructure), false, false, PoolStep::Keep),
            ("a pass on an unusable runner retires it",      None,                               true,  false, PoolStep::Retire),
            ("a panic on an unusable runner retires it",     Some(FailureClass::Result),         true,  false, PoolStep::Retire),
            ("an SDMA worker is retired after a pass",       None,                               false, true,  PoolStep::Retire),
            ("and after a result mismatch",                  Some(FailureClass::Result),         false, true,  PoolStep::Retire),
        ];
        for &(what, class, unusable, always, want) in rows {
            let e = class.map(|c| ErrorReport::new(c, "x"));
            assert_eq!(after_case(e.as_ref(), unusable, always), want, "{what}");
        }
        assert!(retire_always(true, false), "an SDMA worker is retired by default");
        assert!(!retire_always(true, true), "--keep-sdma-workers keeps it");
        assert!(!retire_always(false, false), "a compute worker is pooled");
    }

    /// When the post-case health check runs.
    #[test]
    fn health_check_table() {
        use HealthCheck::{Each, Off, OnFailure};
        type Row = (&'static str, HealthCheck, bool, Option<FailureClass>, bool, bool);
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // what,                                                mode,      touched, raw class,                          unusable, check
            ("each: after a passing case",                          Each,      true,  None,                                false, true),
            ("each: after a mismatch (or an expected one)",         Each,      true,  Some(FailureClass::Result),          false, true),
            ("each: after a usage failure",                         Each,      true,  Some(FailureClass::Usage),           false, true),
            ("each: after an infrastructure failure",               Each,      true,  Some(FailureClass::Infrastructure),  false, true),
            ("each: not after a device error (retired anyway)",     Each,      true,  Some(FailureClass::DeviceRuntime),   false, false),
            ("each: not on an unusable runner (retired anyway)",    Each,      true,  None,                                true,  false),
            ("each: not after a case that touched no device",       Each,      false, None,                                false, false),
            ("on-failure: not after a passing case",                OnFailure, true,  None,                                false, false),
            ("on-failure: after a mismatch",                        OnFailure, true,  Some(FailureClass::Result),          false, true),
            ("on-failure: not after a device error",                OnFailure, true,  Some(FailureClass::DeviceRuntime),   false, false),
            ("on-failure: not after a case that touched no device", OnFailure, false, Some(FailureClass::Result),          false, false),
            ("off: never after a pass",                             Off,       true,  None,                                false, false),
            ("off: never after a mismatch",                         Off,       true,  Some(FailureClass::Result),          false, false),
        ];
        for &(what, mode, touched, class, unusable, want) in rows {
            let e = class.map(|c| ErrorReport::new(c, "x"));
            assert_eq!(check_after(mode, touched, e.as_ref(), unusable), want, "{what}");
        }
        assert_eq!(HealthCheck::default(), Each);
        for mode in [Each, OnFailure, Off] {
            let parsed = <HealthCheck as clap::ValueEnum>::from_str(mode.name(), false).unwrap();
            assert_eq!(parsed, mode, "the flag's spelling reads back");
        }
    }

    /// Step 4: when a close or a build escalates, and whether the current case goes with it.
    #[test]
    fn escalation_table() {
        let ok: Result<(), String> = Ok(());
        let failed: Result<(), String> = Err("reset not confirmed".into());
        type Row<'a> = (
            &'static str,
            Option<&'a Result<(), String>>,
            CloseAt,
            Option<bool>,
        );
        #[rustfmt::skip]
        let rows: Vec<Row<'_>> = vec![
            // what,                                          close,         at,                     escalates (with the current case)
            ("no worker to close",                            None,          CloseAt::BeforeCase,   None),
            ("a confirmed reset: the next case rebuilds",     Some(&ok),     CloseAt::AfterCase,    None),
            ("a retire that did not recover the card",        Some(&failed), CloseAt::AfterCase,    Some(false)),
            ("a switch or make-room close that did not",      Some(&failed), CloseAt::BeforeCase,   Some(true)),
            ("a confirmed close before a standalone case",    Some(&ok),     CloseAt::BeforeCase,   None),
        ];
        for (what, closed, at, want) in rows {
            let got = match after_close(closed, at) {
                Step::Next => None,
                Step::Escalate(e) => {
                    assert_eq!(e.reason, "reset not confirmed", "{what}");
                    Some(e.include_current)
                }
            };
            assert_eq!(got, want, "{what}");
        }
        let step = after_init_failure(&[
            (
                1,
                "507899 at create stream".into(),
                Some(codes::RT_DRV_INTERNAL_ERROR),
            ),
            (2, "later".into(), None),
        ]);
        assert_eq!(
            step,
            Step::Escalate(Escalation {
                reason: "card 1: 507899 at create stream".into(),
                code: Some(codes::RT_DRV_INTERNAL_ERROR),
                include_current: true,
            }),
            "a failed rebuild escalates with the case that never ran"
        );
    }
}
