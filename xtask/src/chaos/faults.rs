//! The faults a chaos plan draws from: one line per fault of DESIGN section 4.
//!
//! This module owns the table [`FAULTS`]: how each fault is written, what it does to a run (which
//! the plan generator needs to keep one card able to finish, to size `--retries`, and to guess the
//! run's length) and the codes `launch_fail` may carry. Adding a fault to the sim's grammar is one
//! line here (as `poison_after@K` was: the post-case health check makes it the hit case's failed
//! attempt). It never draws a plan (see `plan`).

/// How a fault is written in a plan rule (after `dev=N:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `NAME@K`: at the card's K-th case launch.
    At,
    /// `NAME@K` or `NAME@K=CODE`, the code one of [`LAUNCH_CODES`].
    AtCode,
    /// `NAME@K=CODE`, the code one of [`HARDWARE_CODES`].
    AtHardware,
    /// `NAME@K`: at the card's K-th case SDMA copy (K from 1 to [`SDMA_COPIES_MAX`]).
    AtSdma,
    /// `NAME=K` with K drawn from one of the inclusive ranges, picked uniformly (list a range
    /// twice to draw from it twice as often).
    Count(&'static [(u64, u64)]),
    /// `NAME=VALUE`.
    Value(&'static str),
    /// `NAME` alone.
    Bare,
}

impl Form {
    /// Whether the fault fires at a case launch (two of these may not share a launch of a card).
    pub fn at_launch(self) -> bool {
        matches!(self, Form::At | Form::AtCode | Form::AtHardware)
    }
}

/// What a fault does to a run, as far as the chaos checks and the plan's sizing care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The case it hits gets a failed (device-class) attempt; a retry absorbs it.
    FailsAttempt,
    /// As `FailsAttempt`, and the lane process dies (a crash, or a kill after the case timeout):
    /// it counts towards the lane deaths that quarantine a card.
    KillsLane,
    /// A golden mismatch: the case it hits ends `failed` (class `result`, never retried).
    WrongResult,
    /// Costs force-reset attempts: past 2 on one card, a finalize fails and the lane escalates.
    ResetAttempts,
    /// Every init on the card fails: the card is quarantined.
    Dead,
    /// A hardware code: the case it hits gets a failed (device-class) attempt, retried on another
    /// card, and its card is quarantined at once ("needs service").
    Hardware,
    /// Slows every init of the card by K ms.
    InitDelay,
    /// Changes what the bounded drain says; the runner never trusts it anyway.
    Drain,
    /// The card's next SDMA warm-up faults and wedges its SDMA engine: that init fails, and so
    /// does a fresh lane's SDMA init, so the card is quarantined once it gets SDMA work (no case
    /// gets an attempt for it: an init failure is the card's).
    SdmaInit,
}

/// One fault of the sim's plan grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultKind {
    /// Its name in the grammar.
    pub name: &'static str,
    /// How it is written.
    pub form: Form,
    /// What it does.
    pub effect: Effect,
    /// Roughly how much longer a run is when it fires, in ms (for the kill moment and the bound).
    pub cost_ms: u64,
}

const fn fault(name: &'static str, form: Form, effect: Effect, cost_ms: u64) -> FaultKind {
    FaultKind {
        name,
        form,
        effect,
        cost_ms,
    }
}

/// The case timeout of every chaos run, in seconds: short, so a `stall` ends quickly.
pub const CASE_TIMEOUT_S: u64 = 5;

/// Force-reset attempts a `force_reset_fail` / `probe_fail` costs: 3 or more fail a whole finalize.
const RESETS: &[(u64, u64)] = &[(1, 4)];

/// Init delays in ms: three in four a slow init, one in four an init past the case timeout (which
/// the watchdog must not blame on a case: issue 8 item 3).
const INIT_DELAYS: &[(u64, u64)] = &[(20, 300), (20, 300), (20, 300), (5_500, 8_000)];

/// A `stall` costs the case timeout, its diagnosis (the breadcrumb, and the native stacks where
/// a stack tool is installed: at most 5.5 s), the 2 s grace before SIGKILL, and the replacement
/// lane.
const STALL_MS: u64 = CASE_TIMEOUT_S * 1000 + 5_500 + 2_500;

/// The largest K of a drawn `sdma_fault@K`: the built-in suite's `SdmaCopy` has 2 cases, and a
/// card's copies are its share of them (retries included).
pub const SDMA_COPIES_MAX: u64 = 2;

/// An `sdma_fault` costs its case's failed attempt, the SDMA handoff wait before the one force
/// reset (on the sim `max(100 ms, op-execute 500 ms + 50 ms)`; behind `libsim_acl.so` the
/// real-card scale, at least 10 s) and the retry.
const SDMA_FAULT_MS: u64 = 1_500;

/// Every fault of DESIGN section 4, one line each.
#[rustfmt::skip]
pub const FAULTS: &[FaultKind] = &[
    fault("launch_fail",      Form::AtCode,                  Effect::FailsAttempt,  200),
    fault("op_timeout",       Form::At,                      Effect::FailsAttempt,  2_500),
    fault("corrupt",          Form::At,                      Effect::WrongResult,   0),
    fault("crash",            Form::At,                      Effect::KillsLane,     500),
    fault("stall",            Form::At,                      Effect::KillsLane,     STALL_MS),
    fault("poison_after",     Form::At,                      Effect::FailsAttempt,  200),
    fault("drain",            Form::Value("false_negative"), Effect::Drain,         0),
    fault("force_reset_fail", Form::Count(RESETS),           Effect::ResetAttempts, 1_000),
    fault("probe_fail",       Form::Count(RESETS),           Effect::ResetAttempts, 1_000),
    fault("dead",             Form::Bare,                    Effect::Dead,          500),
    fault("init_delay_ms",    Form::Count(INIT_DELAYS),      Effect::InitDelay,     0),
    fault("sync_fail",        Form::AtHardware,              Effect::Hardware,      500),
];

/// The SDMA faults (issue 22), drawn apart from [`FAULTS`] on a stream of their own, so the
/// plans a seed drew before them stay the same plans with at most one SDMA rule added.
#[rustfmt::skip]
pub const SDMA_FAULTS: &[FaultKind] = &[
    fault("sdma_fault",        Form::AtSdma,                 Effect::FailsAttempt,  SDMA_FAULT_MS),
    fault("sdma_warmup_fault", Form::Bare,                   Effect::SdmaInit,      500),
];

/// Every fault a plan may draw: [`FAULTS`], then [`SDMA_FAULTS`].
pub fn every_fault() -> impl Iterator<Item = &'static FaultKind> {
    FAULTS.iter().chain(SDMA_FAULTS)
}

/// The codes a drawn `sync_fail` carries: the card-level hardware faults of `rt_error_codes.h`
/// (`platform_common::CodeClass::Hardware`).
pub const HARDWARE_CODES: &[u32] = &[507054, 507053, 507010, 507056, 507901];

/// The codes a drawn `launch_fail` carries (`None`: the default, 207001). Never a sticky-context
/// code (507899, HAL rc 62): an attempt failing with one of those is what the checks call a
/// cascade, and a launch fault that returns one on purpose would read as one.
pub const LAUNCH_CODES: &[Option<u32>] = &[
    None,
    Some(207001),
    Some(507014),
    Some(507015),
    Some(507017),
    Some(507018),
    Some(507046),
];

/// The fault named `name`.
#[cfg(test)]
pub fn by_name(name: &str) -> Option<&'static FaultKind> {
    every_fault().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_of_the_sim_grammar_is_in_the_table_once() {
        for name in [
            "launch_fail",
            "op_timeout",
            "corrupt",
            "crash",
            "stall",
            "poison_after",
            "drain",
            "force_reset_fail",
            "probe_fail",
            "dead",
            "init_delay_ms",
            "sync_fail",
            "sdma_fault",
            "sdma_warmup_fault",
        ] {
            assert_eq!(every_fault().filter(|f| f.name == name).count(), 1, "{name}");
        }
        assert!(by_name("nope").is_none());
        assert!(by_name("stall").unwrap().form.at_launch());
        assert!(!by_name("dead").unwrap().form.at_launch());
        assert!(
            !by_name("sdma_fault").unwrap().form.at_launch(),
            "its K counts SDMA copies, not launches"
        );
    }

    #[test]
    fn hardware_codes_are_the_tables_hardware_class() {
        for &c in HARDWARE_CODES {
            let code = platform_common::Code::acl(i32::try_from(c).unwrap());
            assert!(code.is_hardware(), "{c}");
        }
        let table = platform_common::error::CODE_TABLE
            .iter()
            .filter(|r| r.class == platform_common::error::CodeClass::Hardware)
            .count();
        assert_eq!(table, HARDWARE_CODES.len(), "every hardware code is drawn");
    }

    #[test]
    fn launch_codes_are_never_sticky_context_codes() {
        assert!(LAUNCH_CODES.iter().flatten().all(|&c| c != 507899 && c != 62));
    }
}
