//! `cargo xtask cards [--platform sim|onboard] [--arch a5|a2a3] [--json] [--clear N]`: every card of the host,
//! free or held (uid, pid, host, since, run), its last health record (quarantined or cleared, when,
//! by which run, why) and whether the next run preflights it; then the runs waiting in the card
//! queue, in arrival order.
//!
//! The platform's lock dir and card count are the suite binary's, asked as a process
//! (`cardguard-suite --platform-info`: on sim `ONBOARD_SIM_CARDS` and `ONBOARD_LOCK_DIR`, on
//! onboard `ONBOARD_CARDS` and the host lock dir); `--arch` only picks whose simulator defaults
//! count the cards. The survey
//! (`platform_common::lease::survey`) takes no card's lock: a run starting meanwhile is never
//! refused because of it.
//!
//! `--clear N` is the operator's word that card N was serviced: it takes the card's lease (never
//! waiting: a card held by a run is an error) and clears the card's health record (a
//! `needs_service` one, which no run clears by itself, or a quarantine), then shows the survey.
//!
//! This file owns the command line and the rendering (a table, or one JSON document with
//! `--json`). Apart from `--clear`, it never changes a lock, a holder record or a health record.
//! Exit status: 0, or 2 with a one-line error when the lock dir cannot be read or the card to
//! clear is held or out of range.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use cardguard_report::Platform;
use platform_common::lease::{survey, CardSurvey, HeldBy, LeaseConfig, LockDirSurvey};
use platform_common::message::error_chain;
use platform_common::Arch;
use platform_common::DeviceLease;
use serde_json::{json, Value};

use crate::cargo_build::build_suite;
use crate::workspace::Workspace;

/// `--platform`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PlatformArg {
    /// Simulated cards.
    Sim,
    /// Real cards through CANN.
    Onboard,
}

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Whose cards: simulated or real (default: the suite binary's, onboard when CANN is found).
    #[arg(long, value_enum)]
    platform: Option<PlatformArg>,
    /// The arch whose simulator defaults count the cards (the lock dir is the same for both).
    #[arg(long, default_value = "a5", value_parser = parse_arch)]
    arch: Arch,
    /// One JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// The suite package whose binary names the platform's cards (default: the workspace's
    /// suite package).
    #[arg(long, value_name = "NAME")]
    package: Option<String>,
    /// Clear card N's health record (the card was serviced), then show the survey.
    #[arg(long, value_name = "N")]
    clear: Option<u32>,
}

fn parse_arch(s: &str) -> Result<Arch, String> {
    s.parse::<Arch>().map_err(|e| e.to_string())
}

/// Runs the command.
pub fn run(ws: &Workspace, args: Args) -> ExitCode {
    let exe = ws
        .suite(args.package.as_deref(), None)
        .and_then(|suite| build_suite(ws, &suite, "dev"))
        .map_err(|e| e.to_string());
    let surveyed = exe.and_then(|exe| {
        let (platform, leases, cards) = platform_info(&exe, args.platform, args.arch)?;
        if let Some(card) = args.clear {
            let said = clear(&leases, cards, card)?;
            eprintln!("card {card}: health record cleared (it said: {said})");
        }
        let s = survey(&leases, cards).map_err(|e| error_chain(&e))?;
        Ok((platform, s))
    });
    match surveyed {
        Ok((platform, s)) if args.json => println!("{}", to_json(platform, &s)),
        Ok((platform, s)) => print!("{}", table(platform, &s)),
        Err(e) => {
            eprintln!("error: cards: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

/// The platform (`platform`, else the suite binary's default), its lock dir and its card count on
/// `arch`, as the suite binary `exe` says (`--platform-info`).
fn platform_info(
    exe: &Path,
    platform: Option<PlatformArg>,
    arch: Arch,
) -> Result<(Platform, LeaseConfig, u32), String> {
    let mut cmd = Command::new(exe);
    cmd.args(["--no-config", "--arch", arch.name(), "--platform-info"]);
    if let Some(p) = platform {
        cmd.args([
            "--platform",
            if p == PlatformArg::Sim { "sim" } else { "onboard" },
        ]);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        // The suite binary's own one-line error, without its prefix.
        let line = stderr.lines().next().unwrap_or_default();
        return Err(line.strip_prefix("error: ").unwrap_or(line).to_owned());
    }
    parse_platform_info(&String::from_utf8_lossy(&out.stdout))
}

/// Reads `--platform-info`'s object: `platform`, `cards`, `lock_dir`.
fn parse_platform_info(text: &str) -> Result<(Platform, LeaseConfig, u32), String> {
    let bad = |what: &str| format!("the suite binary's --platform-info {what}: {}", text.trim());
    let doc: Value = serde_json::from_str(text).map_err(|_| bad("is not JSON"))?;
    let platform: Platform =
        serde_json::from_value(doc["platform"].clone()).map_err(|_| bad("names no platform"))?;
    let cards = doc["cards"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| bad("has no card count"))?;
    let dir = doc["lock_dir"].as_str().ok_or_else(|| bad("has no lock dir"))?;
    Ok((
        platform,
        LeaseConfig {
            dir: PathBuf::from(dir),
        },
        cards,
    ))
}

/// Clears card `card`'s health record in the lock dir of `leases` (of `cards` cards) under the
/// card's lease. Returns what the record said.
pub fn clear(leases: &LeaseConfig, cards: u32, card: u32) -> Result<String, String> {
    if card >= cards {
        return Err(format!(
            "--clear {card}: no such card (this host has cards 0 to {})",
            cards.saturating_sub(1)
        ));
    }
    let lease = DeviceLease::try_acquire(leases, card, "cards-clear")
        .map_err(|e| format!("--clear {card}: {}", error_chain(&e)))?;
    let said = lease
        .health_record()
        .map_or_else(|| "nothing".to_owned(), |r| r.to_string());
    lease
        .clear_health(
            "cards-clear",
            "cleared by an operator (cargo cardguard cards --clear)",
        )
        .map_err(|e| format!("--clear {card}: {}", error_chain(&e)))?;
    Ok(said)
}

/// Whether the next run that leases the card preflights it first.
fn quarantined(c: &CardSurvey) -> bool {
    c.health.as_ref().is_some_and(|h| h.is_quarantined())
}

/// The table: a line per card, then the waiting runs.
pub fn table(platform: Platform, s: &LockDirSurvey) -> String {
    let mut out = String::new();
    let _ = write!(out, "cards of platform {platform}, lock dir {}", s.dir.display());
    if !s.exists {
        out.push_str(" (not created yet: no run used it)");
    } else if s.method == HeldBy::TestLock {
        out.push_str(" (holders found by a test lock: /proc/locks does not match this file system)");
    }
    out.push('\n');
    let rows: Vec<[String; 5]> = s
        .cards
        .iter()
        .map(|c| {
            [
                c.card.to_string(),
                if c.held.is_some() { "held" } else { "free" }.to_owned(),
                c.held
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), ToString::to_string),
                c.health
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), ToString::to_string),
                if quarantined(c) {
                    "yes (preflight next)"
                } else if c.health.as_ref().is_some_and(|h| h.needs_service()) {
                    "needs service (--clear N once serviced)"
                } else {
                    "no"
                }
                .to_owned(),
            ]
        })
        .collect();
    let head = ["CARD", "STATE", "HOLDER", "LAST HEALTH RECORD", "QUARANTINED"];
    let mut widths = head.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, cells: [&str; 5]| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                l.push_str(cell);
            } else {
                let _ = write!(l, "{cell:<w$}  ");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut out, head);
    for r in &rows {
        line(&mut out, [&r[0], &r[1], &r[2], &r[3], &r[4]]);
    }
    if s.waiters.is_empty() {
        out.push_str("no run is waiting for cards\n");
    } else {
        out.push_str("waiting for cards, in arrival order:\n");
        for w in &s.waiters {
            let _ = writeln!(out, "  ticket {}: {w}", w.seq);
        }
    }
    out
}

/// The survey as one JSON document (for tools).
pub fn to_json(platform: Platform, s: &LockDirSurvey) -> Value {
    let cards: Vec<Value> = s
        .cards
        .iter()
        .map(|c| {
            json!({
                "card": c.card,
                "lock_file": c.lock_file,
                "state": if c.held.is_some() { "held" } else { "free" },
                "holder": c.held.as_ref().map(|h| json!({
                    "uid": h.uid,
                    "pid": h.pid,
                    "host": h.host,
                    "since_ms": h.started_ms,
                    "run_id": h.run_id,
                })),
                "health": c.health.as_ref().map(|h| json!({
                    "status": h.status,
                    "unix_ms": h.unix_ms,
                    "when": h.when(),
                    "run_id": h.run_id,
                    "pid": h.pid,
                    "host": h.host,
                    "uid": h.uid,
                    "reason": h.reason,
                    "capability": h.capability,
                    "events": h.events,
                })),
                "quarantined": quarantined(c),
                "needs_service": c.health.as_ref().is_some_and(|h| h.needs_service()),
            })
        })
        .collect();
    let waiters: Vec<Value> = s
        .waiters
        .iter()
        .map(|w| {
            json!({
                "seq": w.seq,
                "uid": w.record.uid,
                "pid": w.record.pid,
                "host": w.record.host,
                "since_ms": w.record.started_ms,
                "run_id": w.record.run_id,
                "wants": w.wanted.as_ref().map(ToString::to_string),
            })
        })
        .collect();
    json!({
        "platform": platform.name(),
        "lock_dir": s.dir,
        "lock_dir_exists": s.exists,
        "held_by": match s.method {
            HeldBy::ProcLocks => "proc_locks",
            HeldBy::TestLock => "test_lock",
        },
        "cards": cards,
        "waiters": waiters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_common::lease::{CardHealth, HealthStatus};

    /// The suite binary's answer for simulated cards follows the variables a run reads.
    #[test]
    fn the_suite_binary_names_the_platform_its_cards_and_lock_dir() {
        let exe = crate::testing::builtin_suite();
        let tmp = tempfile::tempdir().unwrap();
        let out = Command::new(&exe)
            .args([
                "--no-config",
                "--arch",
                "a5",
                "--platform",
                "sim",
                "--platform-info",
            ])
            .env("ONBOARD_SIM_ROOT", tmp.path().join("sim"))
            .env("ONBOARD_LOCK_DIR", tmp.path().join("locks"))
            .env("ONBOARD_SIM_CARDS", "3")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let (platform, leases, cards) = parse_platform_info(&String::from_utf8_lossy(&out.stdout)).unwrap();
        assert_eq!((platform, cards), (Platform::Sim, 3));
        assert_eq!(leases.dir, tmp.path().join("locks"));
    }

    #[test]
    fn a_bad_platform_info_is_an_error_naming_what_is_missing() {
        let ok = r#"{"platform":"onboard","cards":8,"lock_dir":"/var/lock/cardguard"}"#;
        let (platform, leases, cards) = parse_platform_info(ok).unwrap();
        assert_eq!((platform, cards), (Platform::Onboard, 8));
        assert_eq!(leases.dir, PathBuf::from("/var/lock/cardguard"));
        #[rustfmt::skip]
        let rows = [
            ("not json",                                            "is not JSON"),
            (r#"{"cards":8,"lock_dir":"/l"}"#,                      "names no platform"),
            (r#"{"platform":"sim","lock_dir":"/l"}"#,               "has no card count"),
            (r#"{"platform":"sim","cards":8}"#,                     "has no lock dir"),
        ];
        for (text, want) in rows {
            let err = parse_platform_info(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn a_survey_shows_free_held_and_quarantined_cards() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        let none = survey(&cfg, 2).unwrap();
        assert!(table(Platform::Sim, &none).contains("(not created yet: no run used it)"));
        assert!(!cfg.dir.exists(), "a survey creates nothing");

        // Card 1 is held by this process; card 2 was quarantined by an earlier run (and is free).
        let held = DeviceLease::try_acquire(&cfg, 1, "run-holding").unwrap();
        {
            let earlier = DeviceLease::try_acquire(&cfg, 2, "run-earlier").unwrap();
            let rec = CardHealth::now(2, HealthStatus::Quarantined, "run-earlier", "dead on init");
            earlier.remember_health(&rec).unwrap();
        }
        let s = survey(&cfg, 3).unwrap();
        let t = table(Platform::Sim, &s);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("cards of platform sim, lock dir "), "{t}");
        assert!(lines[1].starts_with("CARD  STATE"), "{t}");
        assert!(
            lines[2].starts_with("0     free") && lines[2].ends_with("no"),
            "{t}"
        );
        let me = format!("pid {} ", std::process::id());
        assert!(
            lines[3].starts_with("1     held")
                && lines[3].contains(&me)
                && lines[3].contains("(run run-holding)"),
            "{t}"
        );
        assert!(
            lines[4].starts_with("2     free")
                && lines[4].contains("quarantined at ")
                && lines[4].contains("by run run-earlier")
                && lines[4].matches("dead on init").count() == 1
                && lines[4].ends_with("yes (preflight next)"),
            "{t}"
        );
        assert_eq!(lines[5], "no run is waiting for cards", "{t}");

        let j = to_json(Platform::Sim, &s);
        assert_eq!(j["platform"], "sim");
        assert_eq!(j["lock_dir_exists"], true);
        let cards = j["cards"].as_array().unwrap();
        assert_eq!(cards.len(), 3);
        assert_eq!(
            (cards[0]["state"].as_str(), &cards[0]["holder"]),
            (Some("free"), &Value::Null)
        );
        assert_eq!(cards[1]["state"], "held");
        assert_eq!(cards[1]["holder"]["pid"], std::process::id());
        assert_eq!(cards[1]["holder"]["run_id"], "run-holding");
        assert_eq!(cards[1]["quarantined"], false);
        assert_eq!(cards[2]["health"]["status"], "quarantined");
        assert_eq!(cards[2]["health"]["run_id"], "run-earlier");
        assert_eq!(cards[2]["quarantined"], true);
        drop(held);
        let s = survey(&cfg, 3).unwrap();
        assert!(s.cards[1].held.is_none(), "released: free again");
    }

    #[test]
    fn clear_removes_a_needs_service_record_and_refuses_a_held_card() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        {
            let lease = DeviceLease::try_acquire(&cfg, 1, "run-ecc").unwrap();
            let rec = CardHealth::now(1, HealthStatus::NeedsService, "run-ecc", "needs service: 507054");
            lease.remember_health(&rec).unwrap();
        }
        let s = survey(&cfg, 2).unwrap();
        assert!(table(Platform::Sim, &s).contains("needs service (--clear N once serviced)"));
        assert_eq!(to_json(Platform::Sim, &s)["cards"][1]["needs_service"], true);

        let held = DeviceLease::try_acquire(&cfg, 1, "run-now").unwrap();
        let err = clear(&cfg, 2, 1).unwrap_err();
        assert!(err.starts_with("--clear 1: "), "{err}");
        drop(held);
        let err = clear(&cfg, 2, 5).unwrap_err();
        assert!(err.contains("no such card"), "{err}");

        let said = clear(&cfg, 2, 1).unwrap();
        assert!(said.starts_with("needs_service at "), "{said}");
        let s = survey(&cfg, 2).unwrap();
        assert!(s.cards[1].health.is_none(), "{:?}", s.cards[1].health);
    }
}
