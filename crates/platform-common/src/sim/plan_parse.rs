//! Reading a fault plan from text, and the one-line errors that name the bad rule.
//!
//! Grammar: rules separated by `;` (empty rules and surrounding whitespace are tolerated), each
//! `dev=N:FAULT` or `dev=*:FAULT`, where FAULT is one of `launch_fail@K[=CODE]`, `op_timeout@K`,
//! `corrupt@K`, `crash@K`, `stall@K`, `drain=false_negative`, `force_reset_fail=K`,
//! `probe_fail=K`, `dead`, `init_delay_ms=K`. K is a whole number from 1. A card may carry any
//! number of rules, but two launch faults may not fire at the same launch of a card and a setting
//! may not be given twice for a card.

use std::str::FromStr;

use super::plan::{CardSel, Fault, FaultPlan, FaultRule};
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
        "unknown fault {name:?} (expected launch_fail@K[=CODE], op_timeout@K, corrupt@K, crash@K, stall@K, \
         drain=false_negative, force_reset_fail=K, probe_fail=K, dead or init_delay_ms=K)"
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

impl FromStr for FaultPlan {
    type Err = FaultPlanError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut plan = FaultPlan::default();
        for text in s.split(';').map(str::trim).filter(|t| !t.is_empty()) {
            let rule = parse_rule(text).map_err(|kind| FaultPlanError {
                rule: text.to_owned(),
                kind,
            })?;
            plan.push_checked(rule, text)?;
        }
        Ok(plan)
    }
}

impl FaultPlan {
    /// Parses `text` and checks every `dev=N` against a sim of `cards` cards.
    pub fn parse_for_cards(text: &str, cards: u32) -> Result<Self, FaultPlanError> {
        let plan: FaultPlan = text.parse()?;
        plan.check_cards(cards)?;
        Ok(plan)
    }
}

fn parse_rule(text: &str) -> Result<FaultRule, PlanErrorKind> {
    let rest = text.strip_prefix("dev=").ok_or(PlanErrorKind::MissingDev)?;
    let (card, fault) = rest.split_once(':').ok_or(PlanErrorKind::MissingFault)?;
    let card = match card.trim() {
        "*" => CardSel::All,
        c => CardSel::One(
            whole_number(c)
                .and_then(|n| DeviceId::try_from(n).ok())
                .ok_or_else(|| PlanErrorKind::BadCard { value: c.to_owned() })?,
        ),
    };
    let fault = fault.trim();
    if fault.is_empty() {
        return Err(PlanErrorKind::MissingFault);
    }
    Ok(FaultRule {
        card,
        fault: parse_fault(fault)?,
    })
}

fn parse_fault(text: &str) -> Result<Fault, PlanErrorKind> {
    let end = text.find(['@', '=']).unwrap_or(text.len());
    let (name, rest) = (text[..end].trim(), &text[end..]);
    let at = rest.strip_prefix('@');
    let eq = rest.strip_prefix('=');
    let launch = |fault: &'static str| -> Result<u64, PlanErrorKind> {
        let syntax = PlanErrorKind::Syntax {
            fault,
            expected: at_form(fault),
        };
        match at {
            Some(k) if !k.contains('=') => count(k, "case launch number"),
            _ => Err(syntax),
        }
    };
    let setting = |fault: &'static str, what: &'static str| -> Result<u64, PlanErrorKind> {
        let v = eq.ok_or(PlanErrorKind::Syntax {
            fault,
            expected: eq_form(fault),
        })?;
        count(v, what)
    };
    match name {
        "launch_fail" => {
            let at = at.ok_or(PlanErrorKind::Syntax {
                fault: "launch_fail",
                expected: "launch_fail@K[=CODE]",
            })?;
            let (k, code) = match at.split_once('=') {
                Some((k, code)) => (k, Some(code)),
                None => (at, None),
            };
            let at = count(k, "case launch number")?;
            let code = code.map(parse_code).transpose()?;
            Ok(Fault::LaunchFail { at, code })
        }
        "op_timeout" => Ok(Fault::OpTimeout {
            at: launch("op_timeout")?,
        }),
        "corrupt" => Ok(Fault::Corrupt {
            at: launch("corrupt")?,
        }),
        "crash" => Ok(Fault::Crash { at: launch("crash")? }),
        "stall" => Ok(Fault::Stall { at: launch("stall")? }),
        "drain" => match eq.map(str::trim) {
            Some("false_negative") => Ok(Fault::DrainFalseNegative),
            Some(v) => Err(PlanErrorKind::BadDrainMode { value: v.to_owned() }),
            None => Err(PlanErrorKind::Syntax {
                fault: "drain",
                expected: "drain=false_negative",
            }),
        },
        "force_reset_fail" => Ok(Fault::ForceResetFail {
            count: setting("force_reset_fail", "force reset count")?,
        }),
        "probe_fail" => Ok(Fault::ProbeFail {
            count: setting("probe_fail", "probe count")?,
        }),
        "init_delay_ms" => Ok(Fault::InitDelayMs {
            ms: setting("init_delay_ms", "delay in ms")?,
        }),
        "dead" if rest.is_empty() => Ok(Fault::Dead),
        "dead" => Err(PlanErrorKind::Syntax {
            fault: "dead",
            expected: "dead, without a value",
        }),
        other => Err(PlanErrorKind::UnknownFault {
            name: other.to_owned(),
        }),
    }
}

fn at_form(fault: &str) -> &'static str {
    match fault {
        "op_timeout" => "op_timeout@K",
        "corrupt" => "corrupt@K",
        "crash" => "crash@K",
        _ => "stall@K",
    }
}

fn eq_form(fault: &str) -> &'static str {
    match fault {
        "force_reset_fail" => "force_reset_fail=K",
        "probe_fail" => "probe_fail=K",
        _ => "init_delay_ms=K",
    }
}

/// A whole number of ASCII digits only (no sign, no spaces inside).
fn whole_number(text: &str) -> Option<u64> {
    crate::number::whole(text)
}

fn count(text: &str, what: &'static str) -> Result<u64, PlanErrorKind> {
    match whole_number(text) {
        None => Err(PlanErrorKind::BadNumber {
            what,
            value: text.trim().to_owned(),
        }),
        Some(0) => Err(PlanErrorKind::Zero { what }),
        Some(n) => Ok(n),
    }
}

fn parse_code(text: &str) -> Result<i32, PlanErrorKind> {
    whole_number(text)
        .and_then(|n| i32::try_from(n).ok())
        .filter(|&c| c != 0)
        .ok_or_else(|| PlanErrorKind::BadCode {
            value: text.trim().to_owned(),
        })
}
