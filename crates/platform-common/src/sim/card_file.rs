//! The cross-process state of one simulated card: a small JSON file under the sim root.
//!
//! This file owns the card record (reset generation, the installed faults, the run's counters and
//! which launch faults fired) and the only way to change it: read-modify-write under an exclusive
//! `flock` of the file itself. Readers take a shared lock. The file is never renamed or deleted;
//! an empty or garbled file reads as a fresh card. The sim root is created 0700 when missing and
//! must be a directory owned by this user, not a symlink; card files are opened relative to it and
//! never through a symlink. What the record *means* for a driver call is decided by the driver,
//! not here.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rustix::fs::{flock, FlockOperation};
use serde::{Deserialize, Serialize};

use super::config::{card_file_name, SimConfig};
use super::error::SimError;
use super::plan::{Fault, FaultPlan};
use crate::driver::DeviceId;
use crate::lease::private_dir::{open_private_dir, open_state_file, Refusal};

/// The run's counters of one card. [`super::start_run`] zeroes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardCounters {
    /// `LaunchOrigin::Case` launches (the K of launch faults).
    #[serde(default)]
    pub case_launches: u64,
    /// `LaunchOrigin::Internal` launches (probes and other internal kernels; never count for K).
    #[serde(default)]
    pub internal_launches: u64,
    /// Force resets attempted (the K of `force_reset_fail`).
    #[serde(default)]
    pub force_resets: u64,
    /// Force resets that returned 0, each followed by a post-reset probe (the K of `probe_fail`).
    #[serde(default)]
    pub post_reset_probes: u64,
}

/// Everything a card file records.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardState {
    /// Bumped by every force reset that returned 0; never zeroed by a run start.
    #[serde(default)]
    pub generation: u64,
    /// The faults installed for this card by the current run.
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// Indices into `faults` of the launch faults that already fired this run.
    #[serde(default)]
    pub fired: Vec<usize>,
    /// The run's counters.
    #[serde(default)]
    pub counters: CardCounters,
}

impl CardState {
    /// Whether a setting-kind fault like `probe` is installed.
    pub fn has(&self, probe: impl Fn(&Fault) -> bool) -> bool {
        self.faults.iter().any(probe)
    }

    /// The `force_reset_fail` count, 0 when none.
    pub fn force_reset_fail(&self) -> u64 {
        self.faults
            .iter()
            .find_map(|f| match f {
                Fault::ForceResetFail { count } => Some(*count),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// The `probe_fail` count, 0 when none.
    pub fn probe_fail(&self) -> u64 {
        self.faults
            .iter()
            .find_map(|f| match f {
                Fault::ProbeFail { count } => Some(*count),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// The `init_delay_ms` setting, 0 when none.
    pub fn init_delay_ms(&self) -> u64 {
        self.faults
            .iter()
            .find_map(|f| match f {
                Fault::InitDelayMs { ms } => Some(*ms),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// Counts one case launch and returns the launch fault that fires at it, marking it fired.
    pub fn count_case_launch(&mut self) -> (u64, Option<Fault>) {
        self.counters.case_launches += 1;
        let k = self.counters.case_launches;
        let hit = self
            .faults
            .iter()
            .enumerate()
            .find(|(i, f)| f.launch_number() == Some(k) && !self.fired.contains(i))
            .map(|(i, f)| (i, *f));
        match hit {
            Some((i, f)) => {
                self.fired.push(i);
                (k, Some(f))
            }
            None => (k, None),
        }
    }
}

/// An open card file. All access happens under its `flock`.
#[derive(Debug)]
pub(crate) struct CardFile {
    file: File,
    path: PathBuf,
}

impl CardFile {
    /// Opens (creating on demand) the state file of `card`.
    pub(crate) fn open(cfg: &SimConfig, card: DeviceId) -> Result<Self, SimError> {
        let refused = |path: &Path, r: Refusal| match r {
            Refusal::Io(source) => SimError::Io {
                path: path.to_owned(),
                source,
            },
            Refusal::Unsafe(reason) => SimError::Unsafe {
                path: path.to_owned(),
                reason,
            },
        };
        let root = open_private_dir(&cfg.root, 0o700).map_err(|r| refused(&cfg.root, r))?;
        let path = cfg.card_path(card);
        let file = open_state_file(&root, &card_file_name(card), 0o600).map_err(|r| refused(&path, r))?;
        Ok(Self { file, path })
    }

    /// Reads the record under a shared lock.
    pub(crate) fn read(&mut self) -> Result<CardState, SimError> {
        self.lock(FlockOperation::LockShared)?;
        let state = self.read_locked();
        self.unlock();
        state
    }

    /// Reads, changes and writes back the record under an exclusive lock; returns what `change`
    /// returned and the record as written.
    pub(crate) fn update<T>(
        &mut self,
        change: impl FnOnce(&mut CardState) -> T,
    ) -> Result<(T, CardState), SimError> {
        self.lock(FlockOperation::LockExclusive)?;
        let result = self.read_locked().and_then(|mut state| {
            let out = change(&mut state);
            self.write_locked(&state).map(|()| (out, state))
        });
        self.unlock();
        result
    }

    fn lock(&self, op: FlockOperation) -> Result<(), SimError> {
        flock(&self.file, op).map_err(|e| SimError::Io {
            path: self.path.clone(),
            source: e.into(),
        })
    }

    fn unlock(&self) {
        // Closing the file would release it too; an unlock failure leaves nothing to repair.
        let _ = flock(&self.file, FlockOperation::Unlock);
    }

    fn read_locked(&mut self) -> Result<CardState, SimError> {
        let mut text = String::new();
        self.file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_to_string(&mut text))
            .map_err(|e| self.io(e))?;
        if text.trim().is_empty() {
            return Ok(CardState::default());
        }
        Ok(serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!(
                path = %self.path.display(),
                error = %e,
                "garbled sim card file; reading it as a fresh card"
            );
            CardState::default()
        }))
    }

    fn write_locked(&mut self, state: &CardState) -> Result<(), SimError> {
        let text = serde_json::to_string(state).map_err(|e| self.io(e.into()))?;
        self.file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)))
            .and_then(|_| self.file.write_all(text.as_bytes()))
            .map_err(|e| self.io(e))
    }

    fn io(&self, source: std::io::Error) -> SimError {
        SimError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

/// The current record of `card` (for reports and tests).
pub fn card_state(cfg: &SimConfig, card: DeviceId) -> Result<CardState, SimError> {
    check_card(cfg, card)?;
    CardFile::open(cfg, card)?.read()
}

/// Starts a run on `cards`: installs `plan`'s faults for each of them and zeroes their counters and
/// fired marks. The reset generation is kept (contexts of earlier processes stay stale).
pub fn start_run(cfg: &SimConfig, cards: &[DeviceId], plan: &FaultPlan) -> Result<(), SimError> {
    plan.check_cards(cfg.cards)?;
    for &card in cards {
        check_card(cfg, card)?;
    }
    for &card in cards {
        let faults = plan.faults_for(card);
        CardFile::open(cfg, card)?.update(|s| {
            s.faults = faults;
            s.fired.clear();
            s.counters = CardCounters::default();
        })?;
        tracing::debug!(card, plan = %plan, "sim run started");
    }
    Ok(())
}

pub(crate) fn check_card(cfg: &SimConfig, card: DeviceId) -> Result<(), SimError> {
    if card < cfg.cards {
        Ok(())
    } else {
        Err(SimError::CardOutOfRange {
            card,
            cards: cfg.cards,
        })
    }
}
