//! Reading a fault plan from text (a `--faults` value or [`ENV_SIM_FAULTS`]); the errors it
//! returns are in `plan_error.rs`.
//!
//! Grammar: rules separated by `;` (empty rules and surrounding whitespace are tolerated), each
//! `dev=N:FAULT` or `dev=*:FAULT`, where FAULT is one of `launch_fail@K[=CODE]`,
//! `sync_fail@K=CODE`, `op_timeout@K`, `corrupt@K`, `crash@K`, `stall@K`, `poison_after@K`,
//! `drain=false_negative`, `force_reset_fail=K`, `probe_fail=K`, `dead`, `init_delay_ms=K`,
//! `sdma_fault@K` (K counts case SDMA copies), `sdma_warmup_fault`. K is a whole number from 1. A card may carry any
//! number of rules, but two launch faults may not fire at the same launch of a card and a setting
//! may not be given twice for a card.

use std::str::FromStr;

use super::plan::{CardSel, Fault, FaultPlan, FaultRule};
use super::plan_error::{FaultPlanError, PlanErrorKind};
use crate::driver::DeviceId;

/// Environment variable supplying the default fault plan (`--faults` wins where a CLI has it).
pub const ENV_SIM_FAULTS: &str = "ONBOARD_SIM_FAULTS";

impl FromStr for FaultPlan {
    type Err = FaultPlanError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut plan = FaultPlan::default();
        for text in s.split(';').map(str::trim).filter(|t| !t.is_empty()) {
            let rule = parse_rule(text).map_err(|kind| FaultPlanError {
                rule: text.to_owned(),
                // No fault has a `,` in it: a rule that fails with one is two rules joined
                // with the wrong separator.
                kind: if text.contains(',') {
                    PlanErrorKind::CommaSeparator {
                        suggested: text.replace(',', ";"),
                    }
                } else {
                    kind
                },
            })?;
            plan.push_checked(rule, text)?;
        }
        Ok(plan)
    }
}

impl FaultPlan {
    /// The plan in [`ENV_SIM_FAULTS`], or `None` when the variable is unset or blank.
    pub fn from_env() -> Result<Option<Self>, FaultPlanError> {
        match std::env::var(ENV_SIM_FAULTS) {
            Ok(text) if !text.trim().is_empty() => text.parse().map(Some),
            _ => Ok(None),
        }
    }

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
    let card = match card {
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
        "sync_fail" => {
            let syntax = PlanErrorKind::Syntax {
                fault: "sync_fail",
                expected: "sync_fail@K=CODE",
            };
            let (k, code) = at.and_then(|a| a.split_once('=')).ok_or(syntax)?;
            let at = count(k, "case launch number")?;
            let code = parse_code(code)?;
            Ok(Fault::SyncFail { at, code })
        }
        "op_timeout" => Ok(Fault::OpTimeout {
            at: launch("op_timeout")?,
        }),
        "corrupt" => Ok(Fault::Corrupt {
            at: launch("corrupt")?,
        }),
        "crash" => Ok(Fault::Crash { at: launch("crash")? }),
        "stall" => Ok(Fault::Stall { at: launch("stall")? }),
        "poison_after" => Ok(Fault::PoisonAfter {
            at: launch("poison_after")?,
        }),
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
        "sdma_fault" => match at {
            Some(k) if !k.contains('=') => Ok(Fault::SdmaFault {
                at: count(k, "case SDMA copy number")?,
            }),
            _ => Err(PlanErrorKind::Syntax {
                fault: "sdma_fault",
                expected: "sdma_fault@K",
            }),
        },
        "sdma_warmup_fault" if rest.is_empty() => Ok(Fault::SdmaWarmupFault),
        "sdma_warmup_fault" => Err(PlanErrorKind::Syntax {
            fault: "sdma_warmup_fault",
            expected: "sdma_warmup_fault, without a value",
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
        "poison_after" => "poison_after@K",
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
            value: text.to_owned(),
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
            value: text.to_owned(),
        })
}
