//! Cards remember their health across runs: a card quarantined in a run is recorded host-wide
//! beside its lock file, so the next run that leases it checks it (a preflight) before giving it
//! work.
//!
//! A record is a file of its own per card and user, `card-N.health-<uid>` (as holder records are,
//! and for the same reason: in a shared lock dir only its owner can write or replace a file, so
//! nobody forges another user's record), written by a holder of the card's lease only, replaced
//! whole by a rename ([`super::record::replace_file`]), JSON ([`CardHealth`]: the status, when,
//! by which run, why, the card's health events of that run). The card's record is the newest of
//! its records (by `unix_ms`): a `quarantined` one asks for a preflight; a `cleared` one (written
//! when a preflight passed while another user's quarantined record could not be removed) says the
//! card was recovered. An empty, garbled or foreign file is skipped (logged at debug), never an
//! error.
//!
//! This file owns the record files and their format. It never decides when a card is quarantined
//! or preflighted (the runner's dispatcher does) and never takes a lock.

use std::os::fd::OwnedFd;
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::fs::{unlinkat, AtFlags, Dir};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use super::error::LeaseError;
use super::lock::DeviceLease;
use super::record::{read_small, replace_file};
use crate::driver::DeviceId;
use crate::health::Capability;

/// Bytes of a health record read at most.
const MAX_HEALTH: u64 = 1 << 20;
/// Health events a record keeps at most (the last ones).
pub const MAX_HEALTH_EVENTS: usize = 64;

/// What a card's record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// A run quarantined the card: the next run preflights it before giving it work.
    Quarantined,
    /// A preflight passed: the card was recovered (a driver reset between runs, a reboot); or an
    /// operator cleared a `needs_service` record (`cargo cardguard cards --clear N`).
    Cleared,
    /// The card reported a hardware fault (HBM ECC, device memory, a link, the heartbeat, the hdc
    /// channel; `platform_common::CodeClass::Hardware`): a force reset does not fix it, so no run
    /// gives it work, nor preflights it, until an operator clears the record.
    NeedsService,
}

impl HealthStatus {
    /// The name as the record spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Quarantined => "quarantined",
            Self::Cleared => "cleared",
            Self::NeedsService => "needs_service",
        }
    }
}

/// A card's health record (`card-N.health-<uid>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardHealth {
    /// The card.
    pub card: DeviceId,
    /// Quarantined or cleared.
    pub status: HealthStatus,
    /// When (milliseconds since the epoch).
    pub unix_ms: u64,
    /// The run that wrote it.
    pub run_id: String,
    /// Its dispatcher's pid.
    pub pid: u32,
    /// Its host.
    #[serde(default)]
    pub host: String,
    /// Why, for people (the quarantine's reason, or what cleared it).
    pub reason: String,
    /// The card's health events in that run, as its report records them (at most
    /// [`MAX_HEALTH_EVENTS`], the last ones).
    #[serde(default)]
    pub events: Vec<serde_json::Value>,
    /// Which capability of the card failed (`compute`, or `sdma`: its SDMA engine), for a
    /// quarantine or a needs-service record; absent in a cleared one (and in records older than
    /// the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<Capability>,
    /// The user who wrote it: the file's owner (never read from the text).
    #[serde(skip)]
    pub uid: Option<u32>,
}

impl CardHealth {
    /// A record of `status` written now by this process for `run_id`.
    pub fn now(card: DeviceId, status: HealthStatus, run_id: &str, reason: impl Into<String>) -> Self {
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Self {
            card,
            status,
            unix_ms,
            run_id: run_id.to_owned(),
            pid: std::process::id(),
            host: rustix::system::uname().nodename().to_string_lossy().into_owned(),
            reason: reason.into(),
            events: Vec::new(),
            capability: None,
            uid: None,
        }
    }

    /// The same record with `events` (the last [`MAX_HEALTH_EVENTS`] of them).
    pub fn with_events(mut self, mut events: Vec<serde_json::Value>) -> Self {
        let cut = events.len().saturating_sub(MAX_HEALTH_EVENTS);
        events.drain(..cut);
        self.events = events;
        self
    }

    /// The same record naming the capability that failed.
    pub fn with_capability(mut self, capability: Capability) -> Self {
        self.capability = Some(capability);
        self
    }

    /// Whether the record asks for a preflight.
    pub fn is_quarantined(&self) -> bool {
        self.status == HealthStatus::Quarantined
    }

    /// Whether the record keeps the card out of every run until an operator clears it.
    pub fn needs_service(&self) -> bool {
        self.status == HealthStatus::NeedsService
    }

    /// When, as RFC 3339 UTC (seconds).
    pub fn when(&self) -> String {
        let at = UNIX_EPOCH + std::time::Duration::from_millis(self.unix_ms);
        humantime::format_rfc3339_seconds(at).to_string()
    }
}

impl std::fmt::Display for CardHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at {} by run {}",
            self.status.name(),
            self.when(),
            self.run_id
        )?;
        if let Some(c) = self.capability {
            write!(f, " ({c} failed)")?;
        }
        if let Some(uid) = self.uid {
            write!(f, " (uid {uid})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// The name of `card`'s health record of user `uid`.
fn health_file_name(card: DeviceId, uid: u32) -> String {
    format!("card-{card}.health-{uid}")
}

/// The card's record in the lock dir `dir`: the newest readable one of any user.
pub(crate) fn current(dir: &OwnedFd, card: DeviceId) -> Option<CardHealth> {
    let prefix = format!("card-{card}.health-");
    let mut entries = Dir::read_from(dir).ok()?;
    let mut best: Option<CardHealth> = None;
    while let Some(Ok(entry)) = entries.read() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().ok().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some((bytes, uid)) = read_small(dir, name, MAX_HEALTH) else {
            continue;
        };
        let mut rec: CardHealth = match serde_json::from_slice(&bytes) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(card, file = ?name, "skipping an unreadable health record: {e}");
                continue;
            }
        };
        if rec.card != card {
            continue;
        }
        rec.uid = Some(uid);
        if best.as_ref().map_or(true, |b| rec.unix_ms >= b.unix_ms) {
            best = Some(rec);
        }
    }
    best
}

impl DeviceLease {
    /// The card's health record (the newest of any user's), if it has one.
    pub fn health_record(&self) -> Option<CardHealth> {
        current(self.dir.as_ref()?, self.physical)
    }

    /// Records `rec` as this user's health record of the leased card (replacing an older one). Only
    /// a lease taken in this process can (an inherited one has no lock dir of its own).
    pub fn remember_health(&self, rec: &CardHealth) -> Result<(), LeaseError> {
        let dir = self.lock_dir_fd()?;
        let uid = rustix::process::geteuid().as_raw();
        let name = health_file_name(self.physical, uid);
        let bytes = serde_json::to_vec_pretty(rec).map_err(|e| self.io(std::io::Error::other(e)))?;
        let dir_path = self.path.parent().unwrap_or(&self.path);
        replace_file(dir, dir_path, &name, &bytes).map_err(|e| self.io(e))?;
        tracing::debug!(
            card = self.card,
            physical = self.physical,
            status = rec.status.name(),
            "card health recorded"
        );
        Ok(())
    }

    /// Clears the card's record after a passing preflight, or when an operator clears a
    /// `needs_service` record: this user's record is removed, and when the card's newest record is
    /// then still a quarantine or `needs_service` (another user's, which this user may not
    /// remove), `cleared` is recorded in this user's name so it is the newest.
    pub fn clear_health(&self, run_id: &str, reason: &str) -> Result<(), LeaseError> {
        let dir = self.lock_dir_fd()?;
        let uid = rustix::process::geteuid().as_raw();
        let name = health_file_name(self.physical, uid);
        match unlinkat(dir, name.as_str(), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(self.io(e.into())),
        }
        if current(dir, self.physical).is_some_and(|r| r.is_quarantined() || r.needs_service()) {
            let rec = CardHealth::now(self.physical, HealthStatus::Cleared, run_id, reason);
            self.remember_health(&rec)?;
        }
        Ok(())
    }

    fn lock_dir_fd(&self) -> Result<&OwnedFd, LeaseError> {
        self.dir.as_ref().ok_or_else(|| LeaseError::Inherited {
            var: super::lock::ENV_LEASE_FD,
            value: format!("{}", self.card),
            reason: "an inherited lease cannot write the card's health record".to_owned(),
        })
    }

    fn io(&self, source: std::io::Error) -> LeaseError {
        LeaseError::Io {
            path: self.path.with_file_name(health_file_name(
                self.physical,
                rustix::process::geteuid().as_raw(),
            )),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lease::LeaseConfig;

    #[test]
    fn a_quarantine_is_remembered_and_a_preflight_clears_it() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        let lease = DeviceLease::try_acquire(&cfg, 2, "run-1").unwrap();
        assert_eq!(lease.health_record(), None);
        let events: Vec<serde_json::Value> = (0..70).map(|i| serde_json::json!({ "n": i })).collect();
        let rec = CardHealth::now(2, HealthStatus::Quarantined, "run-1", "dead card").with_events(events);
        assert_eq!(rec.events.len(), MAX_HEALTH_EVENTS);
        assert_eq!(rec.events[0]["n"], 6, "the last events are kept");
        lease.remember_health(&rec).unwrap();
        drop(lease);

        let lease = DeviceLease::try_acquire(&cfg, 2, "run-2").unwrap();
        let back = lease.health_record().expect("remembered across leases");
        assert!(back.is_quarantined());
        assert_eq!(back.run_id, "run-1");
        assert_eq!(back.uid, Some(rustix::process::geteuid().as_raw()));
        let text = back.to_string();
        assert!(text.starts_with("quarantined at "), "{text}");
        assert!(
            text.contains(" by run run-1 (uid ") && text.ends_with("): dead card"),
            "{text}"
        );
        lease.clear_health("run-2", "preflight passed").unwrap();
        assert_eq!(lease.health_record(), None, "this user's record is gone");
        let left: Vec<_> = std::fs::read_dir(&cfg.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.contains("health"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn the_newest_readable_record_wins_and_garbage_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        let lease = DeviceLease::try_acquire(&cfg, 1, "r").unwrap();
        // Another user's files (different uids in the name; the owner is this user here).
        let mut old = CardHealth::now(1, HealthStatus::Quarantined, "old", "x");
        old.unix_ms = 1_000;
        let mut new = CardHealth::now(1, HealthStatus::Cleared, "new", "y");
        new.unix_ms = 2_000;
        std::fs::write(
            cfg.dir.join("card-1.health-4001"),
            serde_json::to_vec(&old).unwrap(),
        )
        .unwrap();
        std::fs::write(
            cfg.dir.join("card-1.health-4002"),
            serde_json::to_vec(&new).unwrap(),
        )
        .unwrap();
        std::fs::write(cfg.dir.join("card-1.health-4003"), b"{garbage").unwrap();
        std::fs::write(cfg.dir.join("card-1.health-x"), b"{}").unwrap();
        let got = lease.health_record().unwrap();
        assert_eq!((got.run_id.as_str(), got.status), ("new", HealthStatus::Cleared));
        // A quarantine of another user that cannot be removed is overridden by a cleared record.
        std::fs::remove_file(cfg.dir.join("card-1.health-4002")).unwrap();
        assert!(lease.health_record().unwrap().is_quarantined());
        lease.clear_health("r", "preflight passed").unwrap();
        let got = lease.health_record().unwrap();
        assert_eq!((got.run_id.as_str(), got.status), ("r", HealthStatus::Cleared));
    }

    #[test]
    fn a_needs_service_record_stays_until_cleared() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = LeaseConfig {
            dir: tmp.path().join("locks"),
        };
        let lease = DeviceLease::try_acquire(&cfg, 3, "run-1").unwrap();
        let rec = CardHealth::now(3, HealthStatus::NeedsService, "run-1", "needs service: 507054");
        lease.remember_health(&rec).unwrap();
        drop(lease);
        let lease = DeviceLease::try_acquire(&cfg, 3, "run-2").unwrap();
        let back = lease.health_record().unwrap();
        assert!(back.needs_service() && !back.is_quarantined());
        assert!(back.to_string().starts_with("needs_service at "), "{back}");
        // Another user's needs-service record is overridden by a cleared one.
        std::fs::rename(
            cfg.dir
                .join(format!("card-3.health-{}", rustix::process::geteuid().as_raw())),
            cfg.dir.join("card-3.health-4001"),
        )
        .unwrap();
        lease
            .clear_health("cards --clear", "cleared by an operator")
            .unwrap();
        assert_eq!(lease.health_record().unwrap().status, HealthStatus::Cleared);
    }
}
