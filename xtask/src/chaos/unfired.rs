//! The fault rules a chaos run's report must list as unfired (issue 20 item 3), from the sim's
//! counters of each card.
//!
//! Which rules of a plan fire cannot be proved before the run (a card's share of the launches,
//! lane kills, quarantines), so chaos passes `--faults-must-fire` to every run and checks after
//! it, here, that `report.json`'s `faults_unfired` is exactly the rules the card files' counters
//! say cannot have fired: a launch fault `@K` on a card that made fewer than K case launches (no
//! two launch faults of a chaos plan share a launch of a card, so K launches fire it), an
//! `sdma_fault@K` on one that made fewer than K case SDMA copies, an `sdma_warmup_fault` on one
//! with no SDMA warm-up, a `force_reset_fail` on one never force-reset and a `probe_fail` on one
//! with no post-reset probe; settings (`drain`, `init_delay_ms`, `dead`) always take effect. The
//! exit status then follows (1 when any is listed). This file reads the counters' meaning, never
//! the sim's own list of fired rules, and never runs anything.

use std::collections::BTreeSet;

use platform_common::sim::CardCounters;
use serde_json::Value;

use super::faults::Form;
use super::plan::Plan;

/// A rule as both sides name it: its card, its fault's name, and its K (or the setting's count,
/// 0 for a fault without one).
pub type RuleKey = (u32, String, u64);

/// The rules of `plan` that cannot have fired by `counters` (the sim's, indexed by card).
pub fn expected(plan: &Plan, counters: &[CardCounters]) -> BTreeSet<RuleKey> {
    plan.rules
        .iter()
        .filter(|r| {
            let Some(c) = counters.get(r.card as usize) else {
                return false;
            };
            match (r.kind.form, r.kind.name) {
                (form, _) if form.at_launch() => c.case_launches < r.value,
                (Form::AtSdma, _) => c.sdma_copies < r.value,
                (_, "sdma_warmup_fault") => c.sdma_warmups == 0,
                (_, "force_reset_fail") => c.force_resets == 0,
                (_, "probe_fail") => c.post_reset_probes == 0,
                _ => false,
            }
        })
        .map(|r| (r.card, r.kind.name.to_owned(), r.value))
        .collect()
}

/// The key of the rule text `text` (`dev=N:NAME@K[=CODE]`, `dev=N:NAME=K`, `dev=N:NAME`) on `card`.
pub fn key_of(card: u32, text: &str) -> Option<RuleKey> {
    let fault = text.split_once(':').map_or(text, |(_, f)| f);
    let end = fault.find(['@', '=']).unwrap_or(fault.len());
    let name = &fault[..end];
    let rest = &fault[end..];
    let value = rest
        .get(1..)
        .map(|v| v.split('=').next().unwrap_or(""))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    (!name.is_empty()).then(|| (card, name.to_owned(), value))
}

/// `faults_unfired` of `report` as keys (absent: none); an entry without a card or a rule is an
/// error naming it.
pub fn reported(report: &Value) -> Result<BTreeSet<RuleKey>, String> {
    let entries = report
        .get("faults_unfired")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    entries
        .iter()
        .map(|e| {
            let card = e
                .get("card")
                .and_then(Value::as_u64)
                .and_then(|c| u32::try_from(c).ok());
            let rule = e.get("rule").and_then(Value::as_str);
            card.zip(rule)
                .and_then(|(c, r)| key_of(c, r))
                .ok_or_else(|| format!("a faults_unfired entry without a card or a rule: {e}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chaos::faults::by_name;
    use crate::chaos::plan::{Rule, BUILTIN_LAUNCHES};
    use platform_common::Arch;

    fn rule(card: u32, name: &str, value: u64, text: &str) -> Rule {
        Rule {
            card,
            kind: by_name(name).unwrap(),
            value,
            text: text.to_owned(),
        }
    }

    #[test]
    fn rule_texts_read_back_as_their_keys() {
        #[rustfmt::skip]
        let rows: &[(&str, Option<(&str, u64)>)] = &[
            ("dev=0:op_timeout@50",          Some(("op_timeout", 50))),
            ("dev=1:launch_fail@3=507015",   Some(("launch_fail", 3))),
            ("dev=2:force_reset_fail=2",     Some(("force_reset_fail", 2))),
            ("dev=0:sdma_warmup_fault",      Some(("sdma_warmup_fault", 0))),
            ("dev=0:drain=false_negative",   Some(("drain", 0))),
            ("sdma_fault@2",                 Some(("sdma_fault", 2))),
            ("dev=0:",                       None),
        ];
        for &(text, want) in rows {
            assert_eq!(key_of(7, text), want.map(|(n, v)| (7, n.to_owned(), v)), "{text}");
        }
    }

    #[test]
    fn the_counters_say_which_rules_cannot_have_fired() {
        let plan = Plan {
            index: 1,
            arch: Arch::A5,
            cards: 2,
            anchor: 0,
            rules: vec![
                rule(0, "op_timeout", 5, "op_timeout@5"),
                rule(0, "crash", 9, "crash@9"),
                rule(1, "sdma_fault", 2, "sdma_fault@2"),
                rule(1, "sdma_warmup_fault", 0, "sdma_warmup_fault"),
                rule(1, "probe_fail", 1, "probe_fail=1"),
                rule(1, "drain", 0, "drain=false_negative"),
                rule(1, "dead", 0, "dead"),
            ],
            kill_at: 0.5,
            kill_pick: 0,
            launches: BUILTIN_LAUNCHES,
        };
        let counters = [
            CardCounters {
                case_launches: 5,
                ..CardCounters::default()
            },
            CardCounters {
                sdma_copies: 1,
                sdma_warmups: 1,
                post_reset_probes: 1,
                ..CardCounters::default()
            },
        ];
        let want: BTreeSet<RuleKey> = [(0, "crash".to_owned(), 9), (1, "sdma_fault".to_owned(), 2)].into();
        assert_eq!(expected(&plan, &counters), want);
        let report = serde_json::json!({"faults_unfired": [
            {"rule": "dev=0:crash@9", "card": 0, "detail": "the card made 5 case launch(es)"},
            {"rule": "dev=1:sdma_fault@2", "card": 1, "detail": "the card made 1 case SDMA copies"},
        ]});
        assert_eq!(reported(&report).unwrap(), want);
        assert_eq!(reported(&serde_json::json!({})).unwrap(), BTreeSet::new());
        let bad = serde_json::json!({"faults_unfired": [{"rule": "dev=0:crash@9"}]});
        assert!(reported(&bad).unwrap_err().contains("without a card"));
    }
}
