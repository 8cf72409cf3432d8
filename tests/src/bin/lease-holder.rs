//! Test helper: takes (or inherits) a card's lease, reports on stdout, holds it until stdin closes.
//!
//! `lease-holder try DIR CARD RUN_ID`   try_acquire; prints `acquired PID`, `held pid=.. run=.. :: <error>`
//!                                      or `refused <error>` (another lease error)
//! `lease-holder inherit DIR`           adopt the lease named in ONBOARD_LEASE_FD; prints `inherited CARD`
//! `lease-holder inherit-twice DIR`     adopt it, then try again; prints `inherited CARD, again: <outcome>`
//! `lease-holder inherit-spawn DIR`     adopt it, spawn `sleep 600` (a grandchild that would keep
//!                                      an inheritable lock); prints `inherited CARD grandchild PID`
//! Then waits for stdin to close and exits 0.

use std::io::Read;
use std::process::ExitCode;

use platform_common::lease::{DeviceLease, LeaseConfig, LeaseError};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (lease, line) = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["try", dir, card, run_id] => {
            let cfg = LeaseConfig { dir: dir.into() };
            let Ok(card) = card.parse() else {
                eprintln!("lease-holder: bad card {card:?}");
                return ExitCode::from(2);
            };
            match DeviceLease::try_acquire(&cfg, card, run_id) {
                Ok(l) => (Some(l), format!("acquired {}", std::process::id())),
                Err(e) => match &e {
                    LeaseError::Held { holder, .. } => (
                        None,
                        format!("held pid={:?} run={:?} :: {e}", holder.pid, holder.run_id),
                    ),
                    _ => (None, format!("refused {e}")),
                },
            }
        }
        ["inherit", dir] => match DeviceLease::inherited(&LeaseConfig { dir: dir.into() }) {
            Ok(l) => {
                let line = format!("inherited {}", l.card());
                (Some(l), line)
            }
            Err(e) => (None, format!("refused {e}")),
        },
        ["inherit-twice", dir] => {
            let cfg = LeaseConfig { dir: dir.into() };
            match DeviceLease::inherited(&cfg) {
                Ok(l) => {
                    let again = match DeviceLease::inherited(&cfg) {
                        Ok(_) => "adopted a second time".to_owned(),
                        Err(e) => format!("refused {e}"),
                    };
                    let line = format!("inherited {}, again: {again}", l.card());
                    (Some(l), line)
                }
                Err(e) => (None, format!("refused {e}")),
            }
        }
        ["inherit-spawn", dir] => match DeviceLease::inherited(&LeaseConfig { dir: dir.into() }) {
            Ok(l) => {
                let grandchild = std::process::Command::new("sleep")
                    .arg("600")
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn();
                match grandchild {
                    Ok(g) => {
                        let line = format!("inherited {} grandchild {}", l.card(), g.id());
                        (Some(l), line)
                    }
                    Err(e) => {
                        eprintln!("lease-holder: cannot spawn sleep: {e}");
                        return ExitCode::from(1);
                    }
                }
            }
            Err(e) => (None, format!("refused {e}")),
        },
        _ => {
            eprintln!(
                "usage: lease-holder try DIR CARD RUN_ID | inherit DIR | inherit-twice DIR | inherit-spawn DIR"
            );
            return ExitCode::from(2);
        }
    };
    println!("{line}");
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    drop(lease);
    ExitCode::SUCCESS
}
