//! The fault plan: which faults the simulated cards inject, and when.
//!
//! This file owns the plan's types, its canonical text form ([`fmt::Display`], which
//! [`str::parse`] reads back), the checks every plan passes (clashing rules, cards out of range)
//! and the per-card view the card files store. Parsing lives in `plan_parse.rs`, the error types
//! in `plan_error.rs`; this file imports neither the parser nor anything that imports it. The plan never counts anything itself: the card files hold the
//! counters (see `card_file.rs`), and the driver decides when a rule fires.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::plan_error::{FaultPlanError, PlanErrorKind};
use crate::driver::DeviceId;
use crate::error::{codes, Code};

/// Which cards a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardSel {
    /// One card (`dev=N`).
    One(DeviceId),
    /// Every card (`dev=*`).
    All,
}

impl CardSel {
    /// Whether the selector covers `card`.
    pub fn covers(self, card: DeviceId) -> bool {
        match self {
            CardSel::One(c) => c == card,
            CardSel::All => true,
        }
    }

    /// Whether two selectors share a card.
    pub fn overlaps(self, other: CardSel) -> bool {
        match (self, other) {
            (CardSel::One(a), CardSel::One(b)) => a == b,
            _ => true,
        }
    }
}

impl fmt::Display for CardSel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CardSel::One(c) => write!(f, "{c}"),
            CardSel::All => f.write_str("*"),
        }
    }
}

/// One fault. Launch faults fire at the K-th case launch on the card within the run (K from 1);
/// settings hold for the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "snake_case")]
pub enum Fault {
    /// `launch_fail@K[=CODE]`: the K-th case launch returns CODE (default 207001) and poisons.
    LaunchFail {
        /// Case launch number, from 1.
        at: u64,
        /// The raw code, when the rule gives one.
        code: Option<i32>,
    },
    /// `sync_fail@K=CODE`: the K-th case launch is queued, its op fails on the device with CODE
    /// (any real code, e.g. 507054), and the stream sync that waits for it returns CODE and
    /// poisons the context.
    SyncFail {
        /// Case launch number, from 1.
        at: u64,
        /// The raw code.
        code: i32,
    },
    /// `op_timeout@K`: the K-th case launch's kernel hangs in the wait API until reaped.
    OpTimeout {
        /// Case launch number, from 1.
        at: u64,
    },
    /// `corrupt@K`: the K-th case launch's kernel runs, then its first output buffer is perturbed.
    Corrupt {
        /// Case launch number, from 1.
        at: u64,
    },
    /// `crash@K`: the process making the K-th case launch dies at once (SIGSEGV).
    Crash {
        /// Case launch number, from 1.
        at: u64,
    },
    /// `stall@K`: the host thread making the K-th case launch blocks forever, with no error.
    Stall {
        /// Case launch number, from 1.
        at: u64,
    },
    /// `poison_after@K`: the K-th case launch runs and its output is correct, and nothing in its
    /// own run fails; the context is left sticky afterwards (an asynchronous AICPU exception
    /// reported after the sync): the next call on the context that starts new work fails.
    PoisonAfter {
        /// Case launch number, from 1.
        at: u64,
    },
    /// `drain=false_negative`: the bounded device drain returns success on a poisoned context.
    DrainFalseNegative,
    /// `force_reset_fail=K`: the first K force resets on the card fail.
    ForceResetFail {
        /// How many fail.
        count: u64,
    },
    /// `probe_fail=K`: the first K force resets that return 0 leave the sticky error in place, so
    /// the post-reset probe fails.
    ProbeFail {
        /// How many are spoiled.
        count: u64,
    },
    /// `dead`: every `set_device` on the card fails; nothing recovers it.
    Dead,
    /// `sdma_fault@K`: the K-th case SDMA copy on the card faults the card's SDMA engine: the copy
    /// fails on the device (507015 at the next sync of a stop-on-failure stream; a stream that
    /// continues on failure stalls into its sync timeout, 507046), the context is poisoned and
    /// the engine stays wedged until a force reset made after the handoff window.
    SdmaFault {
        /// Case SDMA copy number, from 1.
        at: u64,
    },
    /// `sdma_warmup_fault`: the next SDMA warm-up (the copy a worker makes at init) faults the
    /// card as `sdma_fault` does; it fires once per run.
    SdmaWarmupFault,
    /// `init_delay_ms=K`: every init on the card (the first `set_device` of a process's context,
    /// and the first after a reset tore it down) takes K ms longer (a slow init).
    InitDelayMs {
        /// The delay.
        ms: u64,
    },
}

impl Fault {
    /// The case launch number a launch fault fires at; `None` for settings.
    pub fn launch_number(&self) -> Option<u64> {
        match *self {
            Fault::LaunchFail { at, .. }
            | Fault::SyncFail { at, .. }
            | Fault::OpTimeout { at }
            | Fault::Corrupt { at }
            | Fault::Crash { at }
            | Fault::Stall { at }
            | Fault::PoisonAfter { at } => Some(at),
            _ => None,
        }
    }

    /// The case SDMA copy number an `sdma_fault` fires at; `None` for every other fault.
    pub fn sdma_copy_number(&self) -> Option<u64> {
        match *self {
            Fault::SdmaFault { at } => Some(at),
            _ => None,
        }
    }

    /// The fault's name as the grammar spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::LaunchFail { .. } => "launch_fail",
            Fault::SyncFail { .. } => "sync_fail",
            Fault::OpTimeout { .. } => "op_timeout",
            Fault::Corrupt { .. } => "corrupt",
            Fault::Crash { .. } => "crash",
            Fault::Stall { .. } => "stall",
            Fault::PoisonAfter { .. } => "poison_after",
            Fault::DrainFalseNegative => "drain",
            Fault::ForceResetFail { .. } => "force_reset_fail",
            Fault::ProbeFail { .. } => "probe_fail",
            Fault::Dead => "dead",
            Fault::InitDelayMs { .. } => "init_delay_ms",
            Fault::SdmaFault { .. } => "sdma_fault",
            Fault::SdmaWarmupFault => "sdma_warmup_fault",
        }
    }

    /// The code a `launch_fail` rule makes the launch return.
    pub fn launch_fail_code(code: Option<i32>) -> Code {
        code.map_or(codes::RT_MEMORY_ALLOCATION, Code::acl)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Fault::LaunchFail { at, code: None } => write!(f, "launch_fail@{at}"),
            Fault::LaunchFail { at, code: Some(c) } => write!(f, "launch_fail@{at}={c}"),
            Fault::SyncFail { at, code } => write!(f, "sync_fail@{at}={code}"),
            Fault::OpTimeout { at } => write!(f, "op_timeout@{at}"),
            Fault::Corrupt { at } => write!(f, "corrupt@{at}"),
            Fault::Crash { at } => write!(f, "crash@{at}"),
            Fault::Stall { at } => write!(f, "stall@{at}"),
            Fault::PoisonAfter { at } => write!(f, "poison_after@{at}"),
            Fault::DrainFalseNegative => f.write_str("drain=false_negative"),
            Fault::ForceResetFail { count } => write!(f, "force_reset_fail={count}"),
            Fault::ProbeFail { count } => write!(f, "probe_fail={count}"),
            Fault::Dead => f.write_str("dead"),
            Fault::InitDelayMs { ms } => write!(f, "init_delay_ms={ms}"),
            Fault::SdmaFault { at } => write!(f, "sdma_fault@{at}"),
            Fault::SdmaWarmupFault => f.write_str("sdma_warmup_fault"),
        }
    }
}

/// One rule of a plan: `dev=N:FAULT` or `dev=*:FAULT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FaultRule {
    /// The cards it applies to.
    pub card: CardSel,
    /// The fault.
    pub fault: Fault,
}

impl fmt::Display for FaultRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dev={}:{}", self.card, self.fault)
    }
}

/// A fault plan: rules in the order given. `Default` is the empty plan; `Display` writes the
/// canonical form, which parses back to an equal plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPlan {
    pub(super) rules: Vec<FaultRule>,
}

impl FaultPlan {
    /// A plan of these rules, checked as the parser checks them (duplicates, clashes).
    pub fn from_rules(rules: Vec<FaultRule>) -> Result<Self, FaultPlanError> {
        let mut plan = FaultPlan::default();
        for rule in rules {
            plan.push_checked(rule, &rule.to_string())?;
        }
        Ok(plan)
    }

    /// Every rule, in order.
    pub fn rules(&self) -> &[FaultRule] {
        &self.rules
    }

    /// Whether the plan has no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The faults that apply to `card` (its own rules and the `dev=*` ones), in plan order.
    pub fn faults_for(&self, card: DeviceId) -> Vec<Fault> {
        self.rules
            .iter()
            .filter(|r| r.card.covers(card))
            .map(|r| r.fault)
            .collect()
    }

    /// Checks every `dev=N` against a sim of `cards` cards.
    pub fn check_cards(&self, cards: u32) -> Result<(), FaultPlanError> {
        for rule in &self.rules {
            if let CardSel::One(card) = rule.card {
                if card >= cards {
                    return Err(FaultPlanError {
                        rule: rule.to_string(),
                        kind: PlanErrorKind::CardOutOfRange { card, cards },
                    });
                }
            }
        }
        Ok(())
    }

    /// Appends `rule` unless it clashes with an earlier one; `text` names it in the error.
    pub(super) fn push_checked(&mut self, rule: FaultRule, text: &str) -> Result<(), FaultPlanError> {
        for other in self.rules.iter().filter(|o| o.card.overlaps(rule.card)) {
            let sdma = (other.fault.sdma_copy_number(), rule.fault.sdma_copy_number());
            let clash = match (other.fault.launch_number(), rule.fault.launch_number()) {
                _ if sdma.0.is_some() || sdma.1.is_some() => match sdma {
                    (Some(a), Some(b)) if a == b => Some(PlanErrorKind::SameSdmaCopy {
                        other: other.to_string(),
                        at: a,
                    }),
                    _ => None,
                },
                (Some(a), Some(b)) if a == b => Some(PlanErrorKind::SameLaunch {
                    other: other.to_string(),
                    at: a,
                }),
                (None, None)
                    if std::mem::discriminant(&other.fault) == std::mem::discriminant(&rule.fault) =>
                {
                    Some(PlanErrorKind::Duplicate {
                        other: other.to_string(),
                    })
                }
                _ => None,
            };
            if let Some(kind) = clash {
                return Err(FaultPlanError {
                    rule: text.to_owned(),
                    kind,
                });
            }
        }
        self.rules.push(rule);
        Ok(())
    }
}

impl fmt::Display for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, rule) in self.rules.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{rule}")?;
        }
        Ok(())
    }
}
