//! The errors of a fault plan: what is wrong with a rule, named on one line.
//!
//! This file owns only the error types; the plan (`plan.rs`) and its parser (`plan_parse.rs`) both
//! build them, and neither is imported here.

use crate::driver::DeviceId;

/// What is wrong with a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanErrorKind {
    /// The rule does not start with `dev=`.
    #[error("expected dev=N:FAULT or dev=*:FAULT")]
    MissingDev,
    /// No `:FAULT` after the card.
    #[error("no fault after the card (expected dev=N:FAULT)")]
    MissingFault,
    /// The card is neither a number nor `*`.
    #[error("card {value:?} is neither a card number nor *")]
    BadCard {
        /// What was written.
        value: String,
    },
    /// The card does not exist in a sim of `cards` cards.
    #[error("card {card} is out of range (the sim has {cards} cards)")]
    CardOutOfRange {
        /// The card.
        card: DeviceId,
        /// How many cards the sim has.
        cards: u32,
    },
    /// Not a fault the grammar knows.
    #[error(
        "unknown fault {name:?} (expected launch_fail@K[=CODE], sync_fail@K=CODE, op_timeout@K, corrupt@K, crash@K, stall@K, \
         poison_after@K, drain=false_negative, force_reset_fail=K, probe_fail=K, dead, init_delay_ms=K, sdma_fault@K or \
         sdma_warmup_fault)"
    )]
    UnknownFault {
        /// What was written.
        name: String,
    },
    /// A known fault written the wrong way (`op_timeout` without `@K`, `dead=1`, ...).
    #[error("{fault} is written {expected}")]
    Syntax {
        /// The fault's name.
        fault: &'static str,
        /// Its form.
        expected: &'static str,
    },
    /// Rules joined by `,` (the separator is `;`).
    #[error("rules are separated by ';', not ',' (write {suggested:?})")]
    CommaSeparator {
        /// The rule text with `;` for `,`.
        suggested: String,
    },
    /// A number that is not a whole number.
    #[error("{what} {value:?} is not a whole number")]
    BadNumber {
        /// What the number is.
        what: &'static str,
        /// What was written.
        value: String,
    },
    /// A count or launch number of 0.
    #[error("{what} must be at least 1 (K counts from 1)")]
    Zero {
        /// What the number is.
        what: &'static str,
    },
    /// A `launch_fail` code that is not a non-zero driver code.
    #[error("launch code {value:?} is not a driver code (a whole number from 1 to 2147483647)")]
    BadCode {
        /// What was written.
        value: String,
    },
    /// `drain=` with something other than `false_negative`.
    #[error("unknown drain mode {value:?} (expected drain=false_negative)")]
    BadDrainMode {
        /// What was written.
        value: String,
    },
    /// A setting given twice for a card.
    #[error("a card it covers already has this setting from rule {other:?}")]
    Duplicate {
        /// The earlier rule.
        other: String,
    },
    /// Two `sdma_fault` rules at the same SDMA copy of a card.
    #[error("rule {other:?} already fires at case SDMA copy {at} on a card it covers")]
    SameSdmaCopy {
        /// The earlier rule.
        other: String,
        /// The copy number.
        at: u64,
    },
    /// Two launch faults at the same launch of a card.
    #[error("rule {other:?} already fires at case launch {at} on a card it covers")]
    SameLaunch {
        /// The earlier rule.
        other: String,
        /// The launch number.
        at: u64,
    },
}

/// A malformed fault plan: names the bad rule and says why, on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad fault rule {rule:?}: {kind}")]
pub struct FaultPlanError {
    /// The rule as written (trimmed).
    pub rule: String,
    /// What is wrong with it.
    pub kind: PlanErrorKind,
}
