//! The fault-plan grammar: every rule parses and round-trips; every kind of malformed input is an
//! error that names the rule and says why, on one line.

#![cfg(feature = "sim")]

use platform_common::sim::{CardSel, Fault, FaultPlan, FaultRule, PlanErrorKind};

#[test]
fn every_rule_parses_and_round_trips() {
    let cases = [
        (
            "dev=0:launch_fail@3",
            CardSel::One(0),
            Fault::LaunchFail { at: 3, code: None },
        ),
        (
            "dev=1:launch_fail@1=507899",
            CardSel::One(1),
            Fault::LaunchFail {
                at: 1,
                code: Some(507899),
            },
        ),
        (
            "dev=2:sync_fail@4=507054",
            CardSel::One(2),
            Fault::SyncFail { at: 4, code: 507054 },
        ),
        ("dev=2:op_timeout@2", CardSel::One(2), Fault::OpTimeout { at: 2 }),
        ("dev=3:corrupt@4", CardSel::One(3), Fault::Corrupt { at: 4 }),
        ("dev=4:crash@1", CardSel::One(4), Fault::Crash { at: 1 }),
        ("dev=5:stall@7", CardSel::One(5), Fault::Stall { at: 7 }),
        (
            "dev=5:poison_after@3",
            CardSel::One(5),
            Fault::PoisonAfter { at: 3 },
        ),
        (
            "dev=6:drain=false_negative",
            CardSel::One(6),
            Fault::DrainFalseNegative,
        ),
        (
            "dev=7:force_reset_fail=2",
            CardSel::One(7),
            Fault::ForceResetFail { count: 2 },
        ),
        ("dev=*:probe_fail=1", CardSel::All, Fault::ProbeFail { count: 1 }),
        ("dev=0:dead", CardSel::One(0), Fault::Dead),
        (
            "dev=*:init_delay_ms=250",
            CardSel::All,
            Fault::InitDelayMs { ms: 250 },
        ),
    ];
    for (text, card, fault) in cases {
        let plan: FaultPlan = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(plan.rules(), &[FaultRule { card, fault }], "{text}");
        assert_eq!(plan.to_string(), text, "display of {text}");
        assert_eq!(plan.to_string().parse::<FaultPlan>().unwrap(), plan);
    }
}

#[test]
fn a_whole_plan_round_trips_and_tolerates_blank_rules() {
    let text =
        " dev=1:op_timeout@3 ;; dev=1:corrupt@5;dev=*:drain=false_negative ;\n dev=2:launch_fail@1=507000; ";
    let plan: FaultPlan = text.parse().unwrap();
    assert_eq!(plan.rules().len(), 4);
    let canonical =
        "dev=1:op_timeout@3;dev=1:corrupt@5;dev=*:drain=false_negative;dev=2:launch_fail@1=507000";
    assert_eq!(plan.to_string(), canonical);
    assert_eq!(canonical.parse::<FaultPlan>().unwrap(), plan);
    assert_eq!(
        plan.faults_for(1),
        vec![
            Fault::OpTimeout { at: 3 },
            Fault::Corrupt { at: 5 },
            Fault::DrainFalseNegative
        ]
    );
    assert_eq!(plan.faults_for(0), vec![Fault::DrainFalseNegative]);
    assert!("".parse::<FaultPlan>().unwrap().is_empty());
    assert!(" ; ;".parse::<FaultPlan>().unwrap().is_empty());
    assert_eq!(FaultPlan::default().to_string(), "");
    assert_eq!(FaultPlan::from_rules(plan.rules().to_vec()).unwrap(), plan);
}

#[test]
fn launch_fail_code_defaults_to_207001() {
    assert_eq!(Fault::launch_fail_code(None).raw, 207001);
    assert_eq!(Fault::launch_fail_code(Some(507000)).raw, 507000);
}

/// One malformed input: (input, the rule the error must name, the kind it must be).
type Malformed = (&'static str, &'static str, fn(&PlanErrorKind) -> bool);

fn malformed() -> Vec<Malformed> {
    vec![
        ("op_timeout@3", "op_timeout@3", |k| {
            matches!(k, PlanErrorKind::MissingDev)
        }),
        ("card=1:dead", "card=1:dead", |k| {
            matches!(k, PlanErrorKind::MissingDev)
        }),
        ("dev=1", "dev=1", |k| matches!(k, PlanErrorKind::MissingFault)),
        ("dev=1:", "dev=1:", |k| matches!(k, PlanErrorKind::MissingFault)),
        ("dev=x:dead", "dev=x:dead", |k| {
            matches!(k, PlanErrorKind::BadCard { .. })
        }),
        ("dev=-1:dead", "dev=-1:dead", |k| {
            matches!(k, PlanErrorKind::BadCard { .. })
        }),
        ("dev=99999999999:dead", "dev=99999999999:dead", |k| {
            matches!(k, PlanErrorKind::BadCard { .. })
        }),
        ("dev=1:explode@2", "dev=1:explode@2", |k| {
            matches!(k, PlanErrorKind::UnknownFault { .. })
        }),
        ("dev=1:op_timeout", "dev=1:op_timeout", |k| {
            matches!(k, PlanErrorKind::Syntax { .. })
        }),
        ("dev=1:op_timeout=3", "dev=1:op_timeout=3", |k| {
            matches!(k, PlanErrorKind::Syntax { .. })
        }),
        ("dev=1:corrupt@2=5", "dev=1:corrupt@2=5", |k| {
            matches!(k, PlanErrorKind::Syntax { .. })
        }),
        ("dev=1:launch_fail=2", "dev=1:launch_fail=2", |k| {
            matches!(k, PlanErrorKind::Syntax { .. })
        }),
        ("dev=1:force_reset_fail@2", "dev=1:force_reset_fail@2", |k| {
            matches!(k, PlanErrorKind::Syntax { .. })
        }),
        ("dev=1:probe_fail", "dev=1:probe_fail", |k| {
            matches!(k, PlanErrorKind::Syntax { .. })
        }),
        ("dev=1:dead=1", "dev=1:dead=1", |k| {
            matches!(k, PlanErrorKind::Syntax { .. })
        }),
        ("dev=1:drain", "dev=1:drain", |k| {
            matches!(k, PlanErrorKind::Syntax { .. })
        }),
        ("dev=1:drain=true", "dev=1:drain=true", |k| {
            matches!(k, PlanErrorKind::BadDrainMode { .. })
        }),
        ("dev=1:crash@x", "dev=1:crash@x", |k| {
            matches!(k, PlanErrorKind::BadNumber { .. })
        }),
        ("dev=1:stall@+2", "dev=1:stall@+2", |k| {
            matches!(k, PlanErrorKind::BadNumber { .. })
        }),
        ("dev=1:init_delay_ms=1.5", "dev=1:init_delay_ms=1.5", |k| {
            matches!(k, PlanErrorKind::BadNumber { .. })
        }),
        ("dev=1:op_timeout@0", "dev=1:op_timeout@0", |k| {
            matches!(k, PlanErrorKind::Zero { .. })
        }),
        ("dev=1:force_reset_fail=0", "dev=1:force_reset_fail=0", |k| {
            matches!(k, PlanErrorKind::Zero { .. })
        }),
        ("dev=1:init_delay_ms=0", "dev=1:init_delay_ms=0", |k| {
            matches!(k, PlanErrorKind::Zero { .. })
        }),
        ("dev=1:launch_fail@0=5", "dev=1:launch_fail@0=5", |k| {
            matches!(k, PlanErrorKind::Zero { .. })
        }),
        ("dev=1:launch_fail@2=abc", "dev=1:launch_fail@2=abc", |k| {
            matches!(k, PlanErrorKind::BadCode { .. })
        }),
        ("dev=1:launch_fail@2=0", "dev=1:launch_fail@2=0", |k| {
            matches!(k, PlanErrorKind::BadCode { .. })
        }),
        ("dev=1:launch_fail@2=", "dev=1:launch_fail@2=", |k| {
            matches!(k, PlanErrorKind::BadCode { .. })
        }),
        (
            "dev=1:launch_fail@2=3000000000",
            "dev=1:launch_fail@2=3000000000",
            |k| matches!(k, PlanErrorKind::BadCode { .. }),
        ),
        // Duplicate settings on a card, directly or through dev=*.
        ("dev=1:dead;dev=1:dead", "dev=1:dead", |k| {
            matches!(k, PlanErrorKind::Duplicate { .. })
        }),
        (
            "dev=*:probe_fail=1; dev=2:probe_fail=3",
            "dev=2:probe_fail=3",
            |k| matches!(k, PlanErrorKind::Duplicate { .. }),
        ),
        (
            "dev=2:drain=false_negative;dev=*:drain=false_negative",
            "dev=*:drain=false_negative",
            |k| matches!(k, PlanErrorKind::Duplicate { .. }),
        ),
        // Two launch faults at the same launch of a card.
        ("dev=1:op_timeout@2;dev=1:corrupt@2", "dev=1:corrupt@2", |k| {
            matches!(k, PlanErrorKind::SameLaunch { at: 2, .. })
        }),
        ("dev=*:crash@1;dev=0:launch_fail@1", "dev=0:launch_fail@1", |k| {
            matches!(k, PlanErrorKind::SameLaunch { at: 1, .. })
        }),
    ]
}

#[test]
fn every_malformed_rule_is_named_with_a_reason() {
    for (input, rule, kind_ok) in malformed() {
        let e = input
            .parse::<FaultPlan>()
            .expect_err(&format!("{input:?} must not parse"));
        assert_eq!(e.rule, rule, "rule named for {input:?}");
        assert!(kind_ok(&e.kind), "{input:?}: wrong kind {:?}", e.kind);
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("{rule:?}")),
            "{input:?}: message {msg:?} does not quote the rule"
        );
        assert!(!msg.contains('\n'), "{input:?}: message is not one line: {msg:?}");
        assert!(
            msg.len() > rule.len() + 20,
            "{input:?}: message gives no reason: {msg:?}"
        );
    }
}

#[test]
fn a_good_rule_beside_a_bad_one_does_not_hide_it() {
    let e = "dev=0:op_timeout@1; dev=1:bogus ;dev=2:dead"
        .parse::<FaultPlan>()
        .unwrap_err();
    assert_eq!(e.rule, "dev=1:bogus");
}

#[test]
fn cards_are_checked_against_the_card_count() {
    let e = FaultPlan::parse_for_cards("dev=*:dead;dev=8:op_timeout@1", 8).unwrap_err();
    assert_eq!(e.rule, "dev=8:op_timeout@1");
    assert!(matches!(
        e.kind,
        PlanErrorKind::CardOutOfRange { card: 8, cards: 8 }
    ));
    assert!(e.to_string().contains("out of range"), "{e}");
    FaultPlan::parse_for_cards("dev=7:op_timeout@1", 8).unwrap();
    let plan: FaultPlan = "dev=3:dead".parse().unwrap();
    assert!(plan.check_cards(3).is_err());
    plan.check_cards(4).unwrap();
}

#[test]
fn a_rule_list_is_checked_like_text() {
    let dup = FaultRule {
        card: CardSel::One(1),
        fault: Fault::Dead,
    };
    let e = FaultPlan::from_rules(vec![dup, dup]).unwrap_err();
    assert_eq!(e.rule, "dev=1:dead");
}

#[test]
fn rules_joined_by_a_comma_are_told_the_separator() {
    let e = "dev=0:op_timeout@1,dev=1:crash@2"
        .parse::<FaultPlan>()
        .unwrap_err();
    assert_eq!(
        e.kind,
        PlanErrorKind::CommaSeparator {
            suggested: "dev=0:op_timeout@1;dev=1:crash@2".to_owned()
        }
    );
    let msg = e.to_string();
    assert!(msg.contains("separated by ';', not ','"), "{msg}");
    assert!(msg.contains("\"dev=0:op_timeout@1;dev=1:crash@2\""), "{msg}");
}

#[test]
fn the_unknown_fault_error_lists_every_fault_of_the_grammar() {
    let msg = "dev=0:explode@1".parse::<FaultPlan>().unwrap_err().to_string();
    for form in [
        "launch_fail@K[=CODE]",
        "op_timeout@K",
        "corrupt@K",
        "crash@K",
        "stall@K",
        "poison_after@K",
        "drain=false_negative",
        "force_reset_fail=K",
        "probe_fail=K",
        "dead",
        "init_delay_ms=K",
    ] {
        assert!(msg.contains(form), "{form} missing from {msg}");
    }
}

#[test]
fn numbers_in_rules_take_no_surrounding_spaces() {
    for text in [
        "dev= 1:dead",
        "dev=1 :dead",
        "dev=0:op_timeout@ 3",
        "dev=0:probe_fail= 2",
    ] {
        assert!(text.parse::<FaultPlan>().is_err(), "{text:?} parsed");
    }
    // Space around a whole rule, or around `;`, is not a number's.
    " dev=0:op_timeout@3 ; dev=1:dead ".parse::<FaultPlan>().unwrap();
}
